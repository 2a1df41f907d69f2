"""aider: `aider --message-file <instructions> --yes-always --no-auto-commits …`.

aider has no machine-readable output and cannot write the artifact: the supervisor derives
the artifact from git after the session. Tokens and cost are read from its `Tokens: …` lines.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from autoresearch.agents.base import SessionRequest, Usage
from autoresearch.agents.external import ExternalAgent, with_extra

_TOKENS = re.compile(
    r"Tokens: (?P<sent>[\d.]+k?) sent(?:, (?P<write>[\d.]+k?) cache write)?"
    r"(?:, (?P<hit>[\d.]+k?) cache hit)?, (?P<recv>[\d.]+k?) received\."
)
_COST = re.compile(r"Cost: \$(?P<msg>[\d.]+) message, \$(?P<session>[\d.]+) session\.")


def _count(text: str | None) -> int | None:
    if text is None:
        return None
    if text.endswith("k"):
        return round(float(text[:-1]) * 1000)
    return int(float(text))


def parse_aider_line(line: str, usage: Usage) -> None:
    """Sum the token report of every reply; the session cost is aider's running total."""
    tokens = _TOKENS.search(line)
    if tokens:
        usage.add_tokens(_count(tokens["sent"]), _count(tokens["recv"]), _count(tokens["hit"]))
        usage.turns = (usage.turns or 0) + 1
    cost = _COST.search(line)
    if cost:
        usage.cost_usd = float(cost["session"])


def aider_agent(model: str | None = None, extra: Sequence[str] = ()) -> ExternalAgent:
    def argv(req: SessionRequest) -> list[str]:
        base = [
            "aider", "--message-file", str(req.instructions_file), "--yes-always",
            "--no-auto-commits", "--no-check-update", "--no-show-model-warnings",
            "--no-analytics", "--no-pretty", "--no-stream", "--no-fancy-input",
        ]  # fmt: skip
        return with_extra(base, model, extra)

    return ExternalAgent(
        name="aider",
        build_argv=argv,
        parse_line=parse_aider_line,
        artifact_from_git=True,
    )

"""aider: `aider --message-file <instructions> --yes-always --no-auto-commits --no-gitignore …`.

aider has no machine-readable output and cannot write the artifact: the supervisor derives
the artifact from git after the session. Tokens and cost are read from its `Tokens: …` lines.

A model call that fails is printed as litellm's exception (`litellm.InternalServerError: …`,
`litellm.APIError: …`, then aider's own description); aider retries, and when the retries run
out it gives up and still exits 0. So the last word decides: a failed call not followed by a
reply (`Tokens: …`) is a failed session, with the exception's line as its error.

aider keeps files of its own in the repository it edits: it would add `.aider*` to the user's
`.gitignore` (`--no-gitignore` stops that), and its chat and input histories and its tags cache
would end up in the candidate commit. The histories go to the run's logs instead (nothing is
lost) and the tags cache, a cache, is removed after each session.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from autoresearch.agents.base import Backend, SessionRequest, Usage
from autoresearch.agents.external import ExternalAgent, with_extra

_TOKENS = re.compile(
    r"Tokens: (?P<sent>[\d.]+k?) sent(?:, (?P<write>[\d.]+k?) cache write)?"
    r"(?:, (?P<hit>[\d.]+k?) cache hit)?, (?P<recv>[\d.]+k?) received\."
)
# litellm's exceptions, as aider prints them (`litellm.NotFoundError: …`, `litellm.APIError: …`)
_MODEL_ERROR = re.compile(r"^litellm\.\w+Error: ")
_COST = re.compile(r"Cost: \$(?P<msg>[\d.]+) message, \$(?P<session>[\d.]+) session\.")
# what aider leaves in the worktree for itself (`.aider.tags.cache.v4/`, …)
SCRATCH = (".aider.tags.cache.v*",)


def _count(text: str | None) -> int | None:
    if text is None:
        return None
    if text.endswith("k"):
        return round(float(text[:-1]) * 1000)
    return int(float(text))


def parse_aider_line(line: str, usage: Usage) -> None:
    """Sum the token report of every reply; the session cost is aider's running total; a
    model call that failed fails the session until a later reply comes."""
    if _MODEL_ERROR.match(line):
        usage.success, usage.error = False, line.strip()
    tokens = _TOKENS.search(line)
    if tokens:
        usage.add_tokens(_count(tokens["sent"]), _count(tokens["recv"]), _count(tokens["hit"]))
        usage.turns = (usage.turns or 0) + 1
        usage.success, usage.error = None, None  # a retry got its reply
    cost = _COST.search(line)
    if cost:
        usage.cost_usd = float(cost["session"])


def aider_argv(req: SessionRequest, model: str | None, extra: Sequence[str]) -> list[str]:
    log = req.log_path
    base = [
        "aider", "--message-file", str(req.instructions_file), "--yes-always",
        "--no-auto-commits", "--no-gitignore",
        "--chat-history-file", str(log.with_name(f"{log.stem}-aider-chat.md")),
        "--input-history-file", str(log.with_name(f"{log.stem}-aider-input.txt")),
        "--no-check-update", "--no-show-model-warnings", "--no-analytics", "--no-pretty",
        "--no-stream", "--no-fancy-input",
    ]  # fmt: skip
    return with_extra(base, model, extra)


def aider_agent(model: str | None = None, extra: Sequence[str] = ()) -> ExternalAgent:
    return ExternalAgent(
        name="aider",
        build_argv=lambda req: aider_argv(req, model, extra),
        parse_line=parse_aider_line,
        artifact_from_git=True,
        model=model,
        scratch=SCRATCH,
    )


# the `aider` entry point of autoresearch.agents (pyproject.toml)
BACKEND = Backend(make=lambda config: aider_agent(config.model, config.args), executable="aider")

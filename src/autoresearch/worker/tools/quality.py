"""`quality_mode: high` of `analyze` and `review` (worker.md "Quality first"): three fixed role
branches – the main analysis, an independent one, a red team – then an independent arbiter,
and a verdict that fails closed (`quality.v1`).

Invariants: every role is one call to exactly one model on the first endpoint (no fallback
endpoint or model: an answer from another model is a mismatch, never a quiet substitute); the
branches run in order and stop at the first broken answer, and the arbiter runs only after
three usable ones; the result's `answer` is set only when the status is `passed` – a truncated,
empty, mismatched or badly cited answer, a missing verdict, an input cut to fit, or a
disagreement the arbiter leaves open gives `failed` or `needs_direct_review` with every reason,
never an ordinary answer instead. Everything but `run_high` is pure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum

from autoresearch.worker import gateway
from autoresearch.worker.gateway import model_matches
from autoresearch.worker.tools.answers import ModelAnswer, RoleJson

CONTRACT_VERSION = "quality.v1"
MAX_ANSWER_TOKENS = 1024
ROLE_ANSWER_LIMIT = 4096  # characters of each role's answer shown when a person must review


class QualityMode(StrEnum):
    STANDARD = "standard"
    HIGH = "high"


class Role(StrEnum):
    MAIN = "main"
    INDEPENDENT = "independent"
    RED_TEAM = "red_team"
    ARBITER = "arbiter"


BRANCHES = (Role.MAIN, Role.INDEPENDENT, Role.RED_TEAM)


class QualityStatus(StrEnum):
    PASSED = "passed"
    NEEDS_DIRECT_REVIEW = "needs_direct_review"
    FAILED = "failed"


class QualityReason(StrEnum):
    # The evidence itself is broken: `failed`.
    TRUNCATED_OUTPUT = "truncated_output"
    EMPTY_ANSWER = "empty_answer"
    MODEL_MISMATCH = "model_mismatch"
    ARBITER_UNPARSABLE = "arbiter_unparsable"
    # The answer exists but cannot be trusted as it stands: `needs_direct_review`.
    INVALID_CITATION = "invalid_citation"
    VERDICT_MISSING = "verdict_missing"
    UNRESOLVED_DISAGREEMENT = "unresolved_disagreement"
    INPUT_TRUNCATED = "input_truncated"
    QUALITY_PASSED = "quality_passed"

    @property
    def fails(self) -> bool:
        return self in _FAILING


_FAILING = frozenset(
    {
        QualityReason.TRUNCATED_OUTPUT,
        QualityReason.EMPTY_ANSWER,
        QualityReason.MODEL_MISMATCH,
        QualityReason.ARBITER_UNPARSABLE,
    }
)
AGREEMENTS = ("agree", "resolved", "unresolved")

_ROLE_ASK = {
    Role.MAIN: "You are the main analysis.",
    Role.INDEPENDENT: "You are an independent second analysis: list the evidence you rely on "
    "first, then conclude from it alone.",
    Role.RED_TEAM: "You are the red team: look for what a first answer would get wrong "
    "(counter-evidence, edge cases, unstated assumptions), then give your own conclusion.",
}
# path:line or path:first-last; a path has an extension (src/app.py:12, README.md:3-5)
_CITATION = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z0-9]+):(\d+)(?:-(\d+))?")
_VERDICT = re.compile(r"^\W*VERDICT\W*:\W*([A-Za-z_ -]+?)\W*$", re.M | re.I)


@dataclass(frozen=True)
class Task:
    """What every role is asked about: the tool's instruction, the material, the verdict words
    a branch ends with, and what may be cited (path → line count; None: the path only)."""

    tool: str
    ask: str
    material: str
    verdicts: tuple[str, ...]
    citable: Mapping[str, int | None]


@dataclass(frozen=True)
class Said:
    """One role's answer as the gateway returned it."""

    role: Role
    model: str  # the model asked for
    answered_by: str | None
    finish_reason: str | None
    text: str


@dataclass(frozen=True)
class ArbiterView:
    answer: str
    agreement: str  # agree | resolved | unresolved
    verdict: str
    resolution: str


@dataclass(frozen=True)
class Checked:
    said: Said
    issues: tuple[QualityReason, ...]
    verdict: str | None


@dataclass(frozen=True)
class Verdict:
    status: QualityStatus
    reasons: tuple[QualityReason, ...]


# --- pure checks -----------------------------------------------------------------------------


def invalid_citations(text: str, citable: Mapping[str, int | None]) -> list[str]:
    """Citations of a file that was not given or of a line it does not have."""
    bad = []
    for match in _CITATION.finditer(text):
        path, first = match.group(1).removeprefix("./"), int(match.group(2))
        last = int(match.group(3) or first)
        if path not in citable:
            bad.append(match.group(0))
            continue
        count = citable[path]
        if first < 1 or last < first or (count is not None and last > count):
            bad.append(match.group(0))
    return bad


def verdict_of(text: str, allowed: tuple[str, ...]) -> str | None:
    """The last `VERDICT: <word>` line's word, when it is one of `allowed`."""
    found = _VERDICT.findall(text)
    if not found:
        return None
    word = re.sub(r"[\s-]+", "_", found[-1].strip().lower())
    return word if word in allowed else None


def parse_arbiter(text: str, allowed: tuple[str, ...]) -> ArbiterView | None:
    """The arbiter's JSON object (fences and prose around it tolerated), or None."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        data = json.loads(text[start : end + 1])
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    answer, agreement = data.get("answer"), data.get("agreement")
    verdict, resolution = data.get("verdict"), data.get("resolution") or ""
    if not isinstance(answer, str) or agreement not in AGREEMENTS or verdict not in allowed:
        return None
    return ArbiterView(answer, str(agreement), str(verdict), str(resolution))


def answer_issues(said: Said, citable: Mapping[str, int | None]) -> list[QualityReason]:
    """What is wrong with one answer as an answer, whatever it says."""
    issues = []
    if said.finish_reason == "length":
        issues.append(QualityReason.TRUNCATED_OUTPUT)
    if not said.text.strip():
        issues.append(QualityReason.EMPTY_ANSWER)
    if not model_matches(said.model, said.answered_by):
        issues.append(QualityReason.MODEL_MISMATCH)
    if invalid_citations(said.text, citable):
        issues.append(QualityReason.INVALID_CITATION)
    return issues


def check_branch(said: Said, task: Task) -> Checked:
    issues = answer_issues(said, task.citable)
    verdict = verdict_of(said.text, task.verdicts)
    if verdict is None and said.text.strip():
        issues.append(QualityReason.VERDICT_MISSING)
    return Checked(said, tuple(issues), verdict)


def check_arbiter(said: Said, task: Task) -> tuple[Checked, ArbiterView | None]:
    view = parse_arbiter(said.text, task.verdicts)
    cited = said if view is None else replace(said, text=view.answer)
    issues = answer_issues(cited, task.citable)
    if view is None and said.text.strip():
        issues.append(QualityReason.ARBITER_UNPARSABLE)
    return Checked(said, tuple(issues), None if view is None else view.verdict), view


def disagreement(branches: list[Checked], view: ArbiterView) -> bool:
    """Whether the branches' disagreement is left open: the arbiter says so, claims agreement
    where the verdicts differ, or says it resolved one without saying how (a missing verdict is
    its own reason, not a disagreement)."""
    differ = len({b.verdict for b in branches if b.verdict is not None}) > 1
    if view.agreement == "unresolved":
        return True
    if view.agreement == "agree":
        return differ
    return not view.resolution.strip()


def decide(
    branches: list[Checked],
    arbiter: Checked | None,
    view: ArbiterView | None,
    input_truncated: bool,
) -> Verdict:
    """The quality verdict: any broken answer fails; any doubt needs a direct review."""
    reasons = [issue for b in branches for issue in b.issues]
    if arbiter is not None:
        reasons += arbiter.issues
    if view is not None and disagreement(branches, view):
        reasons.append(QualityReason.UNRESOLVED_DISAGREEMENT)
    if input_truncated:
        reasons.append(QualityReason.INPUT_TRUNCATED)
    unique = tuple(dict.fromkeys(reasons))
    if any(r.fails for r in unique):
        return Verdict(QualityStatus.FAILED, unique)
    if unique or arbiter is None:
        return Verdict(QualityStatus.NEEDS_DIRECT_REVIEW, unique)
    return Verdict(QualityStatus.PASSED, (QualityReason.QUALITY_PASSED,))


# --- prompts (pure) --------------------------------------------------------------------------


def branch_system(role: Role, task: Task) -> str:
    return (
        f"{task.ask}\n{_ROLE_ASK[role]}\nCite evidence as path:line, only files and lines you "
        f"were shown. End with one line: VERDICT: {' | '.join(task.verdicts)}"
    )


def arbiter_system(task: Task) -> str:
    return (
        f"{task.ask}\nYou are an independent arbiter. Three analyses of the material follow. "
        "Check their claims against the material and settle any disagreement by the evidence. "
        'Answer with one JSON object only: {"answer": your final answer, citing path:line, '
        '"agreement": "agree" (same verdict), "resolved" (they differ and the evidence settles '
        'it) or "unresolved", "verdict": one of '
        f"{', '.join(repr(v) for v in task.verdicts)}, "
        '"resolution": how a disagreement was settled ("" when they agree)}'
    )


def arbiter_user(task: Task, branches: list[Checked]) -> str:
    parts = [task.material]
    for b in branches:
        parts.append(f"== analysis: {b.said.role.value} ==\n{b.said.text}")
    return "\n\n".join(parts)


# --- the calls -------------------------------------------------------------------------------


def role_models(config: gateway.GatewayConfig) -> dict[Role, str]:
    """Each role's model: the configured quality models in role order, the last one repeated;
    by default the first endpoint's first model."""
    chosen = config.quality_models or config.endpoints[0].models[:1]
    roles = [*BRANCHES, Role.ARBITER]
    return {role: chosen[min(i, len(chosen) - 1)] for i, role in enumerate(roles)}


def _ask(
    config: gateway.GatewayConfig,
    role: Role,
    model: str,
    messages: tuple[str, str],
    on_attempt: Callable[[gateway.Attempt], None],
    attempts: list[gateway.Attempt],
) -> Said:
    system, user = messages
    done = gateway.complete(
        config.pinned(model),
        [{"role": "system", "content": system}, {"role": "user", "content": user}],
        max_tokens=MAX_ANSWER_TOKENS,
        on_attempt=on_attempt,
    )
    attempts += done.attempts
    return Said(role, model, done.answered_by, done.finish_reason, done.text)


def run_high(
    config: gateway.GatewayConfig,
    task: Task,
    input_truncated: bool,
    on_attempt: Callable[[gateway.Attempt], None],
) -> ModelAnswer:
    """The three branches, then the arbiter; the tool's payload with its `quality` block.
    A gateway that fails every attempt raises GatewayError, as in standard mode."""
    models = role_models(config)
    attempts: list[gateway.Attempt] = []
    branches: list[Checked] = []
    for role in BRANCHES:
        said = _ask(config, role, models[role], (branch_system(role, task), task.material),
                    on_attempt, attempts)  # fmt: skip
        branches.append(check_branch(said, task))
        if any(issue.fails for issue in branches[-1].issues):
            break  # the result is failed whatever follows: no more model calls
    arbiter, view = None, None
    if len(branches) == len(BRANCHES) and not any(i.fails for b in branches for i in b.issues):
        messages = (arbiter_system(task), arbiter_user(task, branches))
        said = _ask(config, Role.ARBITER, models[Role.ARBITER], messages, on_attempt, attempts)
        arbiter, view = check_arbiter(said, task)
    verdict = decide(branches, arbiter, view, input_truncated)
    return _payload(verdict, branches, arbiter, view, attempts)


def _payload(
    verdict: Verdict,
    branches: list[Checked],
    arbiter: Checked | None,
    view: ArbiterView | None,
    attempts: list[gateway.Attempt],
) -> ModelAnswer:
    passed = verdict.status is QualityStatus.PASSED
    roles = [*branches, *([] if arbiter is None else [arbiter])]
    costs = [a.cost for a in attempts if a.cost is not None]
    return {
        "answer": view.answer if passed and view is not None else None,
        "degraded": False,
        "endpoint": attempts[-1].endpoint if attempts else None,
        "model": None if arbiter is None else arbiter.said.model,
        "attempts": [a.to_dict() for a in attempts],
        "cost": round(sum(costs), 8) if costs else None,
        "evidence": None,
        "quality": {
            "contract_version": CONTRACT_VERSION,
            "mode": QualityMode.HIGH.value,
            "status": verdict.status.value,
            "reason_codes": [r.value for r in verdict.reasons],
            "verdict": None if view is None else view.verdict,
            "agreement": None if view is None else view.agreement,
            "roles": [_role_out(c, show_answer=not passed) for c in roles],
            "model_calls": len(roles),
        },
    }


def _role_out(checked: Checked, show_answer: bool) -> RoleJson:
    said = checked.said
    return {
        "role": said.role.value,
        "model": said.model,
        "answered_by": said.answered_by,
        "finish_reason": said.finish_reason,
        "verdict": checked.verdict,
        "issues": [i.value for i in checked.issues],
        "answer": said.text[:ROLE_ANSWER_LIMIT] if show_answer else None,
    }

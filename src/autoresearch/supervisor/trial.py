"""`check --try`: run a mission's evaluator once, as a run's baseline would, and record nothing.

A scratch checkout of HEAD (outside the agent's and the user's trees) gets the mission folder
copied in and the shared links, exactly as `prepare` builds a run's worktree; the evaluator
runs there once with its timeout. What it printed, what the contract read of it and whatever
would trip a run later – a command that cannot run, a wrong metric name, no score for a
score-improvement run, files a reset would refuse – come back as one line each. The scratch
checkout is removed afterwards, whatever happened; no journal is opened or made.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from autoresearch import git
from autoresearch.contracts.sandbox import EvaluatorSpec
from autoresearch.contracts.screen import ScreenSpec
from autoresearch.evaluate import EvaluationRecord, evaluator_env, run_evaluator
from autoresearch.journal.views import format_score
from autoresearch.jsonshape import json_field, json_shape
from autoresearch.mission import Mission, load_mission
from autoresearch.paths import MISSION_FILE, SANDBOX_FILE
from autoresearch.repo_state import link_shared_paths
from autoresearch.reset import blocking, run_dirt
from autoresearch.screening import ScreenReading
from autoresearch.states import EvalFormat, EvalStatus, KeepPolicy
from autoresearch.supervisor.prepare import uncommitted_note
from autoresearch.supervisor.screen import screen_evaluator

TRIAL_RUN_ID = "check-try"
COMMAND_NOT_FOUND = 127  # what `sh -c` exits with when the program does not exist


def _ok_first(problems: object) -> dict[str, object]:
    return {"ok": not problems, "problems": problems}


def _compact(evaluation: object) -> object:
    return cast(EvaluationRecord, evaluation).compact()


@dataclass(frozen=True)
class TrialResult:
    """One evaluation of the mission's evaluator on HEAD, and what would trip a run."""

    mission_dir: str
    commit: str
    # what would trip a run, after `ok` (none of them) in the JSON
    problems: tuple[str, ...] = field(metadata=json_field(inline=True, convert=_ok_first))
    left_behind: tuple[str, ...]  # untracked paths the evaluator wrote that block a reset
    notes: tuple[str, ...]  # what a run would not see (uncommitted changes)
    # the ledger's small record: what it printed is in the log, not in `check --try --json`
    evaluation: EvaluationRecord = field(metadata=json_field(convert=_compact))

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)


def try_mission(mission_dir: Path) -> TrialResult:
    """Evaluate `mission_dir`'s evaluator once in a scratch checkout of HEAD."""
    mission = load_mission(mission_dir)
    root = mission.worktree_root
    commit = git.head(root)
    with tempfile.TemporaryDirectory(prefix="autoresearch-try-") as scratch:
        tree = Path(scratch) / "tree"
        git.worktree_add_detached(mission.repo_root, tree, commit)
        try:
            evaluation, left = _evaluate_in(mission, tree, Path(scratch) / "evaluator.log")
            screened = _screen_in(mission, tree, Path(scratch) / "screen.log")
        finally:
            git.worktree_remove(mission.repo_root, tree)
    spec = mission.sandbox.evaluator
    problems = trial_problems(spec, evaluation, left)
    notes = [note] if (note := uncommitted_note(mission_dir)) else []
    if screened is not None:
        problem, read = screen_trial(screened)
        problems += [problem] if problem else []
        notes += [read]
    return TrialResult(
        mission_dir=str(mission.mission_dir),
        commit=commit,
        problems=tuple(problems),
        left_behind=left,
        notes=tuple(notes),
        evaluation=evaluation,
    )


def _screen_in(mission: Mission, tree: Path, log: Path) -> ScreenReading | None:
    """evaluator.screen's one reading in `tree`, after the evaluator's (None: no screen)."""
    full = mission.sandbox.evaluator
    spec = ScreenSpec.of(full.extra)
    if spec is None:
        return None
    target = tree if mission.relative_dir == "." else tree / mission.relative_dir
    env = evaluator_env(TRIAL_RUN_ID, 0, tree, mission_dir=target)
    return ScreenReading.of(run_evaluator(screen_evaluator(full, spec), tree, env, log))


def screen_trial(reading: ScreenReading) -> tuple[str | None, str]:
    """The screen's problem (None: it gave a score) and what it read, one line each (pure)."""
    if reading.score is None:
        problem = (
            f"evaluator.screen gave no usable score ({reading.failure}): every candidate "
            "would be discarded with `screen failed: …`"
        )
        return problem, f"screen:       {reading.failure}"
    return None, f"screen:       score {format_score(reading.score)}"


def _evaluate_in(
    mission: Mission, tree: Path, log: Path
) -> tuple[EvaluationRecord, tuple[str, ...]]:
    """The evaluator's one reading in `tree` and the paths it left that a reset would refuse."""
    target = _copy_mission(mission, tree)
    sandbox = mission.sandbox
    link_shared_paths(mission.repo_root, tree, sandbox.links)
    rule = run_dirt(sandbox.links, sandbox.runtime)
    before = {entry.path for entry in git.status(tree)}
    env = evaluator_env(TRIAL_RUN_ID, 0, tree, mission_dir=target)
    evaluation = run_evaluator(sandbox.evaluator, tree, env, log)
    left = tuple(e.path for e in blocking(git.status(tree), rule) if e.path not in before)
    return evaluation, left


def _copy_mission(mission: Mission, tree: Path) -> Path:
    """The mission folder inside `tree`, as `prepare` materializes it: the folder's files,
    committed or not, with their modes (an evaluator script stays executable)."""
    target = tree if mission.relative_dir == "." else tree / mission.relative_dir
    names = git.list_files(mission.mission_dir) if mission.relative_dir != "." else []
    for rel in {*names, MISSION_FILE, SANDBOX_FILE}:
        (target / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(mission.mission_dir / rel, target / rel)
    return target


# What a JSON evaluator must print, said after its output was not understood: a newcomer's
# first evaluator prints `{"score": 12.3}` and the contract's message names only the field.
JSON_SHAPE = (
    ' (print one JSON object as the last line, e.g. {"pass": true, "score": 12.3}; '
    "or print METRIC <name>=<value> lines and name one: init --metric, or sandbox.md's "
    "evaluator.format: metric with metric: <name>)"
)


def trial_problems(
    spec: EvaluatorSpec, evaluation: EvaluationRecord, left_behind: tuple[str, ...] = ()
) -> list[str]:
    """What in one evaluation would trip a run, one line each (pure)."""
    problems = _process_problem(spec, evaluation)
    if not problems:
        problems = _output_problems(spec, evaluation)
    if left_behind:
        shown = ", ".join(left_behind[:5]) + (" …" if len(left_behind) > 5 else "")
        problems.append(
            f"the evaluator left files a run's reset would refuse: {shown}; git-ignore them "
            "or list them under worktree.runtime in sandbox.md"
        )
    return problems


def _process_problem(spec: EvaluatorSpec, evaluation: EvaluationRecord) -> list[str]:
    last = _last_line(evaluation)
    if evaluation.timed_out:
        return [
            f"the evaluator timed out after {spec.timeout_seconds:g} s "
            "(evaluator.timeout_seconds in sandbox.md)"
        ]
    if evaluation.spawn_error is not None:
        return [f"the evaluator could not start: {evaluation.spawn_error}"]
    if evaluation.exit_code == COMMAND_NOT_FOUND:
        return [f"the evaluator's program was not found (exit 127): {last}"]
    # a metric evaluator that exits non-zero with its METRIC line is a failing candidate (its
    # score stands, pass false); one that printed nothing usable could not run at all
    nothing_read = spec.format == EvalFormat.JSON or evaluation.score is None
    if evaluation.exit_code not in (0, None) and nothing_read:
        return [f"the evaluator exited {evaluation.exit_code}: {last}"]
    return []


def _output_problems(spec: EvaluatorSpec, evaluation: EvaluationRecord) -> list[str]:
    if spec.format == EvalFormat.METRIC and evaluation.score is None:
        seen = ", ".join(sorted(evaluation.metrics)) or "none"
        return [f"no METRIC line named {spec.metric}; the METRIC names it printed: {seen}"]
    if evaluation.parse_error is not None:
        shape = JSON_SHAPE if spec.format == EvalFormat.JSON else ""
        return [f"the evaluator's output was not understood: {evaluation.parse_error}{shape}"]
    problems = []
    if evaluation.status == EvalStatus.FAIL:
        problems.append(
            f"the evaluator says the current code does not pass (exit {evaluation.exit_code}): "
            "the baseline would be a failure"
        )
    if spec.keep_policy == KeepPolicy.SCORE_IMPROVEMENT and evaluation.score is None:
        problems.append(
            "the evaluator printed no score: a score_improvement run could never keep anything"
        )
    return problems


def _last_line(evaluation: EvaluationRecord) -> str:
    for text in (evaluation.stderr, evaluation.stdout):
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        if lines:
            return lines[-1][:200]
    return "no output"

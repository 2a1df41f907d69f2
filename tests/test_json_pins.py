"""Every record whose JSON `jsonshape.json_shape` derives, pinned byte for byte: the text the
hand-written `to_dict`s printed (key order, omitted keys, renamed keys, rounding), so deriving
a shape from the dataclass cannot change what `--json`, the MCP tools or the journal see."""

from __future__ import annotations

import ast
import json
from collections.abc import Callable
from pathlib import Path

import pytest

import autoresearch
from autoresearch.agents.base import AgentConfig
from autoresearch.confine import SandboxMode
from autoresearch.contracts.candidate import CandidateArtifact
from autoresearch.contracts.check_record import CheckRecord
from autoresearch.contracts.frozen import FrozenMission
from autoresearch.contracts.isolation import Isolation
from autoresearch.contracts.job import BlockingPolicy, CheckSpec, ReliabilityTier, StageSpec
from autoresearch.contracts.job_result import Artifact, SemanticReview, SemanticStatus, Snapshot
from autoresearch.contracts.sandbox import BudgetSpec, ChecksSpec, EvaluationSlots, EvaluatorSpec
from autoresearch.experiments.hook_install import HooksResult
from autoresearch.experiments.notes import NotesResult
from autoresearch.experiments.status import SessionList, SessionSummary
from autoresearch.noise import Interval, NoiseMode, NoisePolicy
from autoresearch.states import (
    ArtifactStatus,
    DecisionKind,
    Direction,
    EvalFormat,
    KeepPolicy,
    ProcessState,
    ReviewState,
    RunStatus,
    SessionState,
)
from autoresearch.supervisor.doctor import Finding, RestoreOutcome, Severity, WorktreeRepair
from autoresearch.supervisor.estimates import LevelDrift
from autoresearch.supervisor.review import Branch, FinalizeResult, Keep
from autoresearch.supervisor.step import StepResult
from autoresearch.worker.jobs import Tail
from autoresearch.worker.outcome import Reliability
from autoresearch.worker.tools.metrics import Summary, ToolStats

_INTERVAL = Interval(mean=1.5, low=1.0, high=2.0, n=3)
_BRANCH = Branch(
    name="review/1-x",
    keeps=(Keep(3, "b0", "c3", "faster", 2.0, 1.5), Keep(5, "c3", "c5", "smaller", 1.5, None)),
    files=("a.py",),
    squash=True,
    state=ReviewState.CREATED,
)
_TOOL = ToolStats(
    "read",
    calls=4,
    errors=1,
    bytes_read=300,
    bytes_returned=100,
    truncated=1,
    latencies=[1.0, 2.0, 5.0],
)

# (name, the record, its JSON as the hand-written to_dict printed it)
PINS: list[tuple[str, Callable[[], object], str]] = [
    (
        "agent_config",
        lambda: AgentConfig("claude", "m1", ("--x", "y"), 7, None),
        '{"agent": "claude", "model": "m1", "agent_args": ["--x", "y"], "max_turns": 7, '
        '"seed": null}',
    ),
    (
        "candidate",
        lambda: CandidateArtifact(ArtifactStatus.CANDIDATE, "c1", "b0", "d", ("n1",), "t0"),
        '{"status": "candidate", "candidate_commit": "c1", "base_commit": "b0", "description": "d", '
        '"notes": ["n1"], "created_at": "t0"}',
    ),
    (
        "check_record",
        lambda: CheckRecord(ProcessState.FAIL, 1, 12345, "logs/c.log", "tail", "boom"),
        '{"status": "fail", "exit_code": 1, "duration_seconds": 12.345, '
        '"log_path": "logs/c.log", "tail": "tail"}',
    ),
    (
        "check_record_rounding",
        lambda: CheckRecord(ProcessState.TIMEOUT, None, 1, "l"),
        '{"status": "timeout", "exit_code": null, "duration_seconds": 0.001, "log_path": "l", '
        '"tail": ""}',
    ),
    (
        "isolation",
        lambda: Isolation(SandboxMode.BWRAP, agent_network=False),
        '{"sandbox": "bwrap", "agent_network": false, "evaluator_network": false}',
    ),
    (
        "isolation_unset",
        lambda: Isolation(),
        '{"sandbox": null, "agent_network": true, "evaluator_network": false}',
    ),
    (
        "stage_spec",
        lambda: StageSpec("p", (CheckSpec("make", name="build", timeout_seconds=9.0),)),
        '{"prompt": "p", "checks": [{"name": "build", "command": "make", "timeout_seconds": 9.0}]}',
    ),
    (
        "artifact",
        lambda: Artifact("log", "a/b", 12, "ff"),
        '{"name": "log", "path": "a/b", "bytes": 12, "sha256": "ff"}',
    ),
    (
        "snapshot",
        lambda: Snapshot("r", None, {"x.py": "modified"}),
        '{"repo": "r", "base_commit": null, "preexisting": {"x.py": "modified"}, "error": null}',
    ),
    (
        "semantic",
        lambda: SemanticReview(SemanticStatus.FAILED, "why", "m"),
        '{"status": "failed", "reason": "why", "model": "m", "answered_by": null}',
    ),
    (
        "slots_budget_checks",
        lambda: (EvaluationSlots(2, {"gpu": 1.0}), BudgetSpec(1.5, None, 2), ChecksSpec("t", 3)),
        '[{"slots": 2, "resources": {"gpu": 1.0}}, {"usd": 1.5, "tokens": null, "hours": 2}, '
        '{"command": "t", "timeout_seconds": 3}]',
    ),
    (
        "evaluator_spec",
        lambda: EvaluatorSpec(
            "./e",
            EvalFormat.JSON,
            KeepPolicy.PASS_ONLY,
            "loss",
            Direction.LOWER,
            60.0,
            extra={"zz": 1, "aa": [2]},
        ),
        '{"zz": 1, "aa": [2], "command": "./e", "format": "json", "keep_policy": "pass_only", '
        '"metric": "loss", "direction": "lower", "timeout_seconds": 60.0}',
    ),
    (
        "frozen_mission",
        lambda: FrozenMission(
            body="b",
            links=("l",),
            noise=NoisePolicy(),
            checks=ChecksSpec("c"),
            isolation=Isolation(SandboxMode.NONE),
            start_commit="s",
            extra={"future": True},
        ),
        '{"future": true, "body": "b", "links": ["l"], "runtime": [], "tune": null, '
        '"noise": {"mode": "auto", "calibration": 3, "alpha": 0.05, "power": 0.9, '
        '"min_effect": 1.0, "min_effect_unit": "sigma", "max_evals": 40, "interleave": 3, '
        '"confirm": 5, "reuse": 2.0, "blocked": true, "spread": "blocks", "level_changes": true, '
        '"today_agrees": true}, '
        '"sealed": [], '
        '"checks": {"command": "c", "timeout_seconds": 3600.0}, '
        '"evaluation": {"slots": 1, "resources": {}}, '
        '"budget": {"usd": null, "tokens": null, "hours": null}, '
        '"isolation": {"sandbox": "none", "agent_network": true, "evaluator_network": false}, '
        '"mission_text": "", "sandbox_text": "", "relative_dir": ".", "start_commit": "s"}',
    ),
    (
        "noise_metric",
        lambda: NoisePolicy(NoiseMode.SEQUENTIAL, min_effect=0.5, min_effect_in_sigma=False),
        '{"mode": "sequential", "calibration": 3, "alpha": 0.05, "power": 0.9, "min_effect": 0.5, '
        '"min_effect_unit": "metric", "max_evals": 40, "interleave": 3, "confirm": 5, '
        '"reuse": 2.0, "blocked": true, "spread": "blocks", "level_changes": true, '
        '"today_agrees": true}',
    ),
    (
        "interval",
        lambda: _INTERVAL,
        '{"mean": 1.5, "low": 1.0, "high": 2.0, "n": 3, "level": 0.95}',
    ),
    (
        "hooks",
        lambda: HooksResult("p", True, ("a", "b"), "m"),
        '{"path": "p", "changed": true, "events": ["a", "b"], "message": "m"}',
    ),
    (
        "notes",
        lambda: NotesResult(2, "n", ("i1",)),
        '{"session_id": 2, "notes": "n", "ideas": ["i1"]}',
    ),
    (
        "sessions",
        lambda: SessionList(
            (
                SessionSummary(
                    1,
                    "n",
                    "b",
                    "d",
                    "m",
                    Direction.HIGHER,
                    0,
                    SessionState.OPEN,
                    2,
                    1.0,
                    None,
                    "t",
                    None,
                ),
            )
        ),
        '{"sessions": [{"session_id": 1, "name": "n", "branch": "b", "directory": "d", '
        '"metric": "m", "direction": "higher", "segment": 0, "state": "open", "logged": 2, '
        '"baseline": 1.0, "best": null, "created_at": "t", "closed_at": null, "delta_pct": null, '
        '"paired": null}]}',
    ),
    (
        "finding",
        lambda: Finding("journal", Severity.WARNING, "m"),
        '{"check": "journal", "severity": "warning", "message": "m", "fix": null}',
    ),
    (
        "restore",
        lambda: RestoreOutcome(Path("/b/x.db"), None, "t", (Path("/w/1"), Path("w2"))),
        '{"restored_from": "/b/x.db", "moved_aside": null, "taken_at": "t", '
        '"worktrees": ["/w/1", "w2"], "refs_set_aside": [], "logs_set_aside": [], '
        '"backups_set_aside": []}',
    ),
    (
        "restore_moved",
        lambda: RestoreOutcome(
            Path("/b/x.db"),
            Path("/a"),
            "t",
            logs_set_aside=(Path("/l"),),
            backups_set_aside=(Path("/k"),),
        ),
        '{"restored_from": "/b/x.db", "moved_aside": "/a", "taken_at": "t", "worktrees": [], '
        '"refs_set_aside": [], "logs_set_aside": ["/l"], "backups_set_aside": ["/k"]}',
    ),
    (
        "repaired_worktree",
        lambda: WorktreeRepair("/r/.autoresearch/worktrees/x", "/r/.git/worktrees/x", "p", True),
        '{"folder": "/r/.autoresearch/worktrees/x", "registration": "/r/.git/worktrees/x", '
        '"problem": "p", "removed": true, "refused": null}',
    ),
    (
        "finalize",
        lambda: FinalizeResult("r1", "s0", "autoresearch/x", False, (_BRANCH,)),
        '{"run_id": "r1", "start_commit": "s0", "run_branch": "autoresearch/x", '
        '"dry_run": false, "branches": [{"name": "review/1-x", "keeps": [{"iteration": 3, '
        '"base": "b0", "commit": "c3", "description": "faster", "score_before": 2.0, '
        '"score_after": 1.5, "commits": [], "files": [], "before_interval": null, '
        '"after_interval": null}, {"iteration": 5, "base": "c3", "commit": "c5", '
        '"description": "smaller", "score_before": 1.5, "score_after": null, "commits": [], '
        '"files": [], "before_interval": null, "after_interval": null}], '
        '"files": ["a.py"], "squash": true, "head": null, "state": "created", '
        '"iterations": [3, 5]}]}',
    ),
    (
        "level_drift",
        lambda: LevelDrift("baseline", _INTERVAL, Interval(9.0, 8.0, 10.0, 2), 0),
        '{"label": "baseline", "then": {"mean": 1.5, "low": 1.0, "high": 2.0, "n": 3, '
        '"level": 0.95}, "now": {"mean": 9.0, "low": 8.0, "high": 10.0, "n": 2, '
        '"level": 0.95}, "since": 0, "significant": true, "text": "the baseline now reads '
        '9.0 \\u00b1 1.0 (n=2), it read 1.50 \\u00b1 0.50 (n=3) at prepare"}',
    ),
    (
        "tail",
        lambda: Tail("j1", "agent", "/p", "txt"),
        '{"job_id": "j1", "log": "agent", "path": "/p", "text": "txt"}',
    ),
    (
        "reliability",
        lambda: Reliability(ReliabilityTier.STRICT, BlockingPolicy.WARN, ("checks",)),
        '{"tier": "strict", "blocking_policy": "warn", "missing": ["checks"]}',
    ),
    (
        "tool_metrics",
        lambda: Summary([_TOOL], ToolStats("total"), 2, ["read"]),
        '{"tools": [{"tool": "read", "calls": 4, "errors": 1, "bytes_read": 300, '
        '"bytes_returned": 100, "truncated": 1, "error_rate": 0.25, "latency_p50_ms": 2.0, '
        '"latency_p95_ms": 5.0, "saved_ratio": 0.3333}], "total": {"tool": "total", '
        '"calls": 0, "errors": 0, "bytes_read": 0, "bytes_returned": 0, "truncated": 0, '
        '"error_rate": 0.0, "latency_p50_ms": null, "latency_p95_ms": null, '
        '"saved_ratio": null}, "skipped_lines": 2, "over_threshold": ["read"]}',
    ),
    (
        "step",
        lambda: StepResult(
            "r1",
            4,
            DecisionKind.KEEP,
            "better",
            True,
            ["n"],
            None,
            RunStatus.RUNNING,
            None,
            "c4",
            1.5,
            "d",
            "c4",
            ["x"],
            _INTERVAL,
            None,
            invalid_artifact="not shown",
        ),
        '{"run_id": "r1", "iteration": 4, "decision": "keep", "decision_reason": "better", '
        '"keep": true, "notes": ["n"], "evaluator": null, "run_status": "running", '
        '"stop_reason": null, "last_kept_commit": "c4", "last_kept_score": 1.5, '
        '"description": "d", "candidate_commit": "c4", "repaired": ["x"], "estimate": '
        '{"mean": 1.5, "low": 1.0, "high": 2.0, "n": 3, "level": 0.95}, '
        '"last_kept_interval": null}',
    ),
]


def _json(record: object) -> str:
    if isinstance(record, tuple) and not hasattr(record, "to_dict"):  # not a NamedTuple record
        return "[" + ", ".join(_json(r) for r in record) + "]"
    to_dict = getattr(record, "to_dict")  # noqa: B009 - every pinned record has one
    return json.dumps(to_dict())


@pytest.mark.parametrize(("make", "pinned"), [p[1:] for p in PINS], ids=[p[0] for p in PINS])
def test_a_records_json_is_pinned(make: Callable[[], object], pinned: str) -> None:
    assert _json(make()) == pinned


# --- the to_dicts still written by hand, each with why its JSON is no copy of its fields ------

HAND_WRITTEN = {
    "contracts/agent_record.py:AgentRecord": "keys ranked, unset ones omitted, extra after",
    "contracts/job_result.py:CheckRun": "flattens its CheckRecord into its own keys",
    "contracts/job_result.py:JobChecks": "a JSON array, not an object",
    "contracts/loop.py:LoopSettings": "keys of unset options, and the placement, omitted",
    "contracts/stored_evaluation.py:StoredEvaluation": "holds the stored JSON itself",
    "worker/view.py:JobView": "the job's answer, secrets masked on the way out",
}

_DERIVED = ("json_shape(self)",)


def _derived(method: ast.FunctionDef) -> bool:
    """A to_dict whose one statement (after a docstring, and an import of json_shape where a
    light command's import graph leaves it out) returns json_shape's answer."""
    skipped = (ast.Expr, ast.Import, ast.ImportFrom)
    body = [s for s in method.body if not isinstance(s, skipped)]
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        return False
    answer = ast.unparse(body[0].value)
    return answer in _DERIVED or (
        answer.startswith("cast(") and answer.endswith(", json_shape(self))")
    )


def _to_dicts(path: Path) -> list[tuple[str, ast.FunctionDef]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    classes = [node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
    return [
        (cls.name, method)
        for cls in classes
        for method in cls.body
        if isinstance(method, ast.FunctionDef) and method.name == "to_dict"
    ]


def _hand_written() -> set[str]:
    package = Path(autoresearch.__file__).parent
    return {
        f"{path.relative_to(package).as_posix()}:{name}"
        for path in package.rglob("*.py")
        for name, method in _to_dicts(path)
        if not _derived(method)
    }


def test_every_hand_written_to_dict_is_listed_with_why() -> None:
    """A new record's JSON comes from json_shape (json_field, json_extra); a to_dict written by
    hand is listed above with the reason its JSON is no copy of its fields."""
    found = _hand_written()
    assert not found - HAND_WRITTEN.keys(), "derive it with json_shape, or list it with why"
    assert not HAND_WRITTEN.keys() - found, "derived now (or gone): take it off the list"

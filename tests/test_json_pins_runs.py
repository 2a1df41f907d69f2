"""The runs' records (mission, evaluation, certify, doctor, trial, status, manifest, report),
their JSON pinned byte for byte as the hand-written `to_dict`s and `to_json`s printed it: key
order, keys present only on conditions, computed keys and masked secrets. Deriving a shape from
the dataclass (jsonshape.json_shape) must not change what `--json`, the MCP tools, the run's
files or the ledger see."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from autoresearch.confine import SandboxMode
from autoresearch.contracts.frozen import FrozenMission
from autoresearch.contracts.isolation import Isolation
from autoresearch.contracts.loop import LoopSettings
from autoresearch.contracts.sandbox import ChecksSpec, EvaluatorSpec, parse_sandbox
from autoresearch.contracts.stored_evaluation import StoredEvaluation
from autoresearch.evaluate import EvaluationRecord
from autoresearch.journal.iteration_records import IterationRecord
from autoresearch.journal.manifest import RunManifest
from autoresearch.journal.runs import RunRecord
from autoresearch.journal.totals import RunTotals
from autoresearch.mission import Mission
from autoresearch.noise import Interval, NoisePolicy
from autoresearch.paths import RepoPaths
from autoresearch.report import ReportResult
from autoresearch.report.model import KeptChange, Outcome, ReportData, ReportKind, Row
from autoresearch.states import (
    DecisionKind,
    Direction,
    EvalFormat,
    EvalStatus,
    IterationKind,
    IterationState,
    KeepPolicy,
    LaneState,
    Phase,
    RunStatus,
)
from autoresearch.supervisor.certify import Certification, Measured, Worth
from autoresearch.supervisor.doctor import DoctorReport, Severity
from autoresearch.supervisor.estimates import LevelDrift
from autoresearch.supervisor.improvement import Improvement
from autoresearch.supervisor.summary import (
    AgentShare,
    ArchiveEntry,
    IterationRow,
    LaneRow,
    LoopSummary,
    RunDetails,
    RunListing,
    RunSummary,
)
from autoresearch.supervisor.trial import TrialResult

_SECRET = "sk-ant-0123456789abcdefghijklmnop"  # a key shape every view masks
_INTERVAL = Interval(mean=1.5, low=1.0, high=2.0, n=3)
_NARROW = Interval(mean=2.0, low=1.9, high=2.1, n=5)


def _evaluation(**changes: object) -> EvaluationRecord:
    fields: dict[str, object] = {
        "command": "python3 eval.py",
        "format": EvalFormat.JSON,
        "ran_at": "2026-12-06T10:00:00Z",
        "duration_ms": 1200,
        "status": EvalStatus.PASS,
        "passed": True,
        "score": 1.5,
        "exit_code": 0,
        "timed_out": False,
        "stdout": '{"pass": true, "score": 1.5}\n',
        "stderr": "",
        "log_file": "/r/logs/eval-0001.log",
    }
    return EvaluationRecord(**{**fields, **changes})  # type: ignore[arg-type]


_EVAL_PASS = _evaluation()
_EVAL_ERROR = _evaluation(  # an error carries no pass and no score, whatever was parsed
    status=EvalStatus.ERROR,
    passed=True,
    score=9.0,
    exit_code=2,
    stderr="boom",
    parse_error="no JSON object",
    spawn_error="not found",
    extra={"score": 9.0, "note": "x"},
    cancelled=True,
)
_EVAL_METRIC = _evaluation(
    format=EvalFormat.METRIC,
    status=EvalStatus.FAIL,
    passed=False,
    score=None,
    metrics={"loss": 0.25, "acc": 0.9},
    timed_out=True,
    exit_code=None,
)
_EVAL_METRIC_NONE = _evaluation(format=EvalFormat.METRIC, passed=None, score=2.0)

_SANDBOX = parse_sandbox(
    "---\nevaluator:\n  command: python3 eval.py\n  format: json\n  metric: loss\n"
    "  direction: lower\nworktree:\n  link: [data]\n  runtime: [.venv]\n---\nMake it fast.\n"
)
_SANDBOX_TUNE = parse_sandbox(
    "---\nevaluator:\n  command: ./e\n  format: metric\n  metric: t\n"
    "tune:\n  file: p.json\n  parameters:\n    lr: {min: 0.1, max: 0.2}\n---\nTune it.\n"
)


def _mission(sandbox: object = _SANDBOX) -> Mission:
    return Mission(
        mission_dir=Path("/r/missions/fast"),
        repo_root=Path("/r"),
        worktree_root=Path("/r"),
        relative_dir="missions/fast",
        slug="fast",
        mission_text="# Fast",
        sandbox_text="(sandbox.md)",
        sandbox=sandbox,  # type: ignore[arg-type]
    )


_WORTH = Worth(3, "c3", "b0", "faster", "w3", "reverse", False, [2.0, 2.5], _INTERVAL, True)
_WORTH_CONFLICT = Worth(
    5, "c5", "c3", None, None, None, True, [], None, False, note="superseded: not measured"
)
_BASELINE = Measured("b0", [2.0, 2.1], _NARROW)
_FINAL = Measured("c5", [], None)


def _certification(**changes: object) -> Certification:
    fields: dict[str, object] = {
        "run_id": "r1",
        "repeats": 5,
        "direction": Direction.LOWER,
        "failed_readings": 1,
        "spread": 0.125,
        "baseline": _BASELINE,
        "final": _FINAL,
        "improvement": _INTERVAL,
        "significant": True,
        "same_commit": False,
        "baseline_mean": 2.05,
    }
    return Certification(**{**fields, **changes})  # type: ignore[arg-type]


def _doctor(*findings: tuple[str, Severity, str, str | None]) -> DoctorReport:
    report = DoctorReport(Path("/r"))
    for check, severity, message, fix in findings:
        report.add(check, severity, message, fix)
    return report


def _summary(**changes: object) -> RunSummary:
    fields: dict[str, object] = {
        "run_id": "r1",
        "status": RunStatus.COMPLETED,
        "stop_reason": "max iterations",
        "mission_slug": "fast",
        "branch_name": "autoresearch/fast-r1",
        "worktree_path": "/r/.autoresearch/worktrees/r1",
        "iteration": 4,
        "keep_policy": KeepPolicy.SCORE_IMPROVEMENT,
        "direction": Direction.LOWER,
        "last_kept_commit": "c3",
        "last_kept_score": 1.5,
        "best_score": 1.5,
        "best_interval": _INTERVAL,
        "baseline_score": 2.0,
        "baseline_interval": _NARROW,
        "certified_improvement": None,
        "drift": (LevelDrift("baseline", _NARROW, Interval(9.0, 8.0, 10.0, 2), 0),),
        "best_note": None,
        "counts": {"keep": 1, "discard": 2},
        "created_at": "2026-12-06T10:00:00Z",
        "updated_at": "2026-12-06T11:00:00Z",
        "completed_at": "2026-12-06T11:00:00Z",
        "stop_requested": None,
        "stop_note": None,
        "cleaned_at": None,
        "resume_command": "autoresearch resume r1",
        "improvement": Improvement(0.5, 25.0, _INTERVAL, False),
    }
    return RunSummary(**{**fields, **changes})  # type: ignore[arg-type]


def _iteration(**changes: object) -> IterationRecord:
    fields: dict[str, object] = {
        "run_id": "r1",
        "iteration": 3,
        "kind": IterationKind.ITERATION,
        "state": IterationState.APPLIED,
        "keep_policy": KeepPolicy.SCORE_IMPROVEMENT,
        "created_at": "2026-12-06T10:30:00Z",
        "updated_at": "2026-12-06T10:31:00Z",
        "candidate_status": "candidate",
        "base_commit": "b0",
        "candidate_commit": "c3",
        "description": f"use the key {_SECRET}",
        "artifact_notes": ["n1"],
        "decision": DecisionKind.KEEP,
        "decision_reason": "better",
        "decision_notes": ["d1"],
        "kept_commit": "c3",
        "evaluator": StoredEvaluation({"status": "pass", "score": 1.5}),
    }
    return IterationRecord(**{**fields, **changes})  # type: ignore[arg-type]


_ROW = IterationRow(_iteration(), "pass", _INTERVAL)
_ROW_LANE = IterationRow(
    _iteration(iteration=4, evaluator=None, lane=2, decision=None), "", None, parent="c3"
)

_FROZEN = FrozenMission(
    body="b",
    links=(),
    noise=NoisePolicy(),
    checks=ChecksSpec("c"),
    isolation=Isolation(SandboxMode.NONE),
    start_commit="s",
)


def _run(**changes: object) -> RunRecord:
    fields: dict[str, object] = {
        "run_id": "r1",
        "run_tag": "t1",
        "mission_slug": "fast",
        "source_mission_dir": "/r/missions/fast",
        "mission_dir": "/r/.autoresearch/worktrees/r1/missions/fast",
        "mission_file": "/r/.autoresearch/worktrees/r1/missions/fast/mission.md",
        "sandbox_file": "/r/.autoresearch/worktrees/r1/missions/fast/sandbox.md",
        "repo_root": "/r",
        "worktree_path": "/r/.autoresearch/worktrees/r1",
        "branch_name": "autoresearch/fast-r1",
        "evaluator": EvaluatorSpec("./e", EvalFormat.JSON, KeepPolicy.PASS_ONLY),
        "keep_policy": KeepPolicy.PASS_ONLY,
        "sandbox": _FROZEN,
        "status": RunStatus.STOPPED,
        "phase": Phase.READY,
        "created_at": "2026-12-06T10:00:00Z",
        "updated_at": "2026-12-06T11:00:00Z",
    }
    return RunRecord(**{**fields, **changes})  # type: ignore[arg-type]


_MANIFEST = RunManifest(_run(), RepoPaths(Path("/r")))
_MANIFEST_FULL = RunManifest(
    _run(
        baseline_commit="b0",
        last_kept_commit="c3",
        last_kept_score=1.5,
        latest_candidate_commit="c4",
        stop_reason="operator stop",
        stop_note=f"token {_SECRET}",
        iteration=4,
        loop=LoopSettings(agent="claude", max_iterations=10),
        completed_at="2026-12-06T11:00:00Z",
    ),
    RepoPaths(Path("/r")),
    _INTERVAL,
)

_LANE = LaneRow(
    1, LaneState.IDLE, None, 2, "b0", 3, DecisionKind.KEEP, "better", "pass", 2, 1, None, 0, "t"
)
_ARCHIVE = ArchiveEntry("c3", 1.5, None, "root", 0, 2, _INTERVAL)
_SHARE = AgentShare("claude", 2, 1, None, 100, 12.5)
_TOTALS = RunTotals(1.5, 2.5, None, None, None, 1, 3600.0)


def _report(**changes: object) -> ReportData:
    fields: dict[str, object] = {
        "kind": ReportKind.RUN,
        "ident": "r1",
        "title": "fast",
        "metric": "loss",
        "direction": Direction.LOWER,
        "status": RunStatus.STOPPED,
        "started_at": "2026-12-06T10:00:00Z",
        "ended_at": "2026-12-06T11:00:00Z",
        "generated_at": "2026-12-06T12:00:00Z",
        "rows": (
            Row(0, DecisionKind.BASELINE, Outcome.BASELINE, 2.0, readings=(2.0, 2.2)),
            Row(1, DecisionKind.KEEP, Outcome.KEPT, 1.5, commit="c1", readings=(1.5, 1.4)),
            Row(2, DecisionKind.DISCARD, Outcome.DISCARDED, 2.5),
        ),
        "kept": (KeptChange(1, "c1", "faster", 2.0, 1.5, "diff"),),
        "stop_reason": "operator stop",
    }
    return ReportData(**{**fields, **changes})  # type: ignore[arg-type]


# the JSON a wrapper of the summary (or of the manifest) repeats, pinned once
_SUMMARY_KEYS = (
    '"run_id": "r1", "status": "completed", "stop_reason": "max iterations", '
    '"mission_slug": "fast", "branch_name": "autoresearch/fast-r1", "worktree_path": '
    '"/r/.autoresearch/worktrees/r1", "iteration": 4, "keep_policy": '
    '"score_improvement", "direction": "lower", "last_kept_commit": "c3", '
    '"last_kept_score": 1.5, "best_score": 1.5, "baseline_score": 2.0, "counts": '
    '{"keep": 1, "discard": 2}, "created_at": "2026-12-06T10:00:00Z", "updated_at": '
    '"2026-12-06T11:00:00Z", "completed_at": "2026-12-06T11:00:00Z", "stop_requested": '
    'null, "stop_note": null, "cleaned_at": null, "resume_command": "autoresearch '
    'resume r1", "paused": null, "best_interval": {"mean": 1.5, "low": 1.0, "high": '
    '2.0, "n": 3, "level": 0.95}, "baseline_interval": {"mean": 2.0, "low": 1.9, '
    '"high": 2.1, "n": 5, "level": 0.95}, "certified_improvement": null, "drift": '
    '[{"label": "baseline", "then": {"mean": 2.0, "low": 1.9, "high": 2.1, "n": 5, '
    '"level": 0.95}, "now": {"mean": 9.0, "low": 8.0, "high": 10.0, "n": 2, "level": '
    '0.95}, "since": 0, "significant": true, "text": "the baseline now reads 9.0 \\u00b1 '
    '1.0 (n=2), it read 2.00 \\u00b1 0.10 (n=5) at prepare"}], "best_note": null, '
    '"improvement": {"change": 0.5, "percent": 25.0, "interval": {"mean": 1.5, "low": '
    '1.0, "high": 2.0, "n": 3, "level": 0.95}, "paired": false}'
)
_SUMMARY_JSON = "{" + _SUMMARY_KEYS + "}"
_MANIFEST_JSON = (
    '{"schema_version": 1, "run_id": "r1", "run_tag": "t1", "mission_dir": '
    '"/r/.autoresearch/worktrees/r1/missions/fast", "mission_file": '
    '"/r/.autoresearch/worktrees/r1/missions/fast/mission.md", "sandbox_file": '
    '"/r/.autoresearch/worktrees/r1/missions/fast/sandbox.md", "repo_root": "/r", '
    '"worktree_path": "/r/.autoresearch/worktrees/r1", "mission_slug": "fast", '
    '"branch_name": "autoresearch/fast-r1", "baseline_commit": null, '
    '"last_kept_commit": null, "last_kept_score": null, "last_kept_interval": null, '
    '"latest_candidate_commit": null, "results_file": '
    '"/r/.autoresearch/worktrees/r1/results.tsv", "instructions_file": '
    '"/r/.autoresearch/runs/r1/instructions.md", "manifest_file": '
    '"/r/.autoresearch/runs/r1/manifest.json", "ledger_file": '
    '"/r/.autoresearch/runs/r1/iteration-ledger.json", "latest_evaluator_file": '
    '"/r/.autoresearch/runs/r1/latest-evaluator-result.json", "candidate_file": '
    '"/r/.autoresearch/runs/r1/candidate.json", "evaluator": {"command": "./e", '
    '"format": "json", "keep_policy": "pass_only", "metric": null, "direction": '
    '"higher", "timeout_seconds": 3600.0}, "keep_policy": "pass_only", "status": '
    '"stopped", "stop_reason": null, "stop_note": null, "iteration": 0, "created_at": '
    '"2026-12-06T10:00:00Z", "updated_at": "2026-12-06T11:00:00Z", "completed_at": '
    'null, "source_mission_dir": "/r/missions/fast", "journal_file": '
    '"/r/.autoresearch/journal.sqlite3", "logs_dir": "/r/.autoresearch/runs/r1/logs", '
    '"agent": null}'
)


# (name, the record's JSON as plain data, that JSON as the hand-written code printed it)
PINS: list[tuple[str, Callable[[], object], str]] = [
    (
        "mission",
        lambda: _mission().to_dict(),
        '{"mission_dir": "/r/missions/fast", "repo_root": "/r", "mission_relative_dir": '
        '"missions/fast", "mission_slug": "fast", "mission_file": '
        '"/r/missions/fast/mission.md", "sandbox_file": "/r/missions/fast/sandbox.md", '
        '"evaluator": {"command": "python3 eval.py", "format": "json", "keep_policy": '
        '"score_improvement", "metric": "loss", "direction": "lower", "timeout_seconds": '
        '3600.0}, "worktree": {"link": ["data"], "runtime": [".venv"]}, "tune": null, '
        '"body": "Make it fast."}',
    ),
    (
        "mission_tune",
        lambda: _mission(_SANDBOX_TUNE).to_dict(),
        '{"mission_dir": "/r/missions/fast", "repo_root": "/r", "mission_relative_dir": '
        '"missions/fast", "mission_slug": "fast", "mission_file": '
        '"/r/missions/fast/mission.md", "sandbox_file": "/r/missions/fast/sandbox.md", '
        '"evaluator": {"command": "./e", "format": "metric", "keep_policy": '
        '"score_improvement", "metric": "t", "direction": "higher", "timeout_seconds": '
        '3600.0}, "worktree": {"link": [], "runtime": []}, "tune": {"seed": 0, '
        '"split_lanes": false, "parameters": {"lr": {"min": 0.1, "max": 0.2, "type": '
        '"float", "scale": "linear", "file": "p.json"}}}, "body": "Tune it."}',
    ),
    (
        "evaluation_pass",
        lambda: _EVAL_PASS.to_dict(),
        '{"command": "python3 eval.py", "ran_at": "2026-12-06T10:00:00Z", "duration_ms": '
        '1200, "status": "pass", "pass": true, "score": 1.5, "exit_code": 0, "timed_out": '
        'false, "stdout": "{\\"pass\\": true, \\"score\\": 1.5}\\n", "stderr": "", "log_file": '
        '"/r/logs/eval-0001.log"}',
    ),
    (
        "evaluation_error",
        lambda: _EVAL_ERROR.to_dict(),
        '{"command": "python3 eval.py", "ran_at": "2026-12-06T10:00:00Z", "duration_ms": '
        '1200, "status": "error", "exit_code": 2, "timed_out": false, "stdout": "{\\"pass\\": '
        'true, \\"score\\": 1.5}\\n", "stderr": "boom", "parse_error": "no JSON object", '
        '"spawn_error": "not found", "output": {"score": 9.0, "note": "x"}, "log_file": '
        '"/r/logs/eval-0001.log"}',
    ),
    (
        "evaluation_metric",
        lambda: _EVAL_METRIC.to_dict(),
        '{"command": "python3 eval.py", "ran_at": "2026-12-06T10:00:00Z", "duration_ms": '
        '1200, "status": "fail", "pass": false, "metrics": {"loss": 0.25, "acc": 0.9}, '
        '"exit_code": null, "timed_out": true, "stdout": "{\\"pass\\": true, \\"score\\": '
        '1.5}\\n", "stderr": "", "log_file": "/r/logs/eval-0001.log"}',
    ),
    (
        "evaluation_metric_no_pass",
        lambda: _EVAL_METRIC_NONE.to_dict(),
        '{"command": "python3 eval.py", "ran_at": "2026-12-06T10:00:00Z", "duration_ms": '
        '1200, "status": "pass", "score": 2.0, "metrics": {}, "exit_code": 0, "timed_out": '
        'false, "stdout": "{\\"pass\\": true, \\"score\\": 1.5}\\n", "stderr": "", "log_file": '
        '"/r/logs/eval-0001.log"}',
    ),
    (
        "compact_pass",
        lambda: _EVAL_PASS.compact(),
        '{"ran_at": "2026-12-06T10:00:00Z", "duration_ms": 1200, "status": "pass", "pass": '
        'true, "score": 1.5, "exit_code": 0, "timed_out": false, "log_file": '
        '"/r/logs/eval-0001.log"}',
    ),
    (
        "compact_error",
        lambda: _EVAL_ERROR.compact(),
        '{"ran_at": "2026-12-06T10:00:00Z", "duration_ms": 1200, "status": "error", '
        '"exit_code": 2, "timed_out": false, "parse_error": "no JSON object", '
        '"spawn_error": "not found", "log_file": "/r/logs/eval-0001.log"}',
    ),
    (
        "compact_metric",
        lambda: _EVAL_METRIC.compact(),
        '{"ran_at": "2026-12-06T10:00:00Z", "duration_ms": 1200, "status": "fail", "pass": '
        'false, "metrics": {"loss": 0.25, "acc": 0.9}, "exit_code": null, "timed_out": '
        'true, "log_file": "/r/logs/eval-0001.log"}',
    ),
    (
        "measured",
        lambda: _BASELINE.to_json(),
        '{"commit": "b0", "readings": [2.0, 2.1], "interval": {"mean": 2.0, "low": 1.9, '
        '"high": 2.1, "n": 5, "level": 0.95}}',
    ),
    (
        "measured_nothing",
        lambda: _FINAL.to_json(),
        '{"commit": "c5", "readings": [], "interval": null}',
    ),
    (
        "worth",
        lambda: _WORTH.to_json(),
        '{"iteration": 3, "commit": "c3", "parent": "b0", "description": "faster", '
        '"without_commit": "w3", "removed_by": "reverse", "conflict": false, "superseded": '
        'false, "readings": [2.0, 2.5], "worth": {"mean": 1.5, "low": 1.0, "high": 2.0, '
        '"n": 3, "level": 0.95}, "significant": true}',
    ),
    (
        "worth_conflict",
        lambda: _WORTH_CONFLICT.to_json(),
        '{"iteration": 5, "commit": "c5", "parent": "c3", "description": null, '
        '"without_commit": null, "removed_by": null, "conflict": true, "superseded": true, '
        '"readings": [], "worth": null, "significant": false, "note": "superseded: not '
        'measured"}',
    ),
    (
        "certification",
        lambda: _certification().to_json(),
        '{"run_id": "r1", "repeats": 5, "direction": "lower", "failed_readings": 1, '
        '"spread": 0.125, "baseline": {"commit": "b0", "readings": [2.0, 2.1], "interval": '
        '{"mean": 2.0, "low": 1.9, "high": 2.1, "n": 5, "level": 0.95}}, "final": '
        '{"commit": "c5", "readings": [], "interval": null}, "improvement": {"mean": 1.5, '
        '"low": 1.0, "high": 2.0, "n": 3, "level": 0.95}, "significant": true, '
        '"same_commit": false, "baseline_mean": 2.05}',
    ),
    (
        "certification_ablated",
        lambda: _certification(
            ablations=(_WORTH, _WORTH_CONFLICT), resolution="too wide"
        ).to_json(),
        '{"run_id": "r1", "repeats": 5, "direction": "lower", "failed_readings": 1, '
        '"spread": 0.125, "baseline": {"commit": "b0", "readings": [2.0, 2.1], "interval": '
        '{"mean": 2.0, "low": 1.9, "high": 2.1, "n": 5, "level": 0.95}}, "final": '
        '{"commit": "c5", "readings": [], "interval": null}, "improvement": {"mean": 1.5, '
        '"low": 1.0, "high": 2.0, "n": 3, "level": 0.95}, "significant": true, '
        '"same_commit": false, "baseline_mean": 2.05, "ablations": [{"iteration": 3, '
        '"commit": "c3", "parent": "b0", "description": "faster", "without_commit": "w3", '
        '"removed_by": "reverse", "conflict": false, "superseded": false, "readings": [2.0, '
        '2.5], "worth": {"mean": 1.5, "low": 1.0, "high": 2.0, "n": 3, "level": 0.95}, '
        '"significant": true}, {"iteration": 5, "commit": "c5", "parent": "c3", '
        '"description": null, "without_commit": null, "removed_by": null, "conflict": true, '
        '"superseded": true, "readings": [], "worth": null, "significant": false, "note": '
        '"superseded: not measured"}], "ablations_measured": 1, "resolution": "too wide"}',
    ),
    (
        "certification_no_ablation_measured",
        lambda: _certification(ablations=(), improvement=None, baseline_mean=None).to_json(),
        '{"run_id": "r1", "repeats": 5, "direction": "lower", "failed_readings": 1, '
        '"spread": 0.125, "baseline": {"commit": "b0", "readings": [2.0, 2.1], "interval": '
        '{"mean": 2.0, "low": 1.9, "high": 2.1, "n": 5, "level": 0.95}}, "final": '
        '{"commit": "c5", "readings": [], "interval": null}, "improvement": null, '
        '"significant": true, "same_commit": false, "baseline_mean": null, "ablations": [], '
        '"ablations_measured": 0}',
    ),
    (
        "doctor_healthy",
        lambda: _doctor().to_dict(),
        '{"repo_root": "/r", "healthy": true, "findings": []}',
    ),
    (
        "doctor_findings",
        lambda: _doctor(
            ("journal", Severity.OK, "fine", None), ("locks", Severity.ERROR, "stale", "rm it")
        ).to_dict(),
        '{"repo_root": "/r", "healthy": false, "findings": [{"check": "journal", '
        '"severity": "ok", "message": "fine", "fix": null}, {"check": "locks", "severity": '
        '"error", "message": "stale", "fix": "rm it"}]}',
    ),
    (
        "trial",
        lambda: TrialResult(
            mission_dir="/r/m",
            commit="c0",
            evaluation=_EVAL_PASS,
            left_behind=(),
            problems=(),
            notes=(),
        ).to_dict(),
        '{"mission_dir": "/r/m", "commit": "c0", "ok": true, "problems": [], "left_behind": '
        '[], "notes": [], "evaluation": {"ran_at": "2026-12-06T10:00:00Z", "duration_ms": '
        '1200, "status": "pass", "pass": true, "score": 1.5, "exit_code": 0, "timed_out": '
        'false, "log_file": "/r/logs/eval-0001.log"}}',
    ),
    (
        "trial_problems",
        lambda: TrialResult(
            mission_dir="/r/m",
            commit="c0",
            evaluation=_EVAL_ERROR,
            left_behind=("out.txt",),
            problems=("no score",),
            notes=("uncommitted",),
        ).to_dict(),
        '{"mission_dir": "/r/m", "commit": "c0", "ok": false, "problems": ["no score"], '
        '"left_behind": ["out.txt"], "notes": ["uncommitted"], "evaluation": {"ran_at": '
        '"2026-12-06T10:00:00Z", "duration_ms": 1200, "status": "error", "exit_code": 2, '
        '"timed_out": false, "parse_error": "no JSON object", "spawn_error": "not found", '
        '"log_file": "/r/logs/eval-0001.log"}}',
    ),
    (
        "run_summary",
        lambda: _summary().to_dict(),
        _SUMMARY_JSON,
    ),
    (
        "run_summary_bare",
        lambda: _summary(
            best_interval=None,
            baseline_interval=None,
            drift=(),
            improvement=None,
            certified_improvement=_INTERVAL,
            best_note="worse",
            paused="paused",
        ).to_dict(),
        '{"run_id": "r1", "status": "completed", "stop_reason": "max iterations", '
        '"mission_slug": "fast", "branch_name": "autoresearch/fast-r1", "worktree_path": '
        '"/r/.autoresearch/worktrees/r1", "iteration": 4, "keep_policy": '
        '"score_improvement", "direction": "lower", "last_kept_commit": "c3", '
        '"last_kept_score": 1.5, "best_score": 1.5, "baseline_score": 2.0, "counts": '
        '{"keep": 1, "discard": 2}, "created_at": "2026-12-06T10:00:00Z", "updated_at": '
        '"2026-12-06T11:00:00Z", "completed_at": "2026-12-06T11:00:00Z", "stop_requested": '
        'null, "stop_note": null, "cleaned_at": null, "resume_command": "autoresearch '
        'resume r1", "paused": "paused", "best_interval": null, "baseline_interval": null, '
        '"certified_improvement": {"mean": 1.5, "low": 1.0, "high": 2.0, "n": 3, "level": '
        '0.95}, "drift": [], "best_note": "worse", "improvement": null}',
    ),
    (
        "iteration_row",
        lambda: _ROW.to_dict(),
        '{"iteration": 3, "kind": "iteration", "decision": "keep", "decision_reason": '
        '"better", "candidate_status": "candidate", "base_commit": "b0", '
        '"candidate_commit": "c3", "kept_commit": "c3", "keep_policy": "score_improvement", '
        '"evaluator": {"status": "pass", "score": 1.5}, "created_at": '
        '"2026-12-06T10:30:00Z", "notes": ["n1", "d1"], "description": "use the key '
        '[REDACTED]", "evaluation": "pass", "estimate": {"mean": 1.5, "low": 1.0, "high": '
        '2.0, "n": 3, "level": 0.95}}',
    ),
    (
        "iteration_row_lane",
        lambda: _ROW_LANE.to_dict(),
        '{"iteration": 4, "kind": "iteration", "decision": null, "decision_reason": '
        '"better", "candidate_status": "candidate", "base_commit": "b0", '
        '"candidate_commit": "c3", "kept_commit": "c3", "keep_policy": "score_improvement", '
        '"evaluator": null, "created_at": "2026-12-06T10:30:00Z", "notes": ["n1", "d1"], '
        '"description": "use the key [REDACTED]", "agent": {"lane": 2}, "evaluation": "", '
        '"estimate": null, "parent": "c3"}',
    ),
    (
        "manifest",
        lambda: _MANIFEST.to_dict(),
        _MANIFEST_JSON,
    ),
    (
        "manifest_full",
        lambda: _MANIFEST_FULL.to_dict(),
        '{"schema_version": 1, "run_id": "r1", "run_tag": "t1", "mission_dir": '
        '"/r/.autoresearch/worktrees/r1/missions/fast", "mission_file": '
        '"/r/.autoresearch/worktrees/r1/missions/fast/mission.md", "sandbox_file": '
        '"/r/.autoresearch/worktrees/r1/missions/fast/sandbox.md", "repo_root": "/r", '
        '"worktree_path": "/r/.autoresearch/worktrees/r1", "mission_slug": "fast", '
        '"branch_name": "autoresearch/fast-r1", "baseline_commit": "b0", '
        '"last_kept_commit": "c3", "last_kept_score": 1.5, "last_kept_interval": {"mean": '
        '1.5, "low": 1.0, "high": 2.0, "n": 3, "level": 0.95}, "latest_candidate_commit": '
        '"c4", "results_file": "/r/.autoresearch/worktrees/r1/results.tsv", '
        '"instructions_file": "/r/.autoresearch/runs/r1/instructions.md", "manifest_file": '
        '"/r/.autoresearch/runs/r1/manifest.json", "ledger_file": '
        '"/r/.autoresearch/runs/r1/iteration-ledger.json", "latest_evaluator_file": '
        '"/r/.autoresearch/runs/r1/latest-evaluator-result.json", "candidate_file": '
        '"/r/.autoresearch/runs/r1/candidate.json", "evaluator": {"command": "./e", '
        '"format": "json", "keep_policy": "pass_only", "metric": null, "direction": '
        '"higher", "timeout_seconds": 3600.0}, "keep_policy": "pass_only", "status": '
        '"stopped", "stop_reason": "operator stop", "stop_note": "token [REDACTED]", '
        '"iteration": 4, "created_at": "2026-12-06T10:00:00Z", "updated_at": '
        '"2026-12-06T11:00:00Z", "completed_at": "2026-12-06T11:00:00Z", '
        '"source_mission_dir": "/r/missions/fast", "journal_file": '
        '"/r/.autoresearch/journal.sqlite3", "logs_dir": "/r/.autoresearch/runs/r1/logs", '
        '"agent": {"agent": "claude", "model": null, "agent_args": [], "max_turns": null, '
        '"seed": null, "max_iterations": 10, "max_noops": null, "max_agent_failures": null, '
        '"agent_timeout": null, "budget_usd": null, "budget_tokens": null, "budget_hours": '
        'null, "lanes": null}}',
    ),
    (
        "run_listing",
        lambda: RunListing(_summary(), True).to_dict(),
        ("{" + _SUMMARY_KEYS + ', "driver_alive": true}'),
    ),
    (
        "run_details",
        lambda: RunDetails(_summary(), _MANIFEST, [_ROW], 7, False, None, [_LANE]).to_dict(),
        (
            "{"
            + _SUMMARY_KEYS
            + ', "manifest": '
            + _MANIFEST_JSON
            + ', "iterations": [{"iteration": 3, "kind": "iteration", "decision": "keep", '
            '"decision_reason": "better", "candidate_status": "candidate", "base_commit": "b0", '
            '"candidate_commit": "c3", "kept_commit": "c3", "keep_policy": "score_improvement", '
            '"evaluator": {"status": "pass", "score": 1.5}, "created_at": '
            '"2026-12-06T10:30:00Z", "notes": ["n1", "d1"], "description": "use the key '
            '[REDACTED]", "evaluation": "pass", "estimate": {"mean": 1.5, "low": 1.0, "high": '
            '2.0, "n": 3, "level": 0.95}}], "iterations_total": 7, "driver_alive": false, '
            '"report_file": null, "lanes": [{"lane": 1, "state": "idle", "detail": null, '
            '"sessions": 2, "base_commit": "b0", "last_iteration": 3, "last_decision": "keep", '
            '"last_reason": "better", "last_evaluation": "pass", "iterations": 2, "keeps": 1, '
            '"cost_usd": null, "tokens": 0, "updated_at": "t"}], "archive": [], "agents": []}'
        ),
    ),
    (
        "run_details_frontier",
        lambda: RunDetails(
            _summary(), _MANIFEST, [], 0, True, "/r/x.html", [], [_ARCHIVE], [_SHARE]
        ).to_dict(),
        (
            "{"
            + _SUMMARY_KEYS
            + ', "manifest": '
            + _MANIFEST_JSON
            + ', "iterations": [], "iterations_total": 0, "driver_alive": true, "report_file": '
            '"/r/x.html", "lanes": [], "archive": [{"commit": "c3", "score": 1.5, "parent": '
            'null, "lineage": "root", "entered": 0, "tries": 2, "interval": {"mean": 1.5, '
            '"low": 1.0, "high": 2.0, "n": 3, "level": 0.95}}], "agents": [{"agent": "claude", '
            '"sessions": 2, "keeps": 1, "cost_usd": null, "tokens": 100, "seconds": 12.5}]}'
        ),
    ),
    (
        "loop_summary",
        lambda: LoopSummary(
            _summary(), "/r", 2, False, "l", "res", "m", "logs", "rep", _TOTALS, [_LANE]
        ).to_dict(),
        (
            "{"
            + _SUMMARY_KEYS
            + ', "repo_root": "/r", "sessions": 2, "interrupted": false, "ledger_file": "l", '
            '"results_file": "res", "manifest_file": "m", "logs_dir": "logs", "report_file": '
            '"rep", "totals": {"agent_seconds": 1.5, "evaluator_seconds": 2.5, "input_tokens": '
            'null, "output_tokens": null, "cost_usd": null, "evaluator_errors": 1, '
            '"wall_seconds": 3600.0}, "lanes": [{"lane": 1, "state": "idle", "detail": null, '
            '"sessions": 2, "base_commit": "b0", "last_iteration": 3, "last_decision": "keep", '
            '"last_reason": "better", "last_evaluation": "pass", "iterations": 2, "keeps": 1, '
            '"cost_usd": null, "tokens": 0, "updated_at": "t"}], "archive": [], "agents": []}'
        ),
    ),
    (
        "report",
        lambda: ReportResult(_report(), Path("/r/report.html"), Path("/r/progress.png")).to_dict(),
        '{"kind": "run", "id": "r1", "status": "stopped (operator stop)", "live": false, '
        '"report_file": "/r/report.html", "plot_file": "/r/progress.png", "warning": null, '
        '"metric": "loss", "direction": "lower", "baseline": 2.1, "best": 1.45, '
        '"baseline_interval": null, "best_interval": null, "improvement": '
        '0.6500000000000001, "counts": {"baseline": 1, "kept": 1, "discarded": 1, "error": '
        '0, "other": 0}, "kept_commits": ["c1"], "generated_at": "2026-12-06T12:00:00Z"}',
    ),
    (
        "report_live",
        lambda: ReportResult(
            _report(
                ended_at=None,
                stop_reason=None,
                baseline_score=2.1,
                best_score=1.4,
                baseline_estimate=_NARROW,
                best_estimate=_INTERVAL,
            ),
            Path("/r/report.html"),
            None,
            "no matplotlib",
        ).to_dict(),
        '{"kind": "run", "id": "r1", "status": "stopped", "live": true, "report_file": '
        '"/r/report.html", "plot_file": null, "warning": "no matplotlib", "metric": "loss", '
        '"direction": "lower", "baseline": 2.1, "best": 1.4, "baseline_interval": {"mean": '
        '2.0, "low": 1.9, "high": 2.1, "n": 5, "level": 0.95}, "best_interval": {"mean": '
        '1.5, "low": 1.0, "high": 2.0, "n": 3, "level": 0.95}, "improvement": '
        '0.7000000000000002, "counts": {"baseline": 1, "kept": 1, "discarded": 1, "error": '
        '0, "other": 0}, "kept_commits": ["c1"], "generated_at": "2026-12-06T12:00:00Z"}',
    ),
    (
        "report_empty",
        lambda: ReportResult(_report(rows=(), kept=()), Path("/r/report.html"), None).to_dict(),
        '{"kind": "run", "id": "r1", "status": "stopped (operator stop)", "live": false, '
        '"report_file": "/r/report.html", "plot_file": null, "warning": null, "metric": '
        '"loss", "direction": "lower", "baseline": null, "best": null, "baseline_interval": '
        'null, "best_interval": null, "improvement": null, "counts": {"baseline": 0, '
        '"kept": 0, "discarded": 0, "error": 0, "other": 0}, "kept_commits": [], '
        '"generated_at": "2026-12-06T12:00:00Z"}',
    ),
]


@pytest.mark.parametrize(("make", "pinned"), [p[1:] for p in PINS], ids=[p[0] for p in PINS])
def test_a_run_records_json_is_pinned(make: Callable[[], object], pinned: str) -> None:
    assert json.dumps(make()) == pinned

"""A run's manifest.json (spec §5): `RunManifest`, what a door shows of a prepared or resumed
run, and its file.

Apart from journal/views.py: `status` listing the runs imports the views (an iteration's
evaluation text, a score's format) but shows no manifest, and a frozen dataclass compiles its
methods at import (issue 36: tests/test_import_graph.py counts them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast

from autoresearch.fsutil import atomic_write_view, dump_json
from autoresearch.journal.views import SCHEMA_VERSION
from autoresearch.jsonshape import json_field, json_shape
from autoresearch.noise import Interval
from autoresearch.paths import RESULTS_FILE, RepoPaths, RunPaths
from autoresearch.redact import redact_value

if TYPE_CHECKING:
    from autoresearch.journal.runs import RunRecord


def _manifest_head(run: object) -> object:
    """manifest.json's keys up to the kept score, masked: the run's identity and files."""
    r = cast("RunRecord", run)
    return redact_value(
        {
            "schema_version": SCHEMA_VERSION,
            "run_id": r.run_id,
            "run_tag": r.run_tag,
            "mission_dir": r.mission_dir,
            "mission_file": r.mission_file,
            "sandbox_file": r.sandbox_file,
            "repo_root": r.repo_root,
            "worktree_path": r.worktree_path,
            "mission_slug": r.mission_slug,
            "branch_name": r.branch_name,
            "baseline_commit": r.baseline_commit,
            "last_kept_commit": r.last_kept_commit,
            "last_kept_score": r.last_kept_score,
        }
    )


@dataclass(frozen=True)
class RunManifest:
    """manifest.json of a run, as of its record: what a door shows of a prepared or resumed
    run, and (`to_dict`, the JSON edge) every key of §5, paths absolute, secrets masked;
    `last_kept_interval` (additive): the kept commit's estimate – mean, 95 % interval, n –
    that `last_kept_score` is the mean of. The keys are the record's and its files', computed:
    the run's first (`_manifest_head`), the estimate, then the rest (`json_extra`)."""

    run: RunRecord = field(metadata=json_field(inline=True, convert=_manifest_head))
    repo: RepoPaths = field(metadata=json_field(hidden=True))
    kept_interval: Interval | None = field(
        default=None, metadata=json_field(key="last_kept_interval")
    )

    @property
    def paths(self) -> RunPaths:
        return self.repo.run(self.run.run_id)

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)

    def json_extra(self) -> dict[str, object]:
        """The keys after the kept commit's estimate: the latest candidate, the run's files,
        its evaluator, state and times, and its loop (`agent`), masked."""
        run, paths = self.run, self.paths
        data: dict[str, object] = {
            "latest_candidate_commit": run.latest_candidate_commit,
            "results_file": str(Path(run.worktree_path) / RESULTS_FILE),
            "instructions_file": str(paths.instructions),
            "manifest_file": str(paths.manifest),
            "ledger_file": str(paths.ledger),
            "latest_evaluator_file": str(paths.latest_evaluator),
            "candidate_file": str(paths.candidate),
            "evaluator": run.evaluator.to_dict(),
            "keep_policy": run.keep_policy,
            "status": run.status,
            "stop_reason": run.stop_reason,
            "stop_note": run.stop_note,
            "iteration": run.iteration,
            "created_at": run.created_at,
            "updated_at": run.updated_at,
            "completed_at": run.completed_at,
            "source_mission_dir": run.source_mission_dir,
            "journal_file": str(self.repo.journal),
            "logs_dir": str(paths.logs),
            "agent": run.loop.to_dict() if run.loop is not None else None,
        }
        return dict(redact_value(data))


def write_manifest(manifest: RunManifest) -> None:
    atomic_write_view(manifest.paths.manifest, dump_json(manifest.to_dict()))

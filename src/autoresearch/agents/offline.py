"""The built-in offline agent: no model, no network.

It tunes the numeric parameters declared in sandbox.md's `tune:` block. Each session reads the
incumbent values from the worktree, proposes new ones (`tuning.propose`), edits the files,
commits, and writes the candidate artifact – exactly what a coding agent would do.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from autoresearch import failpoints, git
from autoresearch.agents.base import (
    AgentResult,
    Backend,
    OnSpawn,
    SessionRequest,
    ShouldCancel,
    Usage,
)
from autoresearch.agents.tuning import (
    Birth,
    Proposal,
    Trial,
    lane_share,
    line_of,
    propose,
    step_size,
)
from autoresearch.clock import utc_now_iso
from autoresearch.contracts import tune
from autoresearch.contracts.candidate import CandidateJson, artifact
from autoresearch.contracts.sandbox import Sandbox
from autoresearch.contracts.tune import ParamSpec, read_value, write_value
from autoresearch.errors import ContractError
from autoresearch.fsutil import atomic_write_json, atomic_write_text
from autoresearch.states import ArtifactStatus

AUTHOR = ("autoresearch offline agent", "offline-agent@autoresearch.localhost")
MSG_NEEDS_TUNE = (
    "the offline agent needs a `tune:` block in sandbox.md naming the numeric "
    "parameters to tune (see docs/writing-a-mission.md)"
)


@dataclass
class OfflineAgent:
    """Seeded numeric tuning as an agent back-end."""

    seed: int | None = None
    name: str = "offline"
    artifact_from_git: bool = False
    _trials: list[Trial] = field(default_factory=list)
    _births: dict[str, Birth] = field(default_factory=dict)
    _seen: int = 0
    _run_id: str | None = None

    def run(
        self, request: SessionRequest, should_cancel: ShouldCancel, on_spawn: OnSpawn
    ) -> AgentResult:
        t0 = time.monotonic()
        artifact, log = self._session(request)
        atomic_write_json(request.candidate_file, artifact)
        atomic_write_text(request.log_path, "\n".join(log) + "\n")
        return AgentResult(
            agent=self.name,
            exit_code=0,
            duration_ms=round((time.monotonic() - t0) * 1000),
            usage=Usage(success=True),
            log_file=str(request.log_path),
        )

    def _session(self, req: SessionRequest) -> tuple[CandidateJson, list[str]]:
        spec = req.sandbox.tune
        if spec is None:
            return _artifact(
                req, ArtifactStatus.ABORT, None, "offline agent: sandbox.md has no tune block"
            ), []
        try:
            incumbent = read_incumbent(req.worktree, spec.parameters)
        except ContractError as exc:
            return _artifact(req, ArtifactStatus.ABORT, None, f"offline agent: {exc}"), [str(exc)]
        seed = spec.seed if self.seed is None else self.seed
        history = self._history(req)
        line = line_of(history, self._births, req.base_commit)
        share = lane_share(spec.parameters, req.lane, req.lanes) if spec.split_lanes else None
        proposal = propose(
            spec.parameters, incumbent, history, seed, req.iteration, req.lane, share, line
        )
        lane = f" lane {req.lane}" if req.lane else ""
        log = [
            f"incumbent {json.dumps(incumbent)}",
            f"seed {seed}{lane} iteration {req.iteration}",
            f"step {step_size(line):.6g} over {len(line)} of {len(history)} trials",
        ]
        if proposal is None:
            return _artifact(
                req, ArtifactStatus.NOOP, None, "no untried configuration near the incumbent"
            ), log
        commit = apply_proposal(req.worktree, spec.parameters, proposal)
        log.append(f"proposal {json.dumps(proposal.values)} -> {commit}")
        notes = [tune.tried_note(proposal.values)]
        return _artifact(req, ArtifactStatus.CANDIDATE, commit, proposal.description, notes), log

    def _history(self, req: SessionRequest) -> list[Trial]:
        """Past proposals and their decisions, and the run's parent edges (`_births`), read
        incrementally from the request's history."""
        if req.history is None:
            return []
        if self._run_id != req.run_id:
            self._run_id, self._trials, self._births, self._seen = req.run_id, [], {}, 0
        for it in req.history(self._seen):
            self._seen = it.iteration
            if it.kept_commit and it.base_commit:
                self._births[it.kept_commit] = Birth(it.kept_commit, it.base_commit, it.iteration)
            if it.tried is not None and it.decision is not None:
                self._trials.append(Trial(it.tried, it.decision, it.base_commit, it.iteration))
        return self._trials


def read_incumbent(worktree: Path, params: tuple[ParamSpec, ...]) -> dict[str, float]:
    values: dict[str, float] = {}
    for p in params:
        path = worktree / p.file
        text = path.read_text(encoding="utf-8") if path.is_file() else ""
        value = read_value(text, p.name)
        if value is None:
            raise ContractError(
                f"parameter {p.name} not found as `{p.name} = <number>` in {p.file}"
            )
        values[p.name] = value
    return values


def apply_proposal(worktree: Path, params: tuple[ParamSpec, ...], proposal: Proposal) -> str:
    """Write the proposed values and commit them; returns the new commit."""
    files: dict[str, str] = {}
    for p in params:
        path = worktree / p.file
        text = files.get(p.file, path.read_text(encoding="utf-8"))
        files[p.file] = write_value(text, p.name, proposal.values[p.name], p.integer)
    for rel, text in files.items():
        atomic_write_text(worktree / rel, text, keep_mode=True)
    failpoints.hit("offline.after_edit")
    commit = git.commit_all(worktree, proposal.description, pathspec=list(files), author=AUTHOR)
    return commit or git.head(worktree)


def _artifact(
    req: SessionRequest,
    status: ArtifactStatus,
    commit: str | None,
    description: str,
    notes: list[str] | None = None,
) -> CandidateJson:
    return artifact(status, commit, req.base_commit, description, notes or [], utc_now_iso())


def require_tune(sandbox: Sandbox) -> None:
    """The offline agent tunes the mission's `tune:` block: refuse a mission without one."""
    if sandbox.tune is None:
        raise ContractError(MSG_NEEDS_TUNE)


# the `offline` entry point of autoresearch.agents (pyproject.toml); it starts no program
BACKEND = Backend(make=lambda config: OfflineAgent(seed=config.seed), check_mission=require_tune)

"""The process that carries one job from the queue to its evidence (`python -m` this module).

Started detached by `jobs.start`, so a job outlives the MCP server or CLI command that started
it. Phases, each recorded in the journal before the next begins: wait for a slot (first come,
first served, at most `AUTORESEARCH_WORKER_MAX_JOBS` at once) → prepare the workspace (in place,
or a worktree on its own branch) and snapshot it → run the agent → run the checks → gather the
evidence (and, in a worktree, commit the result and save it as a patch) → record the end.
A cancel request is polled all along; every child runs in its own process group, which is
gone when the phase returns (`proc.run_supervised`).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from autoresearch import children, git, worktree_repair
from autoresearch.agents import AgentConfig, make_agent
from autoresearch.agents.base import AgentResult, SessionRequest
from autoresearch.clock import utc_now_iso
from autoresearch.contracts.job import CheckSpec, SemanticGate, StageSpec
from autoresearch.contracts.job_result import (
    CheckResult,
    CheckRun,
    Executor,
    ExecutorRecord,
    JobChecks,
    JobEvidence,
    SemanticReview,
    Snapshot,
    StageRecord,
    Workspace,
)
from autoresearch.crash import EXIT_INTERNAL_ERROR, internal_error_line, write_crash_log
from autoresearch.errors import AutoresearchError
from autoresearch.evaluate import check_record
from autoresearch.fsutil import atomic_write_bytes, atomic_write_text
from autoresearch.journal import jobs as store
from autoresearch.journal.db import Journal, open_journal
from autoresearch.locks import FileLock
from autoresearch.paths import (
    DEFAULT_SHARED_LINKS,
    JOB_BRANCH_PREFIX,
    JobPaths,
    RepoPaths,
    job_paths,
    job_worktree,
)
from autoresearch.proc import SupervisedSpec, run_supervised
from autoresearch.redact import redact
from autoresearch.repo_state import ensure_state_dir, link_shared_paths
from autoresearch.reset import CACHE_DIRT, work_patch
from autoresearch.settings import kill_grace, worker_max_jobs
from autoresearch.states import ChildRole, Isolation, JobState, ResultState
from autoresearch.worker import evidence as ev
from autoresearch.worker import liveness, semantic, slots
from autoresearch.worker.bridge import job_bridge
from autoresearch.worker.confinement import job_box
from autoresearch.worker.instructions import job_instructions, revise_digest, stage_instructions
from autoresearch.worker.model import JobSpec

QUEUE_POLL_SECONDS = 0.25
CANCEL_POLL_SECONDS = 0.25


class Runner:
    """One job's run; every method records what it did before returning."""

    def __init__(self, journal: Journal, repo_root: Path, job: store.JobRecord) -> None:
        self.journal = journal
        self.root = repo_root
        self.job_id = job.job_id
        self.spec = job.spec
        self.paths: JobPaths = job_paths(repo_root, job.job_id)
        self.tag = children.job_tag(job.job_id)
        self.deadline = 0.0
        self._cancel_seen = False
        self._cancel_checked = 0.0
        self._stages: list[StageRecord] = []
        self._heavy: FileLock | None = None  # the machine-wide slot, held until the process ends

    # --- phases ------------------------------------------------------------------------------

    def run(self) -> None:
        if not self._wait_for_slot():
            return
        workdir, snap = self._prepare()
        if self.spec.stages:
            ended = self._run_stages(workdir, snap)
            if ended is not None:  # a stage without complete evidence: nothing after it runs
                self._finish(ended, snap, workdir, [])
                return
            self._update(state=JobState.CHECKING)
            checks, state = self._checks(workdir)
        else:
            checks, state = self._session(workdir, snap, self.paths.prompt, 0)
        revisions = 0
        while revisions < self.spec.revise_passes and _revisable(state, checks):
            revisions += 1
            digest = self._write_revise(workdir, revisions, checks)
            checks, state = self._session(workdir, snap, digest, revisions)
        if state in (JobState.RUNNING, JobState.CHECKING):
            state = JobState.COMPLETED
        self._finish(state, snap, workdir, checks, revisions)

    def _session(
        self, workdir: Path, snap: Snapshot, instructions: Path, revision: int
    ) -> tuple[list[CheckRun], JobState]:
        """One agent session (`revision` 0: the first), then the checks when it ended well."""
        result = self._agent(workdir, snap, instructions, revision)
        state = _state_after_agent(result)
        if state is not JobState.RUNNING or _executor(result) is not Executor.PASSED:
            return [], state
        self._update(state=JobState.CHECKING)
        return self._checks(workdir)

    def _run_stages(self, workdir: Path, snap: Snapshot) -> JobState | None:
        """Each stage in order; the state the job ends in when one is incomplete (None: all
        complete, the job's own checks come next)."""
        for number, stage in enumerate(self.spec.stages, start=1):
            record, state = self._stage(workdir, snap, number, stage)
            if state in (JobState.CANCELLED, JobState.TIMED_OUT):
                return state
            if not record.complete:
                return JobState.COMPLETED
        return None

    def _stage(
        self, workdir: Path, snap: Snapshot, number: int, stage: StageSpec
    ) -> tuple[StageRecord, JobState]:
        """One stage's session, then its checks when the session ended well; recorded in the
        job's evidence before the next stage may start."""
        instructions = self.paths.root / f"stage-{number:02d}.md"
        text = stage_instructions(self.spec, number, workdir, self._stages)
        atomic_write_text(instructions, text)
        result = self._agent(workdir, snap, instructions, 0)
        state, executor = _state_after_agent(result), _executor(result)
        checks: list[CheckRun] = []
        if state is JobState.RUNNING and executor is Executor.PASSED:
            self._update(state=JobState.CHECKING)
            checks, state = self._run_checks(
                workdir,
                stage.checks,
                lambda i: self.paths.root / f"stage-{number:02d}-check-{i:02d}.log",
            )
        record = StageRecord(number, executor, tuple(checks))
        self._stages.append(record)
        self._update(evidence=JobEvidence(snap, stages=tuple(self._stages)))
        return record, state

    def _write_revise(self, workdir: Path, number: int, checks: list[CheckRun]) -> Path:
        """The next session's instructions: the task and its rules, then the failure digest
        (each failed check's command, exit and output tail), kept beside the prompt."""
        path = self.paths.root / f"revise-{number:02d}.md"
        text = job_instructions(self.spec, workdir) + revise_digest(
            number, self.spec.revise_passes, checks
        )
        atomic_write_text(path, redact(text))
        return path

    def _wait_for_slot(self) -> bool:
        """Wait for a machine-wide job slot and then the repository's (first come, first
        served), holding the job's queue ticket meanwhile; a job that waits longer than the
        acquire timeout ends failed with the retryable `worker_busy` error."""
        limits = slots.Limits.from_env()
        ticket = slots.coordination_dir() / "queue" / self.job_id
        held = FileLock(ticket)
        held.try_acquire()
        give_up = time.monotonic() + limits.acquire_timeout
        try:
            while not self._claim(limits):
                if self.cancel_requested():
                    self._end_unstarted(JobState.CANCELLED)
                    return False
                if time.monotonic() >= give_up:
                    why = slots.busy(f"no job slot came free in {limits.acquire_timeout:g} s")
                    self._update(
                        state=JobState.FAILED, error=why.message, finished_at=utc_now_iso()
                    )
                    return False
                time.sleep(QUEUE_POLL_SECONDS)
            return True
        finally:
            slots.release_ticket(ticket, held)

    def _claim(self, limits: slots.Limits) -> bool:
        """A machine-wide slot, then the repository's; the machine's is given back when the
        repository has none free, so that other repositories' jobs may run meanwhile."""
        liveness.reconcile(self.journal, self.root)
        if self._heavy is None:
            self._heavy = slots.try_heavy(limits)
            if self._heavy is None:
                return False
        deadline = time.time() + self.spec.timeout_seconds
        with self.journal.tx() as conn:
            if store.claim_slot(conn, self.job_id, worker_max_jobs(), deadline):
                self.deadline = deadline
                return True
        self._heavy.release()
        self._heavy = None
        return False

    def _prepare(self) -> tuple[Path, Snapshot]:
        cwd = Path(self.spec.cwd)
        tree: Path | None = None
        if self.spec.isolation is Isolation.WORKTREE:
            cwd, tree = self._make_worktree(cwd)
        snap = ev.take_snapshot(cwd)
        self._update(
            workdir=str(cwd),
            base_commit=snap.base_commit,
            evidence=JobEvidence(snap),
            worktree_path=None if tree is None else str(tree),
            branch=None if tree is None else self._branch,
        )
        atomic_write_text(self.paths.prompt, job_instructions(self.spec, cwd))
        return cwd, snap

    @property
    def _branch(self) -> str:
        return f"{JOB_BRANCH_PREFIX}{self.job_id}"

    def _make_worktree(self, cwd: Path) -> tuple[Path, Path]:
        """The job's worktree on its own branch: the directory to work in, and the worktree."""
        top = git.toplevel(cwd)
        if top is None:
            raise AutoresearchError(
                f"isolation worktree needs a git repository: {cwd} is not in one"
            )
        tree = job_worktree(self.root, self.job_id)
        ensure_state_dir(RepoPaths(self.root))
        # a tree a killed `git worktree add` left half-built (this job's own, or any other of
        # the tool's) would be taken for a worktree here, and breaks every fetch: gone first
        worktree_repair.heal(RepoPaths(self.root))
        if not git.is_worktree_of(tree, top):
            git.worktree_add(top, tree, self._branch, git.head(top))
        link_shared_paths(top, tree, DEFAULT_SHARED_LINKS)
        return tree / os.path.relpath(os.path.realpath(cwd), top), tree

    def _agent(
        self, workdir: Path, snap: Snapshot, instructions: Path, revision: int
    ) -> AgentResult:
        model = self.spec.model_of(revision)
        config = AgentConfig(self.spec.agent, model, session_grants(self.spec), self.spec.max_turns)
        try:
            agent = make_agent(config)
        except AutoresearchError as exc:
            result = AgentResult(self.spec.agent, None, 0, spawn_error=exc.message)
            self._update(executor=ExecutorRecord(Executor.FAILED, result.record()))
            return result
        # A claude job on the OpenAI-compatible gateway: the bridge lives as long as the agent.
        with job_bridge(self.spec.agent, self.root, self.job_id) as bridged:
            request = SessionRequest(
                run_id=self.job_id,
                iteration=revision + 1,
                worktree=workdir,
                instructions_file=instructions,
                candidate_file=self.paths.candidate,
                base_commit=snap.base_commit or "",
                log_path=self.paths.agent_log,
                timeout=self._remaining(),
                extra_env=bridged.env,
                box=job_box(self.spec, workdir),
            )
            result = agent.run(request, self.cancel_requested, self._registers(ChildRole.AGENT))
        gateway = None if bridged.spend is None else bridged.spend.gateway()
        executor = ExecutorRecord(_executor(result), result.record(), gateway)
        self._update(executor=executor, children_ended=True)
        return result

    def _checks(self, workdir: Path) -> tuple[list[CheckRun], JobState]:
        """The job's own checks, each recorded in jobs.checks_json as it ends."""

        def record(done: list[CheckRun]) -> None:
            self._update(checks=JobChecks(tuple(done)), children_ended=True)

        return self._run_checks(workdir, self.spec.checks, self.paths.check_log, record)

    def _run_checks(
        self,
        workdir: Path,
        specs: tuple[CheckSpec, ...],
        log_of: Callable[[int], Path],
        record: Callable[[list[CheckRun]], None] | None = None,
    ) -> tuple[list[CheckRun], JobState]:
        done: list[CheckRun] = []
        for index, check in enumerate(specs, start=1):
            remaining = self._remaining()
            limit = min(check.timeout_seconds, remaining)
            log = log_of(index)
            out = run_supervised(
                SupervisedSpec(
                    argv=["sh", "-c", check.command],
                    cwd=workdir,
                    env=self.tag.env(),
                    log_path=log,
                    timeout=limit,
                    grace_seconds=kill_grace(),
                    should_cancel=self.cancel_requested,
                    on_spawn=self._registers(ChildRole.CHECKS),
                    box=job_box(self.spec, workdir),
                )
            )
            done.append(
                CheckRun(
                    name=check.label,
                    command=check.command,
                    run=check_record(out, ev.log_tail(log)),
                    output=ev.artifact(log, log.name),
                )
            )
            if record is None:
                self._update(children_ended=True)
            else:
                record(done)
            if out.cancelled:
                return done, JobState.CANCELLED
            if out.timed_out and limit < check.timeout_seconds:
                return done, JobState.TIMED_OUT  # the job's deadline, not the check's own
        return done, JobState.CHECKING

    def _finish(
        self,
        state: JobState,
        snap: Snapshot,
        workdir: Path,
        checks: list[CheckRun],
        revisions: int = 0,
    ) -> None:
        changes = ev.changes_since(snap)
        patch = self._save_patch(snap)
        review = self._semantic_review(state, checks, patch)
        commit = None
        if self.spec.isolation is Isolation.WORKTREE and snap.repo is not None:
            commit = self._commit_worktree(Path(snap.repo), changes.files)
        outside, allowed_outside_repo = self._out_of_scope(changes)
        workspace = Workspace(
            changed_files=changes.files,
            preexisting_files=changes.preexisting,
            unattributed_files=changes.unattributed,
            out_of_scope_files=outside,
            allowed_outside_repo=allowed_outside_repo,
            complete=changes.complete,
            note=changes.note,
            diff_bytes=None if patch is None else patch.stat().st_size,
            patch=None if patch is None else ev.artifact(patch),
        )
        self._update(
            state=state,
            finished_at=utc_now_iso(),
            evidence=JobEvidence(
                snap,
                semantic=review,
                revisions=revisions,
                stages=tuple(self._stages),
                workspace=workspace,
            ),
            checks=JobChecks(tuple(checks)),
            result_state=ResultState.NONE if commit is None else ResultState.PENDING,
            result_commit=commit,
            patch_path=None if commit is None else str(self.paths.changes_patch),
        )

    def _semantic_review(
        self, state: JobState, checks: list[CheckRun], patch: Path | None
    ) -> SemanticReview | None:
        """The reviewer's verdict when the job asked for one and its checks all passed (a
        failed check already decides the verdict: no model call for it)."""
        if self.spec.semantic_gate is SemanticGate.OFF or state is not JobState.COMPLETED:
            return None
        if not all(s.complete for s in self._stages) or len(self._stages) < len(self.spec.stages):
            return None  # an incomplete stage already decides the verdict
        if any(c.status is not CheckResult.PASSED for c in checks):
            return None
        if patch is None:
            return semantic.missing("no diff of the job's change to review")
        text = patch.read_bytes().decode("utf-8", "replace")
        return semantic.review_change(self.spec.prompt, text)

    def _out_of_scope(self, changes: ev.Changes) -> tuple[tuple[str, ...], bool]:
        """Which changed files lie outside the allowed dirs or the declared scope; and whether
        an allowed dir lies outside the repository (its changes cannot be seen)."""
        top = git.toplevel(Path(self.spec.cwd))
        allowed = None if top is None else ev.relative_prefixes(self.spec.allowed_dirs, str(top))
        scope = None
        if top is not None and self.spec.scope_paths is not None:
            scope = ev.relative_prefixes(self.spec.scope_paths, str(top))
        if allowed is None:
            return (), True
        return tuple(ev.out_of_scope(changes.files, allowed, scope)), False

    def _save_patch(self, snap: Snapshot) -> Path | None:
        """The job's work past its base as a patch, caches left out: `job apply` puts it into
        the user's tree, where the same cache file may stand already (git apply refuses all)."""
        if snap.repo is None or snap.base_commit is None:
            return None
        try:
            data = work_patch(Path(snap.repo), snap.base_commit, CACHE_DIRT)
        except AutoresearchError:
            return None
        atomic_write_bytes(self.paths.changes_patch, data)
        return self.paths.changes_patch

    def _commit_worktree(self, tree: Path, changed: tuple[str, ...]) -> str | None:
        """Keep the job's result on its branch: one commit of the files it changed, caches
        left out as from its evidence (its id; None: the agent left nothing to keep)."""
        if not changed:
            return None
        message = f"autoresearch job {self.job_id}\n\n{self.spec.prompt[:2000]}\n"
        git.commit_all(tree, message, pathspec=changed)
        return git.head(tree)

    def _end_unstarted(self, state: JobState) -> None:
        self._update(state=state, finished_at=utc_now_iso())

    # --- helpers -----------------------------------------------------------------------------

    def cancel_requested(self) -> bool:
        """Polled by the supervised children's loop: reads the journal at most 4 times a second."""
        if self._cancel_seen:
            return True
        now = time.monotonic()
        if now - self._cancel_checked >= CANCEL_POLL_SECONDS:
            self._cancel_checked = now
            job = store.get_job(self.journal, self.job_id)
            self._cancel_seen = job is None or job.cancel_requested_at is not None
        return self._cancel_seen

    def _registers(self, role: ChildRole) -> Callable[[int], None]:
        """A spawn callback: the child's group goes into the one registry (children.py)."""

        def register(pgid: int) -> None:
            children.register(self.journal, self.tag, pgid, role)

        return register

    def _remaining(self) -> float:
        return max(0.1, self.deadline - time.time())

    def _update(self, children_ended: bool = False, **changes: Any) -> None:
        """Record `changes`; with `children_ended`, the child that just returned (its group is
        gone: proc.run_supervised) leaves the registry in the same transaction."""
        with self.journal.tx() as conn:
            store.update_job(conn, self.job_id, **changes)
            if children_ended:
                children.forget(conn, self.tag)


def session_grants(spec: JobSpec) -> tuple[str, ...]:
    """Extra agent arguments so the session may run the job's own checks.

    Claude Code in acceptEdits mode denies every Bash command nobody granted; the checks are
    what the job will be judged by, so the agent may run exactly those (Claude Code may still
    refuse a command its rule syntax cannot hold: that denial is evidence, not a failure).
    Codex's workspace-write sandbox already lets it run commands in its directory.
    """
    if spec.agent != "claude" or not spec.checks:
        return ()
    return ("--allowedTools", ",".join(f"Bash({c.command})" for c in spec.checks))


def _revisable(state: JobState, checks: list[CheckRun]) -> bool:
    """Whether a revise pass may help: every check ran and one of them did not pass (a
    cancelled or timed-out job, or a session that failed, is not revised)."""
    return state is JobState.CHECKING and any(c.status is not CheckResult.PASSED for c in checks)


def _executor(result: AgentResult) -> Executor:
    """How the session ended, judged apart from its permission denials: a session that ended
    normally after a refused tool call did its work (or not: its checks, run by the worker,
    say so). A denied check command must not fail a right change; the denials stay in the
    record as evidence."""
    if result.cancelled or result.timed_out:
        return Executor.NOT_RUN
    undenied = replace(result, usage=replace(result.usage, denials=[]))
    return Executor.FAILED if undenied.failed else Executor.PASSED


def _state_after_agent(result: AgentResult) -> JobState:
    if result.cancelled:
        return JobState.CANCELLED
    if result.timed_out:
        return JobState.TIMED_OUT
    return JobState.RUNNING


def main(argv: list[str]) -> int:
    """`python -m autoresearch.worker.runner REPO_ROOT JOB_ID`."""
    root, job_id = Path(argv[0]), argv[1]
    with open_journal(root) as journal:
        job = store.get_job(journal, job_id)
        if job is None or job.state is not JobState.QUEUED:
            return 0  # started twice, or already ended: nothing to do
        runner = Runner(journal, root, job)
        try:
            runner.run()
        except AutoresearchError as exc:
            # A broken environment the engine names (git gone, no repository): the job ends
            # as failed, with why.
            _fail(journal, job_id, redact(exc.message))
            print(redact(exc.message), file=sys.stderr)
            return 1
        except Exception as exc:  # noqa: BLE001 - the runner's one catch-all, at its edge
            # A bug or an unnamed failure (disk full): the one internal-error path of every
            # door, a crash log for us and the line for the caller.
            log = write_crash_log(exc, ["autoresearch.worker.runner", *argv], root)
            line = redact(internal_error_line(exc, log))
            _fail(journal, job_id, line)
            print(line, file=sys.stderr)
            return EXIT_INTERNAL_ERROR
    return 0


def _fail(journal: Journal, job_id: str, error: str) -> None:
    with journal.tx() as conn:
        store.update_job(
            conn, job_id, state=JobState.FAILED, error=error, finished_at=utc_now_iso()
        )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

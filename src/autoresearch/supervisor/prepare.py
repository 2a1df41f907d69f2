"""prepare: branch + worktree + mission + shared links + excludes + baseline + run files.

The run row is inserted first (in the same transaction that checks for an active run, so two
concurrent prepares cannot both win) with phase `preparing`; every later stage is idempotent,
so a prepare killed half-way is finished by `resume`. A prepare that fails in-process removes
what it built.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

from autoresearch import failpoints, git
from autoresearch.clock import run_tag_now, utc_now_iso
from autoresearch.contracts.frozen import FrozenMission
from autoresearch.contracts.loop import LoopSettings
from autoresearch.contracts.sandbox import unknown_keys
from autoresearch.contracts.stored_evaluation import StoredEvaluation
from autoresearch.decide import baseline_decision
from autoresearch.errors import ContractError, RefusedError
from autoresearch.evaluate import EvaluationRecord
from autoresearch.fsutil import atomic_write_bytes, private_dir
from autoresearch.journal import iteration_records, runs
from autoresearch.journal.db import open_journal
from autoresearch.journal.iteration_records import IterationRecord
from autoresearch.journal.runs import RunRecord
from autoresearch.mission import Mission, load_mission
from autoresearch.noise import Role, calibration_note, mean_of
from autoresearch.paths import MISSION_FILE, SANDBOX_FILE, RepoPaths
from autoresearch.repo_state import ensure_state_dir, link_shared_paths, write_excludes
from autoresearch.states import EvalStatus, IterationKind, Phase, RunStatus
from autoresearch.supervisor import record, seal, sync
from autoresearch.supervisor.handle import (
    MeasureWith,
    RunContext,
    RunHandle,
    driver_lock,
    msg_active_run,
)
from autoresearch.supervisor.run_read import driver_alive
from autoresearch.supervisor.safety import check_reset_safety

_TAG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def prepare(
    mission_dir: Path,
    run_tag: str | None = None,
    loop: LoopSettings | None = None,
    *,
    measure_with: MeasureWith | None = None,
) -> RunHandle:
    """Create a run and establish its baseline; returns the locked handle.

    `measure_with` takes the baseline's readings (`DriverState.measure_with`; None: the
    evaluator runs right here)."""
    mission = load_mission(mission_dir)
    if git.resolve_commits(mission.worktree_root, ["HEAD"]) == [None]:
        raise ContractError(
            f"the repository has no commits yet: commit your project in {mission.worktree_root} "
            "before preparing a run (the run's branch starts from HEAD)"
        )
    repo = RepoPaths(mission.repo_root)
    ensure_state_dir(repo)
    journal = open_journal(repo.repo_root)
    try:
        handle = _register(journal, repo, mission, run_tag, loop)
        handle.state.measure_with = measure_with
    except BaseException:
        journal.close()
        raise
    try:
        finish_prepare(handle)
    except BaseException:
        _discard_half_built(handle)
        raise
    return handle


def uncommitted_note(mission_dir: Path) -> str | None:
    """What in the user's checkout a new run will not see: its worktree starts from HEAD, so
    uncommitted edits (outside the mission folder, which is copied) are not part of it."""
    mission = load_mission(mission_dir)
    root = mission.worktree_root
    rel = mission.relative_dir
    paths = [
        e.path
        for e in git.status(root)
        if not e.path.startswith(".autoresearch/")
        and not (rel != "." and (e.path == rel or e.path.startswith(f"{rel}/")))
    ]
    if not paths:
        return None
    shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
    return (
        f"note: {len(paths)} uncommitted change{'s' if len(paths) != 1 else ''} in {root} "
        f"{'are' if len(paths) != 1 else 'is'} not part of the run, which starts from the "
        f"commit {git.head(root)[:12]}: {shown}. Commit them first to include them."
    )


def unknown_key_notes(mission_dir: Path) -> list[str]:
    """What a run would silently ignore in sandbox.md (a typo such as `timeout:` means the
    default is used): one warning per unknown key, as `check` reports them."""
    return [
        f"warning: {line}; it is ignored (autoresearch check lists what is known)"
        for line in unknown_keys(load_mission(mission_dir).sandbox.frontmatter)
    ]


def mission_notes(mission_dir: Path) -> list[str]:
    """What to tell the user before a new run of `mission_dir` is prepared (`run`, `prepare`):
    uncommitted edits it will not see, sandbox.md keys it ignores."""
    note = uncommitted_note(mission_dir)
    return ([note] if note else []) + unknown_key_notes(mission_dir)


def _register(
    journal: Any,
    repo: RepoPaths,
    mission: Mission,
    run_tag: str | None,
    loop: LoopSettings | None,
) -> RunHandle:
    with journal.tx() as conn:
        active = runs.active_run_ids(conn)
        if active:
            raise RefusedError(msg_active_run(active[0], driver_alive(repo, active[0])))
        tag = _allocate_tag(conn, repo, mission.slug, run_tag)
        run = _new_run(repo, mission, tag, loop)
        lock = driver_lock(repo, run.run_id)
        runs.insert_run(conn, run)
    return RunHandle.of(journal, repo, run, lock)


def _allocate_tag(conn: Any, repo: RepoPaths, slug: str, requested: str | None) -> str:
    if requested is not None:
        if not _TAG.match(requested):
            raise ContractError(
                f"invalid --run-tag {requested!r}: use letters, digits, '.', '_' or '-'"
            )
        if _tag_taken(conn, repo, slug, requested):
            raise RefusedError(
                f"run tag {requested} is already used by run {_run_id(slug, requested)}; "
                "choose another --run-tag"
            )
        return requested
    base = run_tag_now()
    tag, n = base, 1
    while _tag_taken(conn, repo, slug, tag):
        n += 1  # two launches in the same second get -2, -3, …
        tag = f"{base}-{n}"
    return tag


def _run_id(slug: str, tag: str) -> str:
    return f"{slug}-{tag.lower()}"


def _branch(slug: str, tag: str) -> str:
    return f"autoresearch/{slug}/{tag.lower()}"


def _tag_taken(conn: Any, repo: RepoPaths, slug: str, tag: str) -> bool:
    run_id = _run_id(slug, tag)
    return (
        runs.run_exists(conn, run_id)
        or repo.worktree(run_id).exists()
        or repo.run(run_id).root.exists()
        or git.branch_exists(repo.repo_root, _branch(slug, tag))
    )


def _new_run(repo: RepoPaths, mission: Mission, tag: str, loop: LoopSettings | None) -> RunRecord:
    run_id = _run_id(mission.slug, tag)
    worktree = repo.worktree(run_id)
    rel = mission.relative_dir
    wt_mission = worktree if rel == "." else worktree / rel
    now = utc_now_iso()
    sb = mission.sandbox
    return RunRecord(
        run_id=run_id,
        run_tag=tag,
        mission_slug=mission.slug,
        source_mission_dir=str(mission.mission_dir),
        mission_dir=str(wt_mission),
        mission_file=str(wt_mission / MISSION_FILE),
        sandbox_file=str(wt_mission / SANDBOX_FILE),
        repo_root=str(repo.repo_root),
        worktree_path=str(worktree),
        branch_name=_branch(mission.slug, tag),
        evaluator=sb.evaluator,
        keep_policy=sb.evaluator.keep_policy,
        sandbox=FrozenMission(
            body=sb.body,
            links=sb.links,
            runtime=sb.runtime,
            tune=sb.tune,
            noise=sb.noise,
            sealed=sb.sealed,
            checks=sb.checks,
            evaluation=sb.evaluation,
            budget=sb.budget,
            isolation=sb.isolation,
            mission_text=mission.mission_text,
            sandbox_text=mission.sandbox_text,
            relative_dir=rel,
            start_commit=git.head(mission.worktree_root),
        ),
        status=RunStatus.RUNNING,
        phase=Phase.PREPARING,
        created_at=now,
        updated_at=now,
        loop=loop,
    )


def finish_prepare(h: RunHandle) -> None:
    """Every stage after the run row exists; safe to repeat after a crash."""
    run = h.run
    record.reap_stale_children(h)  # a killed git leaves its locks: clear them first
    _ensure_worktree(h.context)
    failpoints.hit("prepare.after_worktree")
    _materialize_mission(h.context, h.run)
    seal.seal(h.context)
    link_shared_paths(h.repo.repo_root, h.worktree, h.links)
    write_excludes(h.repo.repo_root, h.dirt.rooted_patterns())
    check_reset_safety(h.worktree, h.dirt, h.run_id)
    if iteration_records.get_iteration(h.journal, run.run_id, 0) is None:
        _baseline(h)
        failpoints.hit("prepare.after_baseline")
    with h.journal.tx() as conn:
        runs.update_run(conn, run.run_id, phase=Phase.READY)
    h.refresh()
    private_dir(h.paths.logs)
    sync.rebuild_views(h)
    sync.write_placeholder(h.context, h.run.last_kept_commit)
    h.journal.backup()


def _ensure_worktree(h: RunContext) -> None:
    # A whole-tree kill inside `git worktree add` leaves a registered worktree with HEAD
    # unborn, no index or missing files; committing the mission there would delete the
    # project. Nothing of anyone's is in it yet (prepare runs no session): any damage that
    # `git.worktree_problem` names gets it built anew.
    private_dir(h.worktree.parent)
    start = str(h.sandbox.start_commit)
    git.ensure_worktree(h.repo.repo_root, h.worktree, h.branch_name, start)


def _materialize_mission(h: RunContext, run: RunRecord) -> None:
    """Copy the mission into the worktree; commit only what differs.

    mission.md and sandbox.md come from the journal (frozen at prepare); a mission in its own
    folder brings the rest of that folder too (an evaluator next to it need not be committed).
    """
    target = Path(run.mission_dir)
    files: dict[Path, bytes] = {}
    if run.sandbox.relative_dir != ".":
        source = Path(run.source_mission_dir)
        for rel in git.list_files(source) if source.is_dir() else []:
            files[target / rel] = (source / rel).read_bytes()
    files[target / MISSION_FILE] = run.sandbox.mission_text.encode()
    files[target / SANDBOX_FILE] = run.sandbox.sandbox_text.encode()
    changed = []
    for path, data in files.items():
        current = path.read_bytes() if path.is_file() else None
        if current != data:
            atomic_write_bytes(path, data, keep_mode=True)
            changed.append(str(path.relative_to(h.worktree)))
    if changed:
        message = f"autoresearch: materialize mission {run.mission_slug}"
        git.commit_all(h.worktree, message, pathspec=changed)


def _baseline(h: RunHandle) -> None:
    """Iteration 0: evaluate the worktree HEAD once and record the first kept state."""
    commit = git.head(h.worktree)
    it = _baseline_iteration(h.context, commit, [])
    record.start_evaluation(h.context, it)
    _record_baseline(h, it, commit, exists=True)


def _baseline_iteration(h: RunContext, commit: str, notes: list[str]) -> IterationRecord:
    return record.new_iteration(
        h,
        0,
        IterationKind.BASELINE,
        candidate_status=IterationKind.BASELINE,
        base_commit=commit,
        candidate_commit=commit,
        description="initial baseline evaluation",
        decision_notes=notes,
    )


def _record_baseline(
    h: RunHandle, it: IterationRecord, commit: str, exists: bool
) -> EvaluationRecord:
    """Evaluate `commit` (the worktree HEAD) and make it the run's baseline and kept state."""
    evaluation = record.evaluate(h, 0, commit=commit)
    decision, score = baseline_decision(evaluation.summary())
    readings: list[record.Reading] = [(Role.BASELINE, commit, evaluation)]
    if score is not None:
        # calibration (trust.md): the spread of repeated baseline readings decides whether
        # candidates need several readings; a failing extra reading is recorded, not used
        for _ in range(h.noise.baseline_readings - 1):
            readings.append((Role.BASELINE, commit, record.evaluate(h, 0, commit=commit)))
        scores = [
            r.score for _, _, r in readings if r.status == EvalStatus.PASS and r.score is not None
        ]
        score = mean_of(scores)  # the one estimate every view shows (estimates)
        decision = replace(decision, notes=(*decision.notes, calibration_note(h.noise, scores)))
    changes = record.RunChanges(baseline_commit=commit, last_kept_commit=commit).scored(score)
    record.commit_decision(h, it, decision, evaluation, changes, exists=exists, readings=readings)
    return evaluation


def _discard_half_built(h: RunHandle) -> None:
    """Undo a prepare that failed in this process: nothing half-built is left behind."""
    try:
        git.worktree_remove(h.repo.repo_root, h.worktree)
        git.delete_branch(h.repo.repo_root, h.run.branch_name)
        with h.journal.tx() as conn:
            runs.delete_run(conn, h.run_id)
        h.state.lock.release()
        shutil.rmtree(h.paths.root, ignore_errors=True)
    finally:
        h.close()


def rebaseline(h: RunHandle) -> StoredEvaluation | None:
    """Re-establish the baseline on the worktree HEAD before any session has run.

    The way out when the first baseline had no comparable score: fix the evaluator (commit
    the fix in the worktree), then rebaseline. Earlier baseline evaluations stay in the journal.
    """
    from autoresearch.supervisor.recovery import recover

    recover(h)
    if h.run.iteration != 0:
        raise RefusedError(
            f"run {h.run_id} already recorded {h.run.iteration} iterations; a baseline can "
            "only be re-run before the first one (stop this run and prepare a new one)"
        )
    check_reset_safety(h.worktree, h.dirt, h.run_id)
    old = iteration_records.get_iteration(h.journal, h.run_id, 0)
    commit = git.head(h.worktree)
    notes = [*(old.decision_notes if old else []), f"baseline re-run on {commit[:12]}"]
    it = _baseline_iteration(h.context, commit, notes)
    evaluation = _record_baseline(h, it, commit, exists=old is not None)
    sync.rebuild_views(h)
    sync.write_placeholder(h.context, h.run.last_kept_commit)
    return StoredEvaluation(evaluation.compact())

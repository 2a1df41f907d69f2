"""step: one decision per artifact, the git effects, the views, every validation message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sup_helpers import submit, submit_and_step

from autoresearch.errors import RefusedError
from autoresearch.supervisor.handle import RunHandle
from autoresearch.supervisor.step import step
from helpers import edit_and_commit, git, host_pid, pid_alive, write_artifact


def head(h: RunHandle) -> str:
    return git(h.worktree, "rev-parse", "HEAD")


def ledger(h: RunHandle) -> list[dict]:
    return json.loads(h.paths.ledger.read_text())["entries"]


def snapshot(h: RunHandle) -> dict:
    text = h.paths.instructions.read_text()
    block = text.split("Iteration state snapshot:\n```json\n", 1)[1].split("\n```", 1)[0]
    return json.loads(block)


def test_keep_then_discard_resets_to_the_kept_commit(run: RunHandle) -> None:
    kept = submit_and_step(run, {"value.txt": "5\n"}, description="five")
    assert (kept.decision, kept.keep, kept.last_kept_score) == ("keep", True, 5)
    kept_commit = head(run)
    assert kept.last_kept_commit == kept_commit

    worse = submit_and_step(run, {"value.txt": "3\n"}, description="three")
    assert (worse.decision, worse.decision_reason) == ("discard", "score did not improve")
    assert head(run) == kept_commit
    assert (run.worktree / "value.txt").read_text() == "5\n"
    assert snapshot(run)["previous_iteration_outcome"] == "discard:score did not improve"
    assert snapshot(run)["iteration"] == 3

    entries = ledger(run)
    assert [e["decision"] for e in entries] == ["baseline", "keep", "discard"]
    assert entries[2]["kept_commit"] == kept_commit
    assert entries[2]["notes"] == [
        "from the test session",
        "candidate discarded because evaluator score was not better than the kept baseline",
    ]
    rows = (run.worktree / "results.tsv").read_text().splitlines()
    assert rows[2].split("\t")[2:] == ["true", "5", "keep", "five"]
    assert rows[3].split("\t")[2:] == ["true", "3", "discard", "three"]
    manifest = json.loads(run.paths.manifest.read_text())
    assert manifest["iteration"] == 2 and manifest["last_kept_commit"] == kept_commit
    assert manifest["latest_candidate_commit"] == worse.candidate_commit
    # the processed artifact was replaced by the placeholder: stepping again is a noop
    assert json.loads(run.paths.candidate.read_text())["description"] == "not-yet-written"
    assert step(run).decision == "noop"


def test_noop_abort_and_terminal_run(run: RunHandle) -> None:
    noop = submit_and_step(run, status="noop", description="nothing")
    assert (noop.decision, noop.decision_reason, noop.run_status) == (
        "noop", "candidate reported noop", "running",
    )  # fmt: skip
    row = (run.worktree / "results.tsv").read_text().splitlines()[-1]
    assert row == f"1\t{run.run.last_kept_commit[:7]}\t\t\tnoop\tnothing"
    aborted = submit_and_step(run, status="abort", description="give up")
    assert (aborted.decision, aborted.run_status, aborted.stop_reason) == (
        "abort", "stopped", "candidate abort",
    )  # fmt: skip
    with pytest.raises(RefusedError, match="autoresearch_run_terminal:missions-demo-t1:stopped"):
        step(run)


def test_interrupted_clean_and_dirty(run: RunHandle) -> None:
    clean = submit_and_step(run, status="interrupted", description="ran out of time")
    assert (clean.decision, clean.decision_reason) == (
        "interrupted", "candidate session interrupted cleanly",
    )  # fmt: skip
    (run.worktree / "value.txt").write_text("9\n")  # uncommitted work
    dirty = submit_and_step(run, status="interrupted")
    assert dirty.decision == "error"
    assert (dirty.run_status, dirty.stop_reason) == (
        "failed", "interrupted dirty worktree requires operator intervention",
    )  # fmt: skip
    assert (run.worktree / "value.txt").read_text() == "9\n"  # nothing was reset


def test_interrupted_with_a_commit_saves_a_patch_and_resets(run: RunHandle) -> None:
    base = head(run)
    edit_and_commit(run.worktree, {"value.txt": "7\n"}, "half done")
    result = submit_and_step(run, status="interrupted")
    assert result.decision == "interrupted"
    assert head(run) == base
    patches = list(run.paths.logs.glob("*interrupted.patch"))
    assert len(patches) == 1 and "+7" in patches[0].read_text()
    git(run.worktree, "apply", str(patches[0]))
    assert (run.worktree / "value.txt").read_text() == "7\n"


@pytest.mark.parametrize(
    ("mode", "decision", "reason", "status"),
    [
        ("fail", "discard", "evaluator reported failure", "fail"),
        ("crash", "discard", "evaluator error", "error"),
        ("garbage", "discard", "evaluator error", "error"),
        ("noscore", "ambiguous", "evaluator pass without comparable score", "pass"),
    ],
)
def test_evaluator_outcomes_discard(
    run: RunHandle, mode: str, decision: str, reason: str, status: str
) -> None:
    base = head(run)
    result = submit_and_step(run, {"value.txt": "50\n", "mode.txt": mode + "\n"})
    assert (result.decision, result.decision_reason) == (decision, reason)
    assert result.evaluator is not None and result.evaluator.status == status
    assert head(run) == base and not (run.worktree / "mode.txt").exists()
    assert run.run.last_kept_score == 1.0


def test_evaluator_timeout_kills_the_group_and_discards(run: RunHandle) -> None:
    from dataclasses import replace

    from autoresearch.journal import children, runs

    with run.journal.tx() as conn:  # shorten the frozen timeout for this test
        runs.update_run(conn, run.run_id, evaluator=replace(run.run.evaluator, timeout_seconds=1))
    run.refresh()
    # the evaluator is a fixed fact of the run: a handle made anew sees the changed one
    result = submit_and_step(run.renewed(), {"value.txt": "50\n", "mode.txt": "hang\n"})
    assert result.decision == "discard" and result.decision_reason == "evaluator error"
    assert result.evaluator is not None and result.evaluator.timed_out is True
    pid = host_pid((run.worktree / ".autoresearch/evaluator.pid").read_text())
    assert not pid_alive(pid)
    assert children.children(run.journal, run.run_id) == []


def test_direction_lower(repo, tmp_path: Path) -> None:
    from autoresearch.supervisor.prepare import prepare
    from helpers import sandbox_text

    mission_dir = repo.mission("missions/low", sandbox=sandbox_text(extra="  direction: lower\n"))
    with prepare(mission_dir, run_tag="lo") as h:
        assert submit_and_step(h, {"value.txt": "0.5\n"}).decision == "keep"
        assert submit_and_step(h, {"value.txt": "0.7\n"}).decision == "discard"
        assert h.run.last_kept_score == 0.5


def test_pass_only_keeps_without_score(repo) -> None:
    from autoresearch.supervisor.prepare import prepare
    from helpers import sandbox_text

    mission_dir = repo.mission(
        "missions/po", sandbox=sandbox_text(extra="  keep_policy: pass_only\n")
    )
    with prepare(mission_dir, run_tag="po") as h:
        r = submit_and_step(h, {"value.txt": "0\n", "mode.txt": "noscore\n"})
        assert (r.decision, r.decision_reason) == (
            "keep", "pass_only keep policy accepted evaluator pass=true",
        )  # fmt: skip
        assert h.run.last_kept_score == 1.0  # a keep without score leaves it unchanged


VALIDATION_CASES = [
    ("missing", "autoresearch_candidate_missing:{candidate}"),
    ("{oops", "autoresearch candidate artifact must be valid JSON"),
    ("[]", "autoresearch candidate artifact must be a JSON object"),
    ({"status": "maybe"}, "autoresearch candidate artifact status must be candidate|noop|abort|interrupted"),
    ({"candidate_commit": 1}, "autoresearch candidate artifact candidate_commit must be string|null"),
    ({"base_commit": None}, "autoresearch candidate artifact base_commit is required"),
    ({"description": 3}, "autoresearch candidate artifact description is required"),
    ({"notes": [1]}, "autoresearch candidate artifact notes must be a string array"),
    ({"created_at": None}, "autoresearch candidate artifact created_at is required"),
    ({"base_commit": "nope"}, "candidate base_commit does not resolve in git: nope"),
    ({"base_commit": "HEAD~1"}, "candidate base_commit {parent} does not match last kept commit {kept}"),
    ({"candidate_commit": None}, "candidate status requires a non-null candidate_commit"),
    ({"candidate_commit": "zzz"}, "candidate_commit does not resolve in git: zzz"),
    ({"candidate_commit": "HEAD~1"}, "candidate_commit {parent} does not match worktree HEAD {kept}"),
]  # fmt: skip


def write_changed_artifact(run: RunHandle, change: object, message: str) -> str:
    """candidate.json as VALIDATION_CASES' `change` makes it; the message it should give."""
    kept = head(run)
    parent = git(run.worktree, "rev-parse", "HEAD~1")
    if change == "missing":
        run.paths.candidate.unlink()
    elif isinstance(change, str):
        write_artifact(run.paths.candidate, change)
    else:
        data = {
            "status": "candidate",
            "candidate_commit": kept,
            "base_commit": kept,
            "description": "",
            "notes": [],
            "created_at": "2026-01-01T00:00:00Z",
        }
        data.update(change)  # type: ignore[arg-type]
        write_artifact(run.paths.candidate, data)
    return message.format(candidate=run.paths.candidate, parent=parent, kept=kept)


@pytest.mark.parametrize(("change", "message"), VALIDATION_CASES)
def test_validation_errors_fail_the_run(run: RunHandle, change: object, message: str) -> None:
    expected = write_changed_artifact(run, change, message)
    result = step(run)
    assert (result.decision, result.run_status, result.stop_reason) == ("error", "failed", expected)
    entry = ledger(run)[-1]
    assert entry["decision"] == "error"
    assert f"validation_error:{expected}" in entry["notes"]
    if change == "missing" or isinstance(change, str) or change.get("description") == 3:
        assert entry["description"] == "candidate validation failed"
    row = (run.worktree / "results.tsv").read_text().splitlines()[-1]
    assert row.split("\t")[4] == "error"


# what the artifact alone gets wrong (issue 38); the others disagree with git
GIT_MESSAGES = {m for _, m in VALIDATION_CASES if m.startswith("candidate")} - {
    "candidate status requires a non-null candidate_commit"
}


@pytest.mark.parametrize(("change", "message"), VALIDATION_CASES)
def test_under_run_a_malformed_artifact_is_a_failed_session_not_the_end(
    run: RunHandle, change: object, message: str
) -> None:
    """The driver's step (`shape_fails_run=False`): the same row and note, the run still
    running; an artifact that disagrees with git (possibly tampering) still fails the run."""
    expected = write_changed_artifact(run, change, message)
    result = step(run, shape_fails_run=False)
    assert (result.decision, result.decision_reason) == ("error", expected)
    assert f"validation_error:{expected}" in ledger(run)[-1]["notes"]
    if message not in GIT_MESSAGES:
        assert (result.run_status, result.stop_reason) == ("running", None)
        assert result.invalid_artifact == expected
    else:
        assert (result.run_status, result.stop_reason) == ("failed", expected)
        assert result.invalid_artifact is None


def test_allowed_runtime_dirt_versus_blocking_dirt(run: RunHandle) -> None:
    base = head(run)
    (run.worktree / "run.log").write_text("log")
    (run.worktree / "pkg/__pycache__").mkdir(parents=True)
    (run.worktree / "pkg/__pycache__/m.pyc").write_text("x")
    (run.worktree / ".autoresearch").mkdir()
    (run.worktree / ".autoresearch/tmp").write_text("x")
    assert submit_and_step(run, {"value.txt": "0\n"}).decision == "discard"
    assert head(run) == base

    submit(run, {"value.txt": "0\n"})
    (run.worktree / "notes.txt").write_text("unsaved work")
    with pytest.raises(RefusedError) as info:
        step(run)
    assert str(info.value).startswith(
        f"autoresearch_reset_requires_clean_worktree:{run.worktree}:?? notes.txt – "
    )
    assert (run.worktree / "notes.txt").read_text() == "unsaved work"
    # nothing was recorded: the evaluation is rolled back and the artifact waits
    assert run.refresh().iteration == 1
    assert [e["decision"] for e in ledger(run)] == ["baseline", "discard"]
    assert json.loads(run.paths.candidate.read_text())["description"] == "a change"
    (run.worktree / "notes.txt").unlink()
    assert step(run).decision == "discard"
    assert head(run) == base
    assert [e["decision"] for e in ledger(run)] == ["baseline", "discard", "discard"]
    from autoresearch.supervisor.recovery import recover

    assert recover(run) == []


def test_tracked_modification_blocks(run: RunHandle) -> None:
    from autoresearch.supervisor.safety import check_reset_safety

    (run.worktree / "value.txt").write_text("changed\n")
    with pytest.raises(RefusedError, match=r":\s?M value.txt – nothing was reset; commit or"):
        check_reset_safety(run.worktree, run.dirt)


def test_ledger_appends_match_a_full_rebuild(run: RunHandle) -> None:
    from autoresearch.supervisor.sync import rebuild_views

    for value in ("2", "1", "3"):
        submit_and_step(run, {"value.txt": value + "\n"})
    appended = run.paths.ledger.read_text()
    tsv = (run.worktree / "results.tsv").read_text()
    rebuild_views(run)
    rebuilt = run.paths.ledger.read_text()
    strip = lambda t: t.rsplit('"updated_at"', 1)[0]
    assert strip(appended) == strip(rebuilt)
    assert (run.worktree / "results.tsv").read_text() == tsv
    assert len(json.loads(rebuilt)["entries"]) == 4


@pytest.mark.parametrize("how", ["base itself", "empty commit", "same tree"])
def test_a_candidate_identical_to_its_base_is_a_noop_not_an_evaluation(
    run: RunHandle, how: str
) -> None:
    base = run.run.last_kept_commit or ""
    commit = base
    if how == "empty commit":
        git(run.worktree, "commit", "-q", "--allow-empty", "-m", "nothing")
        commit = git(run.worktree, "rev-parse", "HEAD")
    elif how == "same tree":  # a change and its revert
        edit_and_commit(run.worktree, {"value.txt": "9\n"}, "try")
        git(run.worktree, "revert", "--no-edit", "HEAD")
        commit = git(run.worktree, "rev-parse", "HEAD")
    result = submit_and_step(run, candidate_commit=commit, description="claims a change")
    assert (result.decision, result.decision_reason, result.evaluator) == (
        "noop", "candidate made no change", None,
    )  # fmt: skip
    assert git(run.worktree, "rev-parse", "HEAD") == base  # nothing unevaluated stays
    assert run.run.last_kept_commit == base

"""prepare: branch, worktree, mission, links, excludes, baseline and every run file of §5."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from autoresearch.errors import ContractError, RefusedError
from autoresearch.evaluate import EvaluationRecord
from autoresearch.supervisor.executor import EvaluationTask
from autoresearch.supervisor.handle import RunHandle
from autoresearch.supervisor.lifecycle import stop
from autoresearch.supervisor.prepare import prepare, rebaseline
from helpers import Repo, git, sandbox_text

MANIFEST_KEYS = {
    "schema_version", "run_id", "run_tag", "mission_dir", "mission_file", "sandbox_file",
    "repo_root", "worktree_path", "mission_slug", "branch_name", "baseline_commit",
    "last_kept_commit", "last_kept_score", "latest_candidate_commit", "results_file",
    "instructions_file", "manifest_file", "ledger_file", "latest_evaluator_file",
    "candidate_file", "evaluator", "keep_policy", "status", "stop_reason", "iteration",
    "created_at", "updated_at", "completed_at",
}  # fmt: skip
LEDGER_ENTRY_KEYS = {
    "iteration", "kind", "decision", "decision_reason", "candidate_status", "base_commit",
    "candidate_commit", "kept_commit", "keep_policy", "evaluator", "created_at", "notes",
    "description",
}  # fmt: skip
POINTER_KEYS = {
    "schema_version", "active", "run_id", "mission_slug", "repo_root", "worktree_path",
    "status", "pid", "host", "updated_at",
}  # fmt: skip


def test_prepare_writes_every_file_and_key(repo: Repo, run: RunHandle) -> None:
    root = repo.root
    run_dir = root / ".autoresearch/runs/missions-demo-t1"
    worktree = root / ".autoresearch/worktrees/missions-demo-t1"
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert set(manifest) >= MANIFEST_KEYS
    assert manifest["run_id"] == "missions-demo-t1"
    assert manifest["run_tag"] == "T1"
    assert manifest["branch_name"] == "autoresearch/missions-demo/t1"
    assert manifest["worktree_path"] == str(worktree)
    assert manifest["mission_dir"] == str(worktree / "missions/demo")
    assert manifest["status"] == "running" and manifest["iteration"] == 0
    assert manifest["last_kept_score"] == 1.0
    assert len(manifest["last_kept_commit"]) == 40
    assert manifest["baseline_commit"] == manifest["last_kept_commit"]
    assert manifest["evaluator"]["command"] == "python3 scripts/eval.py"
    assert manifest["keep_policy"] == "score_improvement"
    for key in ("results_file", "instructions_file", "ledger_file", "candidate_file"):
        assert Path(manifest[key]).is_absolute() and Path(manifest[key]).exists(), key

    ledger = json.loads((run_dir / "iteration-ledger.json").read_text())
    assert set(ledger) == {"schema_version", "run_id", "created_at", "updated_at", "entries"}
    (entry,) = ledger["entries"]
    assert set(entry) >= LEDGER_ENTRY_KEYS
    assert (entry["kind"], entry["decision"], entry["decision_reason"]) == (
        "baseline", "baseline", "baseline established",
    )  # fmt: skip
    assert entry["candidate_status"] == "baseline"
    assert entry["description"] == "initial baseline evaluation"
    assert entry["evaluator"]["status"] == "pass" and "stdout" not in entry["evaluator"]

    latest = json.loads((run_dir / "latest-evaluator-result.json").read_text())
    assert latest["score"] == 1 and "progress line" in latest["stdout"]
    assert Path(latest["log_file"]).exists()

    candidate = json.loads((run_dir / "candidate.json").read_text())
    assert candidate["status"] == "noop" and candidate["description"] == "not-yet-written"
    assert candidate["base_commit"] == manifest["last_kept_commit"]

    pointer = json.loads((root / ".autoresearch/active-run.json").read_text())
    assert set(pointer) == POINTER_KEYS
    assert pointer["active"] is True and pointer["run_id"] == "missions-demo-t1"

    tsv = (worktree / "results.tsv").read_text().splitlines()
    assert tsv[0] == "iteration\tcommit\tpass\tscore\tstatus\tdescription"
    assert (
        tsv[1]
        == f"0\t{manifest['baseline_commit'][:7]}\ttrue\t1\tbaseline\tinitial baseline evaluation"
    )
    assert (run_dir / "instructions.md").read_text().startswith("# autoresearch")
    assert (run_dir / "logs").is_dir()


def test_git_state_after_prepare(repo: Repo, run: RunHandle) -> None:
    assert git(run.worktree, "rev-parse", "--abbrev-ref", "HEAD") == "autoresearch/missions-demo/t1"
    # .autoresearch/ and results.tsv are excluded: both trees look clean
    assert git(repo.root, "status", "--porcelain", "--untracked-files=all") == ""
    assert git(run.worktree, "status", "--porcelain", "--untracked-files=all") == ""
    # the mission was already committed identically: no materialize commit
    assert "materialize" not in git(run.worktree, "log", "--format=%s")


def test_uncommitted_mission_is_materialized_with_a_commit(repo: Repo) -> None:
    mission_dir = repo.mission("missions/fresh", commit=False)
    with prepare(mission_dir, run_tag="m1") as h:
        subjects = git(h.worktree, "log", "--format=%s").splitlines()
        assert subjects[0] == "autoresearch: materialize mission missions-fresh"
        assert (h.worktree / "missions/fresh/sandbox.md").read_text() == sandbox_text()
        assert h.run.baseline_commit == git(h.worktree, "rev-parse", "HEAD")
    # the user's checkout is untouched
    assert git(repo.root, "status", "--porcelain").splitlines() == ["?? missions/"]


def test_shared_paths_are_linked_and_excluded(repo: Repo) -> None:
    repo.write(".gitignore", "__pycache__/\n.venv/\ndata/\n")
    (repo.root / ".venv").mkdir()
    (repo.root / "data").mkdir()
    (repo.root / "data/big.bin").write_text("x")
    sb = sandbox_text(extra="worktree:\n  link: [data]\n")
    mission_dir = repo.mission("missions/linked", sandbox=sb)
    with prepare(mission_dir, run_tag="l1") as h:
        assert (h.worktree / ".venv").is_symlink()
        assert (h.worktree / "data").resolve() == (repo.root / "data").resolve()
        assert git(h.worktree, "status", "--porcelain", "--untracked-files=all") == ""


def test_second_prepare_is_refused_while_active_and_allowed_after(
    repo: Repo, mission_dir: Path
) -> None:
    first = prepare(mission_dir, run_tag="a1")
    first.close()
    with pytest.raises(RefusedError) as info:
        prepare(mission_dir, run_tag="a2")
    assert str(info.value).split()[0] == "autoresearch_active_run_exists:missions-demo-a1"
    assert not (repo.root / ".autoresearch/worktrees/missions-demo-a2").exists()
    stop(repo.root, "missions-demo-a1")
    with prepare(mission_dir, run_tag="a2") as second:
        assert second.run_id == "missions-demo-a2"


def test_same_second_launches_get_distinct_tags(repo: Repo, mission_dir: Path) -> None:
    ids = []
    for _ in range(3):
        with prepare(mission_dir) as h:
            ids.append(h.run_id)
        stop(repo.root, ids[-1])
    assert len(set(ids)) == 3
    with pytest.raises(RefusedError, match="run tag .* is already used"):
        prepare(mission_dir, run_tag=ids[0].rsplit("-", 1)[-1].upper())


def test_invalid_run_tag(mission_dir: Path) -> None:
    with pytest.raises(ContractError, match="invalid --run-tag"):
        prepare(mission_dir, run_tag="a/b")


def test_baseline_error_is_recorded_and_rebaseline_fixes_it(repo: Repo) -> None:
    repo.write("mode.txt", "crash\n")
    repo.commit("broken evaluator")
    mission_dir = repo.mission()
    with prepare(mission_dir, run_tag="b1") as h:
        assert h.run.last_kept_score is None
        ledger = json.loads(h.paths.ledger.read_text())
        entry = ledger["entries"][0]
        assert (entry["decision"], entry["decision_reason"]) == (
            "error",
            "baseline evaluator error",
        )
        # fix the evaluator in the worktree, then re-run the baseline
        (h.worktree / "mode.txt").write_text("ok\n")
        git(h.worktree, "commit", "-qam", "fix evaluator")
        record = rebaseline(h)
        assert record is not None and record.status == "pass"
        assert h.run.last_kept_score == 1.0
        assert h.run.last_kept_commit == git(h.worktree, "rev-parse", "HEAD")
        entry = json.loads(h.paths.ledger.read_text())["entries"][0]
        assert entry["decision"] == "baseline"
        assert entry["notes"][-2].startswith("baseline re-run on ")
        assert entry["notes"][-1].startswith("baseline measured 3 times: 1; readings identical")


def test_failed_prepare_leaves_nothing_behind(repo: Repo) -> None:
    seen: list[Path] = []

    def explode(task: EvaluationTask, should_cancel: object) -> EvaluationRecord:
        seen.append(task.tree)  # the baseline's reading: the worktree is built by now
        raise RuntimeError("disk on fire")

    mission_dir = repo.mission()
    with pytest.raises(RuntimeError, match="disk on fire"):
        prepare(mission_dir, run_tag="x1", measure_with=explode)
    assert seen == [repo.root / ".autoresearch/worktrees/missions-demo-x1"]
    assert not (repo.root / ".autoresearch/worktrees/missions-demo-x1").exists()
    assert not (repo.root / ".autoresearch/runs/missions-demo-x1").exists()
    assert "autoresearch/missions-demo/x1" not in git(repo.root, "branch", "--list")
    with prepare(mission_dir, run_tag="x1") as h:  # the tag is free again
        assert h.run_id == "missions-demo-x1"


def test_concurrent_prepares_have_one_winner(repo: Repo, mission_dir: Path) -> None:
    results: list[str] = []

    def attempt(i: int) -> None:
        try:
            prepare(mission_dir, run_tag=f"c{i}").close()
            results.append(f"won:missions-demo-c{i}")
        except RefusedError as exc:
            results.append(str(exc))

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [r for r in results if r.startswith("won:")]
    assert len(winners) == 1
    winner = winners[0].removeprefix("won:")
    assert sorted(r.split()[0] for r in results) == sorted(
        [winners[0]] + [f"autoresearch_active_run_exists:{winner}"] * 5
    )


MANIFEST_ORDER = [
    "schema_version", "run_id", "run_tag", "mission_dir", "mission_file", "sandbox_file",
    "repo_root", "worktree_path", "mission_slug", "branch_name", "baseline_commit",
    "last_kept_commit", "last_kept_score", "last_kept_interval", "latest_candidate_commit",
    "results_file", "instructions_file", "manifest_file", "ledger_file", "latest_evaluator_file",
    "candidate_file", "evaluator", "keep_policy", "status", "stop_reason", "stop_note",
    "iteration", "created_at", "updated_at", "completed_at", "source_mission_dir",
    "journal_file", "logs_dir", "agent",
]  # fmt: skip


def test_the_manifest_record_writes_every_key_in_its_order(run: RunHandle) -> None:
    """The doors get a typed RunManifest; manifest.json, `prepare --json` and MCP's
    run_status are its to_dict: no key lost, renamed or moved on the way."""
    from autoresearch.supervisor.estimates import manifest

    record = manifest(run.journal, run.run, run.repo)
    data = record.to_dict()
    assert list(data) == MANIFEST_ORDER
    written = json.loads(run.paths.manifest.read_text())
    assert list(written) == MANIFEST_ORDER and written == json.loads(json.dumps(data))
    assert data["instructions_file"] == str(record.paths.instructions)
    assert data["evaluator"] == record.run.evaluator.to_dict()
    kept = record.kept_interval
    assert data["last_kept_interval"] == (None if kept is None else kept.to_dict())

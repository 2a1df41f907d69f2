"""Sealed harness paths and the checks gate through prepare and step (real repositories)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from sup_helpers import submit, submit_and_step

from autoresearch.decide import REASON_CHECKS_FAILED, touched_sealed
from autoresearch.errors import ContractError, RefusedError
from autoresearch.journal import iteration_records
from autoresearch.supervisor.handle import RunHandle
from autoresearch.supervisor.prepare import prepare
from autoresearch.supervisor.step import step
from helpers import Repo, cli, edit_and_commit, sandbox_text


def evaluations(h: RunHandle, iteration: int) -> int:
    conn = sqlite3.connect(h.repo.journal)
    try:
        row = conn.execute(
            "SELECT count(*) FROM evaluations WHERE run_id = ? AND iteration = ?",
            (h.run_id, iteration),
        ).fetchone()
        return int(row[0])
    finally:
        conn.close()


@pytest.mark.parametrize(
    ("changed", "sealed", "hit"),
    [
        (["src/a.py"], ["scripts/eval.py"], None),
        (["scripts/eval.py"], ["scripts/eval.py"], "scripts/eval.py"),
        (["data/heldout/x.csv", "src/a.py"], ["data/heldout"], "data/heldout/x.csv"),
        (["data/heldout-extra.csv"], ["data/heldout"], None),  # a prefix, not a parent
        (["scripts"], ["scripts/eval.py"], "scripts"),  # a deleted folder holding one
        ([], ["x"], None),
    ],
)
def test_touched_sealed(changed: list[str], sealed: list[str], hit: str | None) -> None:
    assert touched_sealed(changed, sealed) == hit


@pytest.fixture
def sealed_run(repo: Repo) -> RunHandle:
    sandbox = sandbox_text(
        'python3 "$AUTORESEARCH_SEALED_DIR/scripts/eval.py"',
        extra="sealed: [scripts/eval.py]\n",
    )
    return prepare(repo.mission(sandbox=sandbox), run_tag="SEAL")


def test_a_candidate_that_touches_a_sealed_file_is_discarded_and_never_evaluated(
    sealed_run: RunHandle,
) -> None:
    h = sealed_run
    # the baseline ran through $AUTORESEARCH_SEALED_DIR: the sealed copy outside the worktree
    assert h.run.last_kept_score == 1.0
    copy = h.paths.sealed / "scripts/eval.py"
    assert copy.read_text() == (h.worktree / "scripts/eval.py").read_text()
    assert not str(copy).startswith(str(h.worktree))
    digests = json.loads((h.paths.scratch / "sealed.json").read_text())
    assert set(digests) == {"scripts/eval.py"}

    cheat = 'print(\'{"pass": true, "score": 1000}\')\n'
    result = submit_and_step(h, {"scripts/eval.py": cheat, "value.txt": "2\n"})
    assert (result.decision, result.decision_reason) == (
        "discard",
        "harness changed: scripts/eval.py",
    )
    # trust.md's code for the refusal, beside the reason text, where a script finds
    # `validation_error:<message>` too: the step's notes and the ledger entry's
    assert "harness_changed:scripts/eval.py" in result.notes
    entry = json.loads(h.paths.ledger.read_text())["entries"][-1]
    assert "harness_changed:scripts/eval.py" in entry["notes"]
    assert result.evaluator is None and evaluations(h, 1) == 0
    assert (h.worktree / "scripts/eval.py").read_text() != cheat  # reset to the kept commit

    honest = submit_and_step(h, {"value.txt": "5\n"})
    assert (honest.decision, honest.last_kept_score) == ("keep", 5)
    h.close()


def test_failed_checks_keep_nothing_and_keep_their_log(repo: Repo) -> None:
    repo.write(
        "scripts/check.sh", 'test "$(cat value.txt)" != 7 || { echo "seven is banned"; exit 1; }\n'
    )
    sandbox = sandbox_text(extra="checks: sh scripts/check.sh\n")
    with prepare(repo.mission(sandbox=sandbox), run_tag="CHK") as h:
        banned = submit_and_step(h, {"value.txt": "7\n"})
        assert (banned.decision, banned.decision_reason) == ("discard", REASON_CHECKS_FAILED)
        assert h.run.last_kept_score == 1.0
        log = h.paths.checks_log(1)
        assert "seven is banned" in log.read_text()
        assert any(str(log) in note for note in banned.notes)
        fine = submit_and_step(h, {"value.txt": "6\n"})
        assert (fine.decision, fine.last_kept_score) == ("keep", 6)
        worse = submit_and_step(h, {"value.txt": "2\n"})
        assert worse.decision == "discard" and not h.paths.checks_log(3).exists()


def test_the_sealed_copy_is_out_of_the_agents_reach_and_verified_before_use(
    sealed_run: RunHandle,
) -> None:
    """Agent back-ends may write the run folder (candidate.json); the copy is not there, and a
    copy changed by an agent without a sandbox is refused, never used to measure."""
    h = sealed_run
    assert not h.paths.sealed.is_relative_to(h.paths.root)
    assert not h.paths.sealed.is_relative_to(h.worktree)
    (h.paths.sealed / "scripts/eval.py").write_text('print(\'{"pass": true, "score": 1000}\')\n')
    with pytest.raises(ContractError, match="sealed harness copy changed since prepare"):
        submit_and_step(h, {"value.txt": "2\n"})
    assert evaluations(h, 1) == 0
    h.close()


CHEAT = 'print(\'{"pass": true, "score": 1000}\')\n'


def test_step_alone_refuses_an_uncommitted_sealed_edit_and_resets_nothing(
    sealed_run: RunHandle,
) -> None:
    """Outside `run` nobody saved the session's leftovers: the candidate touches the harness,
    its discard would reset the edit away, so the reset-safety refusal comes first."""
    h = sealed_run
    commit = edit_and_commit(h.worktree, {"value.txt": "2\n"}, "a change")
    (h.worktree / "scripts/eval.py").write_text(CHEAT)
    submit(h, None, candidate_commit=commit)
    with pytest.raises(RefusedError, match="autoresearch_reset_requires_clean_worktree:.*eval.py"):
        step(h)
    assert (h.worktree / "scripts/eval.py").read_text() == CHEAT and evaluations(h, 1) == 0
    assert iteration_records.get_iteration(h.journal, h.run_id, 1) is None  # nothing recorded
    h.close()


AGENT = """set -e
cd "$AUTORESEARCH_WORKTREE"
echo 2 > value.txt
git commit -qam two
{uncommitted}
printf '{{"status":"candidate","candidate_commit":"%s","base_commit":"%s","description":"d",\
"notes":[],"created_at":"2026-01-01T00:00:00Z"}}' "$(git rev-parse HEAD)" \
"$AUTORESEARCH_BASE_COMMIT" > "$AUTORESEARCH_CANDIDATE_FILE"
"""


@pytest.mark.parametrize(
    "uncommitted",
    [f"cat > scripts/eval.py <<'EOF'\n{CHEAT}EOF", "echo x > scripts/new.py"],
    ids=["tracked", "untracked"],
)
def test_under_run_uncommitted_sealed_edits_are_saved_and_dropped_before_judging(
    repo: Repo, tmp_path: Path, uncommitted: str
) -> None:
    """What docs/search-and-noise.md says of a sealed path: `run` saves what a session left uncommitted as a
    patch and judges the candidate on its commits alone; the harness edit is never measured
    and does not discard the candidate (a committed one would: harness changed)."""
    sandbox = sandbox_text(
        'python3 "$AUTORESEARCH_SEALED_DIR/scripts/eval.py"',
        extra="sealed: [scripts]\n",
        unboxed=True,  # the agent's script is in tmp_path, outside the repository
    )
    mission = repo.mission(sandbox=sandbox)
    agent = tmp_path / "agent.sh"
    agent.write_text(AGENT.format(uncommitted=uncommitted))
    done = cli(
        "run", str(mission), "--agent", f"cmd:sh {agent}", "--max-iterations", "1", "--json",
        cwd=repo.root,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    entry = json.loads(Path(summary["ledger_file"]).read_text())["entries"][1]
    assert (entry["decision"], entry["evaluator"]["score"]) == ("keep", 2)
    assert "uncommitted changes were not evaluated (saved above)" in entry["notes"]
    patch = next(repo.root.glob(".autoresearch/runs/*/logs/iteration-0001-uncommitted.patch"))
    assert "scripts/" in patch.read_text()
    worktree = Path(summary["worktree_path"])
    assert (worktree / "scripts/eval.py").read_text() != CHEAT
    assert not (worktree / "scripts/new.py").exists()

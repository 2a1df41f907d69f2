"""Novelty (issue 33): a candidate whose tree an earlier iteration measured is never measured
again: `discard`, reason `duplicate of iteration <N>`, no evaluator run, the tree reset."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

from sup_helpers import submit_and_step

from autoresearch import git as autoresearch_git
from autoresearch.journal import iteration_records, runs
from autoresearch.supervisor.handle import RunHandle
from autoresearch.supervisor.step import unmeasured_decision
from helpers import Repo, cli, edit_and_commit, git, sandbox_text

CMD_AGENT = f"cmd:{sys.executable} {Path(__file__).parents[1] / 'agents/fakes/cmd_agent.py'}"
RUN_ID = "missions-demo-t1"


def evaluated(h: RunHandle, iteration: int) -> bool:
    """Whether the evaluator ran for `iteration` (it leaves a log per reading)."""
    return h.paths.evaluator_log(iteration).exists()


def test_a_tree_measured_before_is_discarded_unmeasured(run: RunHandle) -> None:
    kept = submit_and_step(run, {"value.txt": "5\n"}, description="five")
    worse = submit_and_step(run, {"value.txt": "3\n"}, description="three")
    assert (kept.decision, worse.decision) == ("keep", "discard")
    again = submit_and_step(run, {"value.txt": "3\n"}, description="three again")
    assert (again.decision, again.decision_reason) == ("discard", "duplicate of iteration 2")
    assert again.evaluator is None and not evaluated(run, 3)
    assert git(run.worktree, "rev-parse", "HEAD") == kept.last_kept_commit  # reset as a discard
    assert (run.worktree / "value.txt").read_text() == "5\n"
    # a duplicate is not itself a measured tree: the earliest measurement stays the one named
    thrice = submit_and_step(run, {"value.txt": "3\n"})
    assert thrice.decision_reason == "duplicate of iteration 2"
    different = submit_and_step(run, {"value.txt": "4\n"})
    assert different.decision_reason != "duplicate of iteration 2" and evaluated(run, 5)


def test_a_once_kept_tree_and_the_baseline_are_duplicates(run: RunHandle) -> None:
    submit_and_step(run, {"value.txt": "5\n"})
    submit_and_step(run, {"value.txt": "6\n"})
    back = submit_and_step(run, {"value.txt": "5\n"})
    assert (back.decision, back.decision_reason) == ("discard", "duplicate of iteration 1")
    baseline = submit_and_step(run, {"value.txt": "1\n"})
    assert baseline.decision_reason == "duplicate of iteration 0"
    assert not evaluated(run, 3) and not evaluated(run, 4)
    # the kept tree itself is still `candidate made no change`, as before
    same = submit_and_step(run, {"notes.txt": "x\n"})
    assert same.decision == "discard"  # a new file: a new tree, measured
    assert evaluated(run, 5)


def test_the_rule_holds_for_rows_older_than_the_tree_column(run: RunHandle) -> None:
    submit_and_step(run, {"value.txt": "5\n"})
    submit_and_step(run, {"value.txt": "3\n"})
    # as a journal written before the column was added: no tree known for any row, and a
    # row whose commit no longer resolves (gc'd after `clean`)
    with run.journal.tx() as conn:
        conn.execute("UPDATE iterations SET candidate_tree = NULL")
        conn.execute("UPDATE iterations SET candidate_commit = 'f00d' WHERE iteration = 1")
    assert len(runs.measured_without_tree(run.journal, run.run_id, 10)) == 3
    again = submit_and_step(run, {"value.txt": "3\n"})
    assert again.decision_reason == "duplicate of iteration 2"
    # looked up once: every measured row now has its tree ('' for the unresolvable one)
    assert runs.measured_without_tree(run.journal, run.run_id, 10) == []
    trees = run.journal.rows("SELECT iteration, candidate_tree FROM iterations ORDER BY 1")
    assert trees[1][1] == "" and len(trees[2][1]) >= 40


def _counting_mission(repo: Repo, count: Path) -> None:
    """The demo mission whose evaluator appends the value it measures to `count`."""
    command = f'"cat value.txt >> {count} && python3 scripts/eval.py"'
    repo.mission(sandbox=sandbox_text(command=command, unboxed=True))  # `count` is outside


def test_a_run_never_measures_a_tree_twice(repo: Repo, tmp_path: Path) -> None:
    """A `cmd:` agent proposes the same worse tree twice (a discard resets value.txt, so
    `worse` writes the same value again): the second is a duplicate the evaluator never saw."""
    count = tmp_path / "evaluations.txt"
    _counting_mission(repo, count)
    done = cli(
        "run", "missions/demo", "--agent", CMD_AGENT, "--run-tag", "T1", "--json",
        "--max-iterations", "3", cwd=repo.root, env={"FAKE_PLAN": "worse,worse,improve"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    shown = json.loads(cli("status", RUN_ID, "--json", cwd=repo.root).stdout)
    decisions = [(it["decision"], it["decision_reason"]) for it in shown["iterations"][1:]]
    assert decisions[1] == ("discard", "duplicate of iteration 1")
    assert decisions[0][0] == "discard" and decisions[2][0] == "keep"
    assert shown["iterations"][2]["evaluator"] is None
    # the baseline's readings, iteration 1's, iteration 3's: the duplicate was never measured
    measured = count.read_text().splitlines()
    assert measured.count("0.5") == 1 and measured[-1] == "2", measured
    # the live line and status say why the candidate was discarded
    (row,) = [line for line in done.stderr.splitlines() if line.startswith("    2  ")]
    assert "discard (duplicate of iteration 1)" in row, done.stderr
    text = cli("status", RUN_ID, cwd=repo.root).stdout
    assert "duplicate of iteration 1" in text, text


def test_trees_of_several_commits_in_one_call(repo: Repo) -> None:
    first = repo.git("rev-parse", "HEAD")
    repo.git("commit", "-q", "--allow-empty", "-m", "empty")
    empty = repo.git("rev-parse", "HEAD")
    tree = repo.git("rev-parse", "HEAD^{tree}")
    assert autoresearch_git.trees(repo.root, [first, empty, "f00d", ""]) == [tree, tree, None, None]
    assert autoresearch_git.trees(repo.root, []) == []


def test_the_instructions_list_what_was_measured_newest_first(run: RunHandle) -> None:
    submit_and_step(run, {"value.txt": "5\n"}, description="five")
    submit_and_step(run, {"value.txt": "3\n"}, description="three\nover two lines")
    submit_and_step(run, {"value.txt": "3\n"}, description="three again")  # not measured
    text = run.paths.instructions.read_text()
    section = text.split("Already tried (the last 2 measured candidates, newest first;", 1)[1]
    assert "`duplicate of iteration N`" in section.splitlines()[0]
    assert section.splitlines()[1:3] == [
        "- iteration 2: discard (score did not improve; score 3): three over two lines",
        "- iteration 1: keep (score improved over last kept score; score 5): five",
    ]
    assert "three again" not in section
    # bounded by the query: only the newest `limit` measured iterations are read
    newest = iteration_records.measured_iterations(run.journal, run.run_id, 1)
    assert [it.iteration for it in newest] == [2]


def test_a_run_without_measured_candidates_lists_none(run: RunHandle) -> None:
    assert "Already tried" not in run.paths.instructions.read_text()


def test_a_kill_between_record_and_apply_keeps_the_rule(repo: Repo, tmp_path: Path) -> None:
    """The driver dies right after the duplicate's decision is committed (the third decision:
    the baseline, iteration 1, the duplicate): resume applies its reset and goes on."""
    count = tmp_path / "evaluations.txt"
    _counting_mission(repo, count)
    env = {"FAKE_PLAN": "worse,worse,improve"}
    done = cli(
        "run", "missions/demo", "--agent", CMD_AGENT, "--run-tag", "T1", "--json",
        "--max-iterations", "3", cwd=repo.root,
        env={**env, "AUTORESEARCH_FAILPOINTS": "step.after_decided@3"},
    )  # fmt: skip
    assert done.returncode == -signal.SIGKILL, done.stderr
    done = cli("resume", RUN_ID, "--json", cwd=repo.root, env=env)
    assert done.returncode == 0, done.stderr
    shown = json.loads(cli("status", RUN_ID, "--json", cwd=repo.root).stdout)
    assert [(it["decision"], it["decision_reason"]) for it in shown["iterations"][1:3]] == [
        ("discard", "score did not improve"),
        ("discard", "duplicate of iteration 1"),
    ]
    assert shown["iterations"][3]["decision"] == "keep" and shown["status"] == "completed"
    measured = count.read_text().splitlines()
    assert measured.count("0.5") == 1 and measured[-1] == "2", measured


def test_a_lane_can_ask_before_it_spends_a_reading(run: RunHandle) -> None:
    """What step decides without a reading, asked for a commit not yet judged (the lanes'
    check before they measure)."""
    submit_and_step(run, {"value.txt": "0\n"})
    again = edit_and_commit(run.worktree, {"value.txt": "0\n", "x.txt": ""}, "again")
    git(run.worktree, "rm", "-q", "x.txt")
    git(run.worktree, "commit", "-q", "-m", "same tree as iteration 1")
    same = git(run.worktree, "rev-parse", "HEAD")
    found = unmeasured_decision(run.context, run.run.last_kept_commit or "", same)
    assert found.decision is not None and found.decision.reason == "duplicate of iteration 1"
    assert (
        unmeasured_decision(run.context, run.run.last_kept_commit or "", again).decision is None
    )  # a new tree: measured
    kept = unmeasured_decision(
        run.context, run.run.last_kept_commit or "", run.run.last_kept_commit or ""
    )
    assert kept.decision is not None and kept.decision.reason == "candidate made no change"

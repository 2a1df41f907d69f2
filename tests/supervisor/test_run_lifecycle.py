"""A new user's first day: stop, continue, clean; runs nobody drives; honest summaries."""

from __future__ import annotations

import json
import re
import sqlite3
import sys
from pathlib import Path

import pytest

from autoresearch.decide import IterationLimit
from autoresearch.errors import ContractError
from helpers import Repo, cli, git

CMD_AGENT = f"cmd:{sys.executable} {Path(__file__).parents[1] / 'agents/fakes/cmd_agent.py'}"
RUN_ID = "missions-demo-t1"


def run(repo: Repo, plan: str, *extra: str) -> object:
    return cli(
        "run", "missions/demo", "--agent", CMD_AGENT, "--run-tag", "T1", "--json", *extra,
        cwd=repo.root, env={"FAKE_PLAN": plan},
    )  # fmt: skip


def status(repo: Repo, *extra: str) -> dict:
    done = cli("status", RUN_ID, "--json", *extra, cwd=repo.root)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def worktree(repo: Repo) -> Path:
    return repo.root / ".autoresearch/worktrees" / RUN_ID


@pytest.mark.parametrize(
    ("text", "done", "total"),
    [("12", 10, 12), ("+5", 10, 15), (" +0 ", 3, 3), ("0", 7, 0)],
)
def test_iteration_limit_total_or_relative(text: str, done: int, total: int) -> None:
    assert IterationLimit.parse(text).total(done) == total


@pytest.mark.parametrize("text", ["-1", "ten", "+", "1.5", ""])
def test_iteration_limit_rejects_garbage(text: str) -> None:
    with pytest.raises(ContractError, match="--max-iterations must be N"):
        IterationLimit.parse(text)


def test_continue_a_completed_run_with_more_iterations(repo: Repo, mission_dir: Path) -> None:
    done = run(repo, "improve,worse,improve,improve", "--max-iterations", "2")
    assert done.returncode == 0, done.stderr
    branch_head = git(repo.root, "rev-parse", "autoresearch/missions-demo/t1")
    # a total that leaves no room is refused before anything changes
    done = cli("continue", RUN_ID, "--max-iterations", "2", cwd=repo.root)
    assert done.returncode == 2
    assert "use --max-iterations +N for N more" in done.stderr
    assert status(repo)["status"] == "completed"
    done = cli("continue", RUN_ID, "--max-iterations", "+2", "--json", cwd=repo.root,
               env={"FAKE_PLAN": "improve,worse,improve,improve"})  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert (out["loop"]["status"], out["loop"]["stop_reason"]) == (
        "completed", "max iterations reached (4)",
    )  # fmt: skip
    assert "continued the completed run (it ended: max iterations reached (2))" in done.stderr
    details = status(repo)
    assert [it["decision"] for it in details["iterations"]] == [
        "baseline", "keep", "discard", "keep", "keep",
    ]  # fmt: skip
    assert details["branch_name"] == "autoresearch/missions-demo/t1"
    # same branch, continued from where it was: the earlier head is an ancestor
    git(repo.root, "merge-base", "--is-ancestor", branch_head, "autoresearch/missions-demo/t1")
    assert details["manifest"]["iteration"] == 4


def test_stop_then_continue_counts_noops_afresh(repo: Repo, mission_dir: Path) -> None:
    done = run(repo, "noop,noop,improve", "--max-noops", "2")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["stop_reason"] == "repeated noop limit reached (2)"
    # plain resume keeps its contract, and says what to do instead
    done = cli("resume", RUN_ID, cwd=repo.root)
    assert done.returncode == 2
    assert done.stderr.startswith(f"autoresearch: autoresearch_resume_terminal_run:{RUN_ID} ")
    assert f"autoresearch continue {RUN_ID}" in done.stderr
    done = cli("continue", RUN_ID, "--max-iterations", "+1", "--json", cwd=repo.root,
               env={"FAKE_PLAN": "noop,noop,improve"})  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["loop"]["counts"] == {"noop": 2, "keep": 1}


def test_an_operator_stopped_run_continues_with_a_new_agent(repo: Repo, mission_dir: Path) -> None:
    assert cli("prepare", "missions/demo", "--run-tag", "T1", cwd=repo.root).returncode == 0
    assert cli("stop", RUN_ID, "--reason", "lunch", cwd=repo.root).returncode == 0
    done = cli("continue", RUN_ID, "--agent", CMD_AGENT, "--max-iterations", "1", "--json",
               cwd=repo.root, env={"FAKE_PLAN": "improve"})  # fmt: skip
    assert done.returncode == 0, done.stderr
    loop = json.loads(done.stdout)["loop"]
    assert (loop["status"], loop["counts"]) == ("completed", {"keep": 1})
    assert loop["stop_note"] is None  # the lunch note belonged to the earlier stop


def test_continue_refuses_while_another_run_is_active(repo: Repo, mission_dir: Path) -> None:
    assert cli("prepare", "missions/demo", "--run-tag", "T1", cwd=repo.root).returncode == 0
    assert cli("stop", RUN_ID, cwd=repo.root).returncode == 0
    assert cli("prepare", "missions/demo", "--run-tag", "T2", cwd=repo.root).returncode == 0
    done = cli("continue", RUN_ID, "--max-iterations", "+1", cwd=repo.root)
    assert done.returncode == 2
    assert done.stderr.startswith("autoresearch: autoresearch_active_run_exists:missions-demo-t2")
    assert status(repo)["status"] == "stopped"


def test_resume_relative_limit_and_changed_options(repo: Repo, mission_dir: Path) -> None:
    done = cli("run", "missions/demo", "--agent", CMD_AGENT, "--run-tag", "T1",
               "--max-iterations", "1", "--max-noops", "5", cwd=repo.root,
               env={"FAKE_PLAN": "noop,noop,noop,improve"})  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert cli("continue", RUN_ID, "--max-iterations", "+0", cwd=repo.root).returncode == 2
    done = cli("continue", RUN_ID, "--max-iterations", "+3", "--max-noops", "2",
               "--seed", "7", "--json", cwd=repo.root,
               env={"FAKE_PLAN": "noop,noop,noop,improve"})  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    # the new noop limit (2) stopped it after two more noops, before the total of 4
    assert out["loop"]["stop_reason"] == "repeated noop limit reached (2)"
    journal = repo.root / ".autoresearch/journal.sqlite3"
    import sqlite3

    with sqlite3.connect(journal) as conn:
        loop = json.loads(conn.execute("SELECT loop_json FROM runs").fetchone()[0])
    assert (loop["max_noops"], loop["max_iterations"], loop["seed"]) == (2, 4, 7)


def test_run_refuses_before_any_session_without_a_comparable_baseline(repo: Repo) -> None:
    repo.write("mode.txt", "noscore\n")
    repo.mission()
    done = run(repo, "improve")
    assert done.returncode == 2
    first = done.stderr.strip().splitlines()[-1]
    assert first.startswith(f"autoresearch: autoresearch_baseline_not_comparable:{RUN_ID} ")
    assert "the evaluator passed without a numeric score" in first
    assert f"autoresearch rebaseline {RUN_ID}" in first
    assert not (worktree(repo) / ".autoresearch/agent-1.started").exists()
    # the way out it names works: fix the evaluator in the worktree, rebaseline, resume
    (worktree(repo) / "mode.txt").write_text("ok\n")
    git(worktree(repo), "commit", "-qam", "fix the evaluator")
    assert cli("rebaseline", RUN_ID, cwd=repo.root).returncode == 0
    done = cli("resume", RUN_ID, "--max-iterations", "+1", "--json", cwd=repo.root,
               env={"FAKE_PLAN": "improve"})  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["loop"]["counts"] == {"keep": 1}


def test_prepare_keeps_only_a_warning_for_external_drivers(repo: Repo) -> None:
    repo.write("mode.txt", "noscore\n")
    repo.mission()
    done = cli("prepare", "missions/demo", "--run-tag", "T1", cwd=repo.root)
    assert done.returncode == 0
    assert "WARNING: the baseline has no comparable score" in done.stderr


def test_discarded_candidates_survive_gc_until_clean(repo: Repo, mission_dir: Path) -> None:
    done = run(repo, "improve,worse,noop", "--max-iterations", "3")
    assert done.returncode == 0, done.stderr
    discarded = status(repo)["iterations"][2]
    assert discarded["decision"] == "discard"
    sha = discarded["candidate_commit"]
    ref = f"refs/autoresearch/{RUN_ID}/discarded/2"
    assert git(repo.root, "rev-parse", ref) == sha
    git(repo.root, "reflog", "expire", "--expire=now", "--all")
    git(repo.root, "gc", "-q", "--prune=now")
    git(repo.root, "cat-file", "-e", f"{sha}^{{commit}}")  # still there

    kept = status(repo)["last_kept_commit"]
    (worktree(repo) / "notes.txt").write_text("an idea I wrote by hand\n")
    dry = cli("clean", "--dry-run", "--json", cwd=repo.root)
    assert dry.returncode == 0, dry.stderr
    (plan,) = json.loads(dry.stdout)["runs"]
    assert plan["worktree"] == str(worktree(repo)) and plan["discarded_refs"] == 1
    assert worktree(repo).is_dir()  # a dry run touches nothing

    done = cli("clean", RUN_ID, cwd=repo.root)
    assert done.returncode == 0, done.stderr
    assert "git log refs/autoresearch/missions-demo-t1/kept" in done.stdout
    assert not worktree(repo).exists()
    assert git(repo.root, "branch", "--list", "autoresearch/*") == ""
    assert git(repo.root, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert git(repo.root, "for-each-ref", "--format=%(refname)", "refs/autoresearch/") == (
        f"refs/autoresearch/{RUN_ID}/kept"
    )
    assert git(repo.root, "rev-parse", f"refs/autoresearch/{RUN_ID}/kept") == kept
    # the journal, the logs and the hand-written file (as a patch) stay
    details = status(repo)
    assert details["cleaned_at"] and len(details["iterations"]) == 4
    patches = list((repo.root / f".autoresearch/runs/{RUN_ID}/logs").glob("*-clean.patch"))
    assert len(patches) == 1 and "an idea I wrote by hand" in patches[0].read_text()
    assert "cleaned" in cli("status", cwd=repo.root).stdout
    # continuing a cleaned run is refused plainly; cleaning again does nothing
    done = cli("continue", RUN_ID, "--max-iterations", "+1", cwd=repo.root)
    assert done.returncode == 2 and "was cleaned" in done.stderr
    again = json.loads(cli("clean", "--json", cwd=repo.root).stdout)["runs"]
    assert again[0]["skipped"] == "already clean"
    assert cli("clean", RUN_ID, "--drop-kept", cwd=repo.root).returncode == 0
    assert git(repo.root, "for-each-ref", "refs/autoresearch/") == ""


def test_clean_refuses_running_and_unknown_runs(repo: Repo, mission_dir: Path) -> None:
    assert cli("prepare", "missions/demo", "--run-tag", "T1", cwd=repo.root).returncode == 0
    done = cli("clean", RUN_ID, cwd=repo.root)
    assert done.returncode == 2
    assert f"autoresearch stop {RUN_ID}" in done.stderr
    done = cli("clean", "nope", cwd=repo.root)
    assert (done.returncode, done.stderr) == (2, "autoresearch: unknown run: nope\n")
    # without names, running runs are skipped, not touched
    done = cli("clean", "--json", cwd=repo.root)
    assert json.loads(done.stdout)["runs"][0]["skipped"] == "running"
    assert worktree(repo).is_dir()


def test_status_shows_a_run_nobody_drives_and_how_to_resume(repo: Repo, mission_dir: Path) -> None:
    assert cli("prepare", "missions/demo", "--run-tag", "T1", cwd=repo.root).returncode == 0
    listing = cli("status", cwd=repo.root).stdout
    assert "running, no driver" in listing
    assert f"autoresearch resume {RUN_ID}" in listing
    details = cli("status", RUN_ID, cwd=repo.root).stdout
    assert f"nobody drives this run; continue it: autoresearch resume {RUN_ID}" in details
    runs = json.loads(cli("status", "--json", cwd=repo.root).stdout)["runs"]
    assert runs[0]["driver_alive"] is False
    assert runs[0]["resume_command"] == f"autoresearch resume {RUN_ID}"


def test_status_last_n(repo: Repo, mission_dir: Path) -> None:
    done = run(repo, "improve,worse,improve", "--max-iterations", "3")
    assert done.returncode == 0, done.stderr
    its = status(repo, "--last", "2")["iterations"]
    assert [it["iteration"] for it in its] == [2, 3]
    text = cli("status", RUN_ID, "--last", "1", cwd=repo.root).stdout
    # the baseline is row 0: three iterations are four rows, and the line says so
    assert "iterations: 1 of 4 rows shown (the baseline and 3 iterations)\n" in text


def test_status_rows_show_each_iteration_as_the_ledger_does(repo: Repo, mission_dir: Path) -> None:
    # the rows (text and --json) of `status RUN_ID`: decision, what the evaluation came to,
    # score, commit and description, with the secrets of the description masked in both
    secret = {"AUTORESEARCH_REDACT": r"ACME-\d{4}"}
    done = cli(
        "run", "missions/demo", "--agent", CMD_AGENT, "--run-tag", "T1", "--max-iterations", "5",
        cwd=repo.root, env={"FAKE_PLAN": "improve,eval:fail,evalcrash,worse,noop",
                            "FAKE_DESCRIPTION": "try   ACME-1234 here", **secret},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    its = json.loads(cli("status", RUN_ID, "--json", cwd=repo.root, env=secret).stdout)[
        "iterations"
    ]
    assert [list(it) for it in its] == [
        ["iteration", "kind", "decision", "decision_reason", "candidate_status", "base_commit",
         "candidate_commit", "kept_commit", "keep_policy", "evaluator", "created_at", "notes",
         "description", *(["agent"] if it["iteration"] else []), "evaluation", "estimate"]
        for it in its
    ]  # fmt: skip

    def point(value: float, n: int) -> dict[str, float | int]:  # a deterministic evaluator
        return {"mean": value, "low": value, "high": value, "n": n, "level": 0.95}

    assert [(it["decision"], it["evaluation"], it["estimate"]) for it in its] == [
        ("baseline", "pass", point(1.0, 3)), ("keep", "pass", point(2.0, 1)),
        ("discard", "fail", None), ("discard", "error", None),
        ("discard", "pass", point(1.5, 1)), ("noop", "not run", None),
    ]  # fmt: skip
    assert [it["description"] for it in its][1:4] == ["try   [REDACTED] here"] * 3
    text = cli("status", RUN_ID, cwd=repo.root, env=secret).stdout.splitlines()
    table = text[text.index(next(line for line in text if line.startswith("#  "))) :]
    cells = [re.split(r"\s{2,}", line) for line in table]
    commit = [(it["candidate_commit"] or it["kept_commit"] or "")[:7] for it in its]
    assert cells == [
        ["#", "decision", "eval", "score", "commit", "description"],
        ["0", "baseline", "pass", "1", commit[0], "initial baseline evaluation"],
        ["1", "keep", "pass", "2", commit[1], "try [REDACTED] here"],
        ["2", "discard", "fail", "3", commit[2], "try [REDACTED] here"],
        ["3", "discard", "error", commit[3], "try [REDACTED] here"],  # no score: one gap
        ["4", "discard", "pass", "1.5", commit[4], "try [REDACTED] here"],
        ["5", "noop", "not run", commit[5], "nothing"],
    ]


def test_summary_counts_evaluator_errors_aborts_and_time(repo: Repo, mission_dir: Path) -> None:
    done = run(repo, "improve,evalcrash,abort")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["counts"] == {"keep": 1, "discard": 1, "abort": 1}
    totals = summary["totals"]
    assert totals["evaluator_errors"] == 1
    assert totals["agent_seconds"] > 0 and totals["evaluator_seconds"] > 0
    assert totals["wall_seconds"] >= totals["agent_seconds"]
    text = cli("status", cwd=repo.root)  # the text summary comes from `run` without --json
    assert text.returncode == 0
    done = cli("run", "missions/demo", "--agent", CMD_AGENT, "--run-tag", "T2", cwd=repo.root,
               env={"FAKE_PLAN": "improve,evalcrash,abort"})  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "1 discarded (1 evaluator error)" in done.stdout
    assert "1 abort" in done.stdout
    assert "since the run was created (agent" in done.stdout


def test_prepare_says_uncommitted_edits_are_not_part_of_the_run(
    repo: Repo, mission_dir: Path
) -> None:
    repo.write("value.txt", "5\n")  # tracked, modified
    repo.write("new_idea.py", "x = 1\n")  # untracked
    done = cli("prepare", "missions/demo", "--run-tag", "T1", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    assert "2 uncommitted changes" in done.stderr and "not part of the run" in done.stderr
    assert "value.txt" in done.stderr and "new_idea.py" in done.stderr
    assert (worktree(repo) / "value.txt").read_text() == "1\n"  # it really is not


def test_a_run_given_no_limit_completes_after_the_default_and_says_so(
    repo: Repo, mission_dir: Path
) -> None:
    # 58 iterations of a paid agent before a Ctrl-C was what 'no limit' meant; now the default
    # cap is recorded with the run (resume keeps it) and named on stderr
    done = run(repo, "noop", "--max-noops", "1")
    assert done.returncode == 0, done.stderr
    assert (
        "autoresearch: the run completes after 100 iterations "
        "(--max-iterations N to choose, 0 for no limit)\n"
    ) in done.stderr
    journal = repo.root / ".autoresearch/journal.sqlite3"
    with sqlite3.connect(journal) as conn:
        (loop_json,) = conn.execute("SELECT loop_json FROM runs").fetchone()
    assert json.loads(loop_json)["max_iterations"] == 100
    unlimited = cli(
        "run", "missions/demo", "--agent", CMD_AGENT, "--run-tag", "T2", "--max-iterations", "0",
        "--max-noops", "1", cwd=repo.root, env={"FAKE_PLAN": "noop"},
    )  # fmt: skip
    assert unlimited.returncode == 0 and "completes after" not in unlimited.stderr
    with sqlite3.connect(journal) as conn:
        rows = conn.execute("SELECT run_id, loop_json FROM runs ORDER BY run_id").fetchall()
    assert json.loads(rows[1][1]).get("max_iterations") is None

"""log: git effects of every status, saved patches, secondary sets, scope audit, flags."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

import pytest
from exp_helpers import cycle, init, log, run

from autoresearch.errors import ContractError, RefusedError
from autoresearch.experiments import RunNote, session_status
from autoresearch.experiments.report import render_status
from helpers import Repo, cli, git


def tree(root: Path) -> dict[str, str]:
    """Every file outside .git and .autoresearch with its content."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_file() and not rel.startswith((".git/", ".autoresearch/")):
            out[rel] = path.read_text()
    return out


def test_log_needs_a_pending_run(session: Repo) -> None:
    with pytest.raises(RefusedError) as err:
        log(session.root, "keep")
    assert err.value.message == "no pending run available. Run `autoresearch exp run` first."


def test_keep_commits_everything_with_the_result_trailer(session: Repo) -> None:
    cycle(session, "100", "keep", "baseline")
    session.write("mem.txt", "12\n")  # untracked, new
    session.write("value.txt", "80\n")
    run(session.root)
    report = log(
        session.root, "keep", "Cache the table", asi={"hypothesis": "cache hits"}, force=True
    )
    head = session.git("rev-parse", "HEAD")
    assert report.git.to_dict() == {
        "action": "committed",
        "commit": head,
        "patch_path": None,
        "kept_commit": head,
    }
    assert session.git("log", "-1", "--format=%B") == (
        'Cache the table\n\nResult: {"status":"keep", "score":80, "mem":12}'
    )
    assert set(session.git("show", "--name-only", "--format=", "HEAD").split()) == {
        "mem.txt",
        "value.txt",
    }
    assert session.git("status", "--porcelain") == ""
    assert report.delta_pct == pytest.approx(-20.0)
    assert report.best is not None and (report.best.run, report.best.metric) == (2, 80.0)
    assert report.asi == {"hypothesis": "cache hits"}


CACHES = ("__pycache__/top.cpython-311.pyc", "pkg/__pycache__/mod.cpython-311.pyc", "old.pyc")


def no_ignored_caches(repo: Repo) -> None:
    """The project ignores nothing, so Python's caches show up as untracked files."""
    repo.write(".gitignore", "")
    repo.git("commit", "-q", "-m", "ignore nothing", ".gitignore")


def write_caches(repo: Repo) -> None:
    for rel in CACHES:
        repo.write(rel, "bytecode")


def test_keep_leaves_untracked_python_caches_out_of_the_commit(repo: Repo) -> None:
    no_ignored_caches(repo)
    write_caches(repo)
    setup = init(repo.root)
    assert setup.setup_commit is not None  # the harness, without the caches
    assert set(repo.git("show", "--name-only", "--format=", "HEAD").split()) == {"autoresearch.sh"}
    cycle(repo, "100", "keep", "baseline")
    repo.write("value.txt", "90\n")
    repo.write("pkg/mod.py", "x = 1\n")
    repo.write("pkg/__pycache__/other.cpython-311.pyo", "bytecode")
    repo.git("mv", "scripts/eval.py", "scripts/evaluate.py")  # a staged rename
    repo.git("rm", "-q", ".gitignore")  # a staged deletion
    run(repo.root)
    report = log(repo.root, "keep", "faster")
    assert report.git.action == "committed"
    changed = repo.git("show", "--name-status", "--no-renames", "--format=", "HEAD")
    assert sorted(changed.splitlines()) == [
        "A\tpkg/mod.py",
        "A\tscripts/evaluate.py",
        "D\t.gitignore",
        "D\tscripts/eval.py",
        "M\tvalue.txt",
    ]
    assert report.deviations == ()
    assert all((repo.root / rel).exists() for rel in CACHES)  # left alone, not deleted
    assert {line[3:] for line in repo.git("status", "--porcelain").splitlines()} == {
        "__pycache__/",
        "old.pyc",
        "pkg/__pycache__/",
    }
    repo.write("__pycache__/top.cpython-311.pyc", "new bytecode")
    run(repo.root)
    only_caches = log(repo.root, "keep", "caches only")
    assert only_caches.git.action == "nothing to commit"
    repo.git("rm", "-q", "pkg/mod.py")  # only a staged deletion besides the caches
    run(repo.root)
    assert log(repo.root, "keep", "drop mod").git.action == "committed"
    assert "pkg/mod.py" not in repo.git("ls-tree", "-r", "--name-only", "HEAD").split()


def test_caches_are_neither_deviations_nor_part_of_a_discarded_patch(repo: Repo) -> None:
    no_ignored_caches(repo)
    init(repo.root, scope=("value.txt",))
    cycle(repo, "100", "keep", "baseline")
    repo.write("value.txt", "95\n")
    write_caches(repo)
    run(repo.root)
    report = log(repo.root, "discard", "worse")
    assert report.deviations == ()
    patch = Path(report.git.patch_path).read_text()
    assert "value.txt" in patch and "__pycache__" not in patch and ".pyc" not in patch
    assert session_status(repo.root).history[-1].deviations == []


def test_keep_with_nothing_to_commit_is_reported(session: Repo) -> None:
    run(session.root)
    report = log(session.root, "keep", "baseline")
    assert report.git.action == "nothing to commit" and report.git.commit is None
    assert "nothing to commit" in report.messages[0]
    assert report.baseline is not None
    assert report.baseline.commit == session.git("rev-parse", "HEAD")


@pytest.mark.parametrize("status", ["discard", "crash", "checks_failed"])
def test_reverting_statuses_save_the_diff_then_reset(session: Repo, status: str) -> None:
    cycle(session, "100", "keep", "baseline")
    kept = session.git("rev-parse", "HEAD")
    session.write(".gitignore", "__pycache__/\n*.cache\n")
    cycle(session, "100", "keep", "ignore caches")
    kept = session.git("rev-parse", "HEAD")
    session.write("value.txt", "95\n")  # dirty before the run: part of the experiment
    session.write("scripts/eval.py", "changed\n")
    session.git("add", "scripts/eval.py")  # staged
    session.write("notes/new.md", "an untracked idea\n")
    session.write("data.cache", "ignored output\n")
    run(session.root)
    session.write("late.txt", "written after the run\n")
    tried = tree(session.root)
    report = log(session.root, status, "tried things")
    # the reset: back to the last kept commit; ignored files and the harness survive
    assert session.git("rev-parse", "HEAD") == kept
    assert session.git("status", "--porcelain") == ""
    assert (session.root / "value.txt").read_text() == "100\n"
    assert not (session.root / "notes").exists() and not (session.root / "late.txt").exists()
    assert (session.root / "data.cache").read_text() == "ignored output\n"
    assert (session.root / "autoresearch.sh").exists()
    # the saved patch brings the experiment back exactly
    patch = Path(report.git.patch_path)
    assert patch == session.root / ".autoresearch/sessions/1/run-0003-discarded.patch"
    assert report.git.action == "reverted"
    subprocess.run(["git", "apply", str(patch)], cwd=session.root, check=True)
    assert tree(session.root) == tried


def test_a_staged_new_file_is_saved_in_the_patch_before_the_reset(session: Repo) -> None:
    # `git add` without a commit: neither untracked nor in the kept tree. It used to be
    # missing from the patch while the reset deleted it.
    cycle(session, "100", "keep", "baseline")
    session.write("idea.py", "print('staged, never committed')\n")
    session.git("add", "idea.py")
    run(session.root)
    tried = tree(session.root)
    report = log(session.root, "discard", "staged idea")
    assert not (session.root / "idea.py").exists()
    patch = Path(report.git.patch_path)
    assert "idea.py" in patch.read_text()
    subprocess.run(["git", "apply", str(patch)], cwd=session.root, check=True)
    assert tree(session.root) == tried


def test_reverting_keeps_commits_the_agent_made_itself_in_the_patch(session: Repo) -> None:
    cycle(session, "100", "keep", "baseline")
    kept = session.git("rev-parse", "HEAD")
    session.write("value.txt", "90\n")
    session.commit("the agent committed on its own")
    run(session.root)
    report = log(session.root, "discard", "no good")
    assert session.git("rev-parse", "HEAD") == kept
    assert "+90" in Path(report.git.patch_path).read_text()


def test_an_untracked_harness_survives_and_stays_out_of_the_patch(session: Repo) -> None:
    cycle(session, "100", "keep", "baseline")
    session.write("autoresearch.checks.sh", "#!/bin/bash\ntrue\n")  # added mid-session
    session.write("value.txt", "90\n")
    run(session.root)
    report = log(session.root, "discard", "no good")
    assert (session.root / "autoresearch.checks.sh").exists()
    assert "autoresearch.checks.sh" not in Path(report.git.patch_path).read_text()


def test_nothing_to_revert(session: Repo) -> None:
    cycle(session, "100", "keep", "baseline")
    run(session.root)
    report = log(session.root, "discard", "same")
    assert report.git.action == "nothing to revert" and report.git.patch_path is None


def test_keep_is_refused_after_a_crashed_benchmark(session: Repo) -> None:
    session.write("crash.flag", "")
    run(session.root)
    with pytest.raises(RefusedError, match="the benchmark did not pass"):
        log(session.root, "keep", "x", metric=1.0)
    assert (session.root / "crash.flag").exists()  # a refused log changes nothing
    report = log(session.root, "crash", "it crashed", asi={"rollback_reason": "segfault"})
    assert report.metric is None and report.git.action == "reverted"
    assert not (session.root / "crash.flag").exists()


def test_secondary_metric_set_must_stay_the_same_unless_forced(session: Repo) -> None:
    session.write("mem.txt", "10\n")
    session.commit("mem")
    cycle(session, "100", "keep", "baseline")
    (session.root / "mem.txt").unlink()
    run(session.root)
    with pytest.raises(ContractError, match=r"same set within a segment \(missing mem\)"):
        log(session.root, "discard", "no mem")
    report = log(session.root, "discard", "no mem", metrics={"mem": 11.0})
    assert report.metrics == {"mem": 11.0}
    assert (session.root / "mem.txt").exists()  # the discard restored it
    (session.root / "mem.txt").unlink()
    run(session.root)
    forced = log(session.root, "discard", "drop mem", force=True)
    assert "secondary metric set changed (forced): -mem" in forced.messages
    (session.root / "mem.txt").unlink()
    run(session.root)
    log(session.root, "discard", "the new (empty) set holds from now on")


def test_scope_deviations_are_listed_until_justified_or_flagged(repo: Repo) -> None:
    init(repo.root, scope=("value.txt",), off_limits=("scripts",))
    cycle(repo, "100", "keep", "baseline")
    repo.write("value.txt", "90\n")
    repo.write("README.md", "outside the scope\n")
    repo.write("scripts/eval.py", "off limits\n")
    run(repo.root)
    report = log(repo.root, "keep", "sneaky")
    assert report.deviations == ("README.md", "scripts/eval.py")
    assert any("was kept with deviations" in m for m in report.messages)
    for _ in range(2):  # shown in every later status
        cycle(repo, "95", "discard", "meh")
        unjustified = session_status(repo.root).unjustified
        assert [(u.run, u.deviations) for u in unjustified] == [
            (2, ["README.md", "scripts/eval.py"])
        ]
    run(repo.root)
    log(repo.root, "discard", "meh", justify_runs=(RunNote(2, "README typo fix is harmless"),))
    status = session_status(repo.root)
    assert status.unjustified == ()
    assert status.history[1].justification == "README typo fix is harmless"


def test_a_justified_keep_is_not_listed(repo: Repo) -> None:
    init(repo.root, scope=("value.txt",))
    cycle(repo, "100", "keep", "baseline")
    repo.write("README.md", "x\n")
    run(repo.root)
    log(repo.root, "keep", "docs too", justification="the README documents the change")
    assert session_status(repo.root).unjustified == ()


def test_flagged_runs_leave_baseline_best_and_confidence(session: Repo) -> None:
    cycle(session, "100", "keep", "baseline")
    cycle(session, "50", "keep", "too good to be true")
    cycle(session, "98", "discard", "d1")
    report = cycle(session, "97", "keep", "k2")
    assert report.best is not None and report.best.run == 2
    flagged = cycle(session, "99", "discard", "d2", flag_runs=(RunNote(2, "the cache was warm"),))
    assert flagged.flagged == (2,)
    assert flagged.best is not None and flagged.best.run == 4
    status = session_status(session.root)
    assert status.history[1].flagged and status.history[1].flag_reason == "the cache was warm"
    # values without the flagged run: 100, 98, 97, 99 → median 98.5, MAD 1.0; |97 − 100| / 1
    assert status.confidence.value == pytest.approx(3.0)
    assert status.confidence.label == "likely real"
    with pytest.raises(ContractError, match="run #42 is not a logged run"):
        cycle(session, "99", "discard", "x", flag_runs=(RunNote(42, "no such run"),))


def test_an_explicit_metric_overrides_the_parsed_one(session: Repo) -> None:
    session.write("tweak.txt", "a change to keep\n")
    run(session.root)
    report = log(session.root, "keep", "baseline", metric=101.5)
    assert report.metric == 101.5
    # both values are recorded, and the difference is a deviation to justify
    assert report.measured == 100.0
    assert report.deviations == ("score: logged 101.5, measured 100",)
    assert any("was kept with deviations (score: logged 101.5" in m for m in report.messages)
    trailer = git(session.root, "log", "-1", "--format=%B").strip().splitlines()[-1]
    assert trailer == 'Result: {"status":"keep", "score":101.5, "measured":100}'
    status = session_status(session.root)
    data = json.loads(json.dumps(status.to_dict()))
    assert data["history"][0]["metric"] == 101.5
    assert data["history"][0]["measured"] == 100.0
    assert data["unjustified"][0]["deviations"] == ["score: logged 101.5, measured 100"]
    text = render_status(status)
    assert "measured: 100 (the logged value differs)" in text
    # the same value as measured is no deviation
    run(session.root)
    assert log(session.root, "discard", "same", metric=100.0).deviations == ()


# A session's log acts, then journals (the supervisor journals its decision first): safe
# because a repeated log finishes what a killed one did (logger.py's docstring).
KILL_AFTER_GIT = {"AUTORESEARCH_FAILPOINTS": "log.after_git"}


def test_a_discard_killed_between_its_reset_and_its_record_is_finished_honestly(
    session: Repo,
) -> None:
    cycle(session, "100", "keep", "baseline")
    session.write("value.txt", "90\n")
    run(session.root)
    tried = tree(session.root)
    killed = cli(
        "exp", "log", "--status", "discard", "-d", "no", cwd=session.root, env=KILL_AFTER_GIT
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert session.git("status", "--porcelain") == ""  # reset, but not recorded
    with pytest.raises(RefusedError) as err:  # the measured change is gone: no keep of it
        log(session.root, "keep", "claims a reset run")
    assert "already reset and its diff saved" in err.value.message
    report = log(session.root, "discard", "no")
    patch = Path(report.git.patch_path)
    subprocess.run(["git", "apply", str(patch)], cwd=session.root, check=True)
    assert tree(session.root) == tried


def test_a_keep_killed_between_its_commit_and_its_record_is_finished_honestly(
    session: Repo,
) -> None:
    cycle(session, "100", "keep", "baseline")
    session.write("value.txt", "90\n")
    run(session.root)
    killed = cli("exp", "log", "--status", "keep", "-d", "ok", cwd=session.root, env=KILL_AFTER_GIT)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    commit = session.git("rev-parse", "HEAD")
    report = log(session.root, "keep", "ok")
    assert report.git.action == "nothing to commit" and report.git.kept_commit == commit
    assert report.metric == 90.0

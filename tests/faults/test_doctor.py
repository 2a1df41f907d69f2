"""autoresearch doctor on the repository's git side: stale git locks (an error, with the fix)
and `--clear-locks`; worktrees, branches and run folders that no run in the journal knows."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import sys
from contextlib import closing
from pathlib import Path

from autoresearch.locks import FileLock
from autoresearch.paths import RepoPaths, journal_backup
from helpers import Repo, cli, forge_away_iteration, git

CMD_AGENT = Path(__file__).parents[1] / "agents/fakes/cmd_agent.py"
DISCARDED = "refs/autoresearch/missions-demo-r1/discarded"


def doctor(repo: Path, *extra: str) -> tuple[int, dict]:
    done = cli("--repo", str(repo), "doctor", "--json", *extra, cwd=repo)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout)


def findings(report: dict, check: str) -> list[dict]:
    return [f for f in report["findings"] if f["check"] == check]


def test_a_healthy_repository(repo: Repo, mission_dir: Path) -> None:
    assert cli("prepare", "missions/demo", "--run-tag", "d1", cwd=repo.root).returncode == 0
    code, report = doctor(repo.root)
    assert code == 0 and report["healthy"], report
    assert findings(report, "journal")[0]["severity"] == "ok"
    # one backup, kept twice: in the user's state directory and beside the journal
    backups = findings(report, "backups")
    assert [f["severity"] for f in backups] == ["ok", "ok"]
    assert os.environ["XDG_STATE_HOME"] in backups[0]["message"]


def test_stale_locks_are_an_error_and_cleared_on_request(repo: Repo, mission_dir: Path) -> None:
    assert cli("prepare", "missions/demo", "--run-tag", "d1", cwd=repo.root).returncode == 0
    locks = [
        repo.root / ".git/worktrees/missions-demo-d1/index.lock",
        repo.root / ".git/refs/heads/autoresearch/missions-demo/d1.lock",
    ]
    for lock in locks:
        lock.write_text("")
    code, report = doctor(repo.root)
    assert code == 1 and not report["healthy"]
    stale = findings(report, "locks")
    assert sorted(f["message"].split()[3].rstrip(":") for f in stale) == sorted(map(str, locks))
    assert all("--clear-locks" in f["fix"] for f in stale)
    code, report = doctor(repo.root, "--clear-locks")
    assert code == 0, report
    assert sorted(report["cleared_locks"]) == sorted(map(str, locks))
    assert not any(lock.exists() for lock in locks)


def test_strays_are_named_with_their_fix(repo: Repo, mission_dir: Path, tmp_path: Path) -> None:
    assert cli("prepare", "missions/demo", "--run-tag", "d1", cwd=repo.root).returncode == 0
    stray = repo.root / ".autoresearch/worktrees/not-a-run"
    git(repo.root, "worktree", "add", "-q", "-b", "autoresearch/other/x1", str(stray))
    shutil.copytree(repo.root / ".autoresearch/runs/missions-demo-d1",
                    repo.root / ".autoresearch/runs/missions-demo-gone")  # fmt: skip
    code, report = doctor(repo.root)
    assert code == 1
    (wt,) = findings(report, "worktrees")
    assert str(stray) in wt["message"] and wt["fix"] == f"git worktree remove --force {stray}"
    (branch,) = findings(report, "branches")
    assert "autoresearch/other/x1" in branch["message"]
    (run,) = findings(report, "runs")
    assert "missions-demo-gone" in run["message"] and run["severity"] == "error"


def test_lane_worktrees_belong_to_their_run(repo: Repo, mission_dir: Path) -> None:
    # doctor once named the `lanes` folder (the parent of every lane worktree) as a worktree
    # of no run after any `run --lanes K`, with a fix that git refuses
    args = ["run", "missions/demo", "--agent", "cmd:true", "--lanes", "2", "--run-tag", "l1"]
    done = cli(*args, "--max-iterations", "2", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    lanes = repo.root / ".autoresearch" / "worktrees" / "lanes"
    assert len(list(lanes.glob("*/*"))) == 2  # the lane worktrees exist
    _, report = doctor(repo.root)
    assert findings(report, "worktrees") == [], report
    ghost = lanes / "missions-demo-gone" / "1"
    ghost.mkdir(parents=True)
    _, report = doctor(repo.root)
    assert [f["message"] for f in findings(report, "worktrees")] == [
        f"worktree {ghost} belongs to no run in the journal"
    ]


def test_restore_is_refused_while_a_run_is_driven(repo: Repo, mission_dir: Path) -> None:
    assert cli("prepare", "missions/demo", "--run-tag", "d1", cwd=repo.root).returncode == 0
    driver = FileLock(RepoPaths(repo.root).run("missions-demo-d1").driver_lock)
    driver.acquire()  # a driver of the run, as `run` holds it
    try:
        done = cli("--repo", str(repo.root), "doctor", "--restore", "--force", cwd=repo.root)
    finally:
        driver.release()
    assert done.returncode == 2, done.stderr
    assert "run missions-demo-d1 is being driven right now" in done.stderr
    done = cli("--repo", str(repo.root), "doctor", "--restore", "--force", cwd=repo.root)
    assert "being driven" not in done.stderr, done.stderr


def test_a_restore_keeps_the_candidates_discarded_after_its_backup(
    repo: Repo, mission_dir: Path, tmp_path: Path
) -> None:
    """A restore rolls the journal back past iterations whose discarded candidates have refs;
    the continued run numbers its iterations from there again. Each such ref is renamed
    aside, so the new discard of the same number takes its name over and loses nothing."""
    agent = ["--agent", f"cmd:{sys.executable} {CMD_AGENT}", "--sandbox", "none"]
    every_worse = {"FAKE_PLAN": "worse"}
    start = ["run", "missions/demo", "--run-tag", "r1", "--max-iterations", "2", *agent]
    assert cli(*start, cwd=repo.root, env=every_worse).returncode == 0
    early = tmp_path / "early.sqlite3"
    shutil.copy(journal_backup(RepoPaths(repo.root).journal, 1), early)  # after iteration 2
    more = ["continue", "missions-demo-r1", *agent]
    assert cli(*more, "--max-iterations", "4", cwd=repo.root, env=every_worse).returncode == 0
    lost = git(repo.root, "rev-parse", f"{DISCARDED}/3").strip()
    elites = "refs/autoresearch/missions-demo-r1/elite"  # as a frontier run keeps them
    for number in (0, 4):  # the baseline's, which the backup holds, and one it does not
        git(repo.root, "update-ref", f"{elites}/{number}", lost)

    _code, report = doctor(repo.root, "--restore", "--from", str(early), "--force")
    aside = report["restored"]["refs_set_aside"]
    named = [ref.removeprefix("refs/autoresearch/missions-demo-r1/") for ref in aside]
    assert [ref.split("-before-restore-")[0] for ref in named] == [
        "discarded/3", "discarded/4", "elite/4"]  # fmt: skip
    # another candidate 3 (a git commit of the same change in the same second is the same)
    other = {"FAKE_PLAN": "worse,worse,eval:fail"}
    assert cli(*more, "--max-iterations", "3", cwd=repo.root, env=other).returncode == 0
    again = git(repo.root, "rev-parse", f"{DISCARDED}/3").strip()
    assert (git(repo.root, "rev-parse", aside[0]).strip(), again != lost) == (lost, True)


def test_a_second_restore_in_the_same_second_keeps_the_first_journal_it_replaced(
    tmp_path: Path,
) -> None:
    """Each replaced journal gets a name of its own: a restore of the same second numbers its
    own instead of overwriting the first (which may be the only copy of what it took out)."""
    from autoresearch.supervisor.doctor import aside_name

    journal = tmp_path / "journal.sqlite3"
    names = []
    for _ in range(3):
        aside = aside_name(journal, "20261207T040000Z")
        aside.write_text("replaced")
        names.append(aside.name)
    (tmp_path / "journal.sqlite3.replaced-20261207T040000Z.4-wal").write_text("")
    names.append(aside_name(journal, "20261207T040000Z").name)
    assert names == [
        "journal.sqlite3.replaced-20261207T040000Z",
        "journal.sqlite3.replaced-20261207T040000Z.2",
        "journal.sqlite3.replaced-20261207T040000Z.3",
        "journal.sqlite3.replaced-20261207T040000Z.5",
    ]


def test_a_restore_killed_after_setting_refs_aside_is_finished_by_the_next(
    repo: Repo, mission_dir: Path, tmp_path: Path
) -> None:
    """The refs go aside before the journal is swapped: killed in between, the journal is
    as it was, the refs set aside still name their candidates, and the next restore
    finishes with nothing more to set aside."""
    agent = ["--agent", f"cmd:{sys.executable} {CMD_AGENT}", "--sandbox", "none"]
    every_worse = {"FAKE_PLAN": "worse"}
    start = ["run", "missions/demo", "--run-tag", "r1", "--max-iterations", "2", *agent]
    assert cli(*start, cwd=repo.root, env=every_worse).returncode == 0
    early = tmp_path / "early.sqlite3"
    shutil.copy(journal_backup(RepoPaths(repo.root).journal, 1), early)
    more = ["continue", "missions-demo-r1", *agent, "--max-iterations", "3"]
    assert cli(*more, cwd=repo.root, env=every_worse).returncode == 0
    lost = git(repo.root, "rev-parse", f"{DISCARDED}/3").strip()
    restore = ["--repo", str(repo.root), "doctor", "--restore", "--from", str(early), "--force"]

    killed = cli(
        *restore, cwd=repo.root, env={"AUTORESEARCH_FAILPOINTS": "doctor.after_refs_set_aside"}
    )
    left = git(repo.root, "for-each-ref", "--format=%(refname) %(objectname)", DISCARDED)
    shown = json.loads(cli("status", "missions-demo-r1", "--json", cwd=repo.root).stdout)
    _code, report = doctor(repo.root, "--restore", "--from", str(early), "--force")
    assert killed.returncode == -9, killed.stderr
    assert [line.split()[1] for line in left.splitlines() if "/3-before-restore-" in line] == [lost]
    assert f"{DISCARDED}/3 " not in left and shown["iteration"] == 3
    assert report["restored"]["refs_set_aside"] == []
    # the logs go aside after the refs: the killed restore left them to the next
    assert len(report["restored"]["logs_set_aside"]) == 1


def test_a_restore_keeps_the_commits_kept_after_its_backup(
    repo: Repo, mission_dir: Path, tmp_path: Path
) -> None:
    """The run branch holds kept commits the restored journal never saw; the continued run
    resets the branch to the journal's last keep. A ref set aside by the restore keeps them
    (not only the branch's reflog), and the patch the continue saves says what it holds."""
    agent = ["--agent", f"cmd:{sys.executable} {CMD_AGENT}", "--sandbox", "none"]
    start = ["run", "missions/demo", "--run-tag", "r1", "--max-iterations", "1", *agent]
    assert cli(*start, cwd=repo.root).returncode == 0  # FAKE_PLAN improve: every session kept
    early = tmp_path / "early.sqlite3"
    shutil.copy(journal_backup(RepoPaths(repo.root).journal, 1), early)  # after keep 1
    more = ["continue", "missions-demo-r1", *agent]
    assert cli(*more, "--max-iterations", "3", cwd=repo.root).returncode == 0  # keeps 2, 3
    shown = json.loads(cli("status", "missions-demo-r1", "--json", cwd=repo.root).stdout)
    old_tip = git(repo.root, "rev-parse", f"refs/heads/{shown['branch_name']}")

    _code, report = doctor(repo.root, "--restore", "--from", str(early), "--force")
    aside = report["restored"]["refs_set_aside"]
    _code, again = doctor(repo.root, "--restore", "--from", str(early), "--force")
    continued = cli(*more, "--max-iterations", "2", cwd=repo.root)
    holders = git(repo.root, "for-each-ref", "--format=%(refname)", "--contains", old_tip)
    logs = RepoPaths(repo.root).run("missions-demo-r1").logs
    assert continued.returncode == 0, continued.stderr
    prefix = "refs/autoresearch/missions-demo-r1/kept-before-restore-"
    assert [ref.startswith(prefix) for ref in aside] == [True]
    assert holders.splitlines() == aside
    assert again["restored"]["refs_set_aside"] == []  # the tip is kept aside already
    assert (logs / "iteration-0002-kept-before-restore.patch").is_file()
    assert not (logs / "iteration-0002-unfinished-session.patch").exists()
    assert aside[0] in continued.stdout + continued.stderr  # the note names the ref


def test_lanes_at_the_tip_a_restore_set_aside_save_it_as_kept_before_restore(
    repo: Repo, mission_dir: Path, tmp_path: Path
) -> None:
    """With lanes, each lane branch follows the keeps too: a lane standing at the tip the
    restore set aside, or at a keep before it, saves what it holds as `kept-before-restore`,
    not as an unfinished session. A lane numbers its sessions from the backup's count again:
    the logs of the sessions after it are set aside, the others stay."""
    agent = ["--agent", f"cmd:{sys.executable} {CMD_AGENT}", "--sandbox", "none", "--lanes", "2"]
    start = ["run", "missions/demo", "--run-tag", "r1", "--max-iterations", "2", *agent]
    assert cli(*start, cwd=repo.root).returncode == 0
    early = tmp_path / "early.sqlite3"
    shutil.copy(journal_backup(RepoPaths(repo.root).journal, 1), early)
    more = ["continue", "missions-demo-r1", *agent]
    assert cli(*more, "--max-iterations", "6", cwd=repo.root).returncode == 0
    shown = json.loads(cli("status", "missions-demo-r1", "--json", cwd=repo.root).stdout)
    old_tip = git(repo.root, "rev-parse", f"refs/heads/{shown['branch_name']}")

    run_dir = RepoPaths(repo.root).run("missions-demo-r1").logs.parent
    before = {path: path.read_bytes() for path in run_dir.glob("lanes/*/logs/session-*")}
    with closing(sqlite3.connect(early)) as backup:
        started = dict(backup.execute("SELECT lane, session FROM run_lanes").fetchall())

    _code, report = doctor(repo.root, "--restore", "--from", str(early), "--force")
    aside = [Path(folder) for folder in report["restored"]["logs_set_aside"]]
    # the sessions the backup never saw start again from its count: their logs are aside
    lost = {path for path in before if int(path.name[8:12]) > started[int(path.parts[-3])]}
    assert lost and set(aside) == {path.parent / aside[0].name for path in lost}
    for path, data in before.items():
        now = path.parent / aside[0].name / path.name if path in lost else path
        assert now.read_bytes() == data
    # the scripted agent makes the same commits again (same files, message and parent): made in
    # the same second as the ones the restore went past, they would be those very commits
    another_day = {
        "GIT_AUTHOR_DATE": "2001-02-03T04:05:06",
        "GIT_COMMITTER_DATE": "2001-02-03T04:05:06",
    }
    continued = cli(*more, "--max-iterations", "7", cwd=repo.root, env=another_day)
    holders = git(repo.root, "for-each-ref", "--format=%(refname)", "--contains", old_tip)
    saved = sorted(path.name for path in run_dir.glob("lanes/*/logs/*.patch"))
    assert continued.returncode == 0, continued.stderr
    assert holders.splitlines() == report["restored"]["refs_set_aside"]
    # each lane that stood past the backup's keep (at the tip, or at an earlier keep of it)
    assert saved and set(saved) == {"session-0001-kept-before-restore.patch"}


def test_a_restore_from_a_relative_path_outside_the_backups(
    repo: Repo, mission_dir: Path, tmp_path: Path
) -> None:
    """`--from` is read from where the user stands, whichever folder it is in; a file that
    is not there is a clear refusal (exit 2), not an internal error."""
    assert cli("prepare", "missions/demo", "--run-tag", "d1", cwd=repo.root).returncode == 0
    saved = tmp_path / "saved-journal.sqlite3"
    shutil.copy(journal_backup(RepoPaths(repo.root).journal, 1), saved)
    relative = os.path.relpath(saved, repo.root)
    restore = ["--repo", str(repo.root), "doctor", "--restore", "--force", "--json", "--from"]

    done = cli(*restore, relative, cwd=repo.root)
    missing = cli(*restore, "../no-such-journal.sqlite3", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    assert Path(json.loads(done.stdout)["restored"]["restored_from"]).resolve() == saved
    assert missing.returncode == 2, missing.stderr
    assert "internal error" not in missing.stderr
    assert f"no such backup: {repo.root / '../no-such-journal.sqlite3'}" in missing.stderr


def test_a_run_branch_is_set_aside_where_resuming_would_reset_it_back() -> None:
    """The branch's tip is set aside where it is not the restored journal's commit and no
    earlier restore's ref names it (git is asked apart whether it lies behind that commit)."""
    from autoresearch.supervisor.doctor import branch_moved_on

    cases = [  # (tip, the journal's commit, commits earlier restores set aside) → set aside
        (("c3", "c1", set()), True),
        (("c1", "c1", set()), False),  # the branch stands where the journal says
        (("c3", "c1", {"c3"}), False),  # a restore killed before its swap set it aside
        (("c3", "c1", {"c2"}), True),  # an older restore's tip: the new one is not kept
    ]
    assert [branch_moved_on(*given) for given, _ in cases] == [want for _, want in cases]


def test_an_artifact_is_set_aside_where_it_was_built_on_what_the_backup_never_kept() -> None:
    """candidate.json goes aside with the lost logs where the step of the resumed run would
    fail the run for its base alone; an unresolved base stays the step's to report."""
    from autoresearch.supervisor.doctor import built_past_the_backup

    cases = [  # (the artifact's base resolved, the backup's commit) → set aside
        (("c2", "c1"), True),  # a session after a keep the backup lacks
        (("c1", "c1"), False),  # the session the backup expects next: the resume steps it
        ((None, "c1"), False),  # no such commit: the contract's error, as without a restore
        (("c2", None), False),  # no baseline in the backup: the run never had a session
    ]
    assert [built_past_the_backup(*given) for given, _ in cases] == [want for _, want in cases]


def test_a_restore_sets_aside_the_logs_of_the_iterations_it_goes_back_past(
    repo: Repo, mission_dir: Path, tmp_path: Path
) -> None:
    """The resumed run numbers its iterations from the backup's again and would write over
    the logs of the iterations the restore went back past (an old evaluator log beside a
    new `-evaluator-2.log`). The restore moves them into `logs/before-restore-<stamp>/`
    (the stamp of the refs it sets aside) and leaves every log the backup knows in place."""
    agent = ["--agent", f"cmd:{sys.executable} {CMD_AGENT}", "--sandbox", "none"]
    start = ["run", "missions/demo", "--run-tag", "r1", "--max-iterations", "1", *agent]
    assert cli(*start, cwd=repo.root).returncode == 0
    early = tmp_path / "early.sqlite3"
    shutil.copy(journal_backup(RepoPaths(repo.root).journal, 1), early)  # after iteration 1
    more = ["continue", "missions-demo-r1", *agent]
    assert cli(*more, "--max-iterations", "3", cwd=repo.root).returncode == 0
    logs = RepoPaths(repo.root).run("missions-demo-r1").logs
    before = {path.name: path.read_bytes() for path in logs.iterdir() if path.is_file()}
    lost = sorted(name for name in before if name.startswith(("iteration-0002", "iteration-0003")))

    _code, report = doctor(repo.root, "--restore", "--from", str(early), "--force")
    (folder,) = report["restored"]["logs_set_aside"]
    stamp = report["restored"]["refs_set_aside"][0].split("-before-restore-")[1]
    _code, again = doctor(repo.root, "--restore", "--from", str(early), "--force")
    continued = cli(*more, "--max-iterations", "2", cwd=repo.root)
    assert continued.returncode == 0, continued.stderr
    assert Path(folder) == logs / f"before-restore-{stamp}"
    assert lost and sorted(path.name for path in Path(folder).iterdir()) == lost
    assert all((Path(folder) / name).read_bytes() == before[name] for name in lost)
    kept = [name for name in before if name not in lost]
    assert all((logs / name).read_bytes() == before[name] for name in kept)
    assert again["restored"]["logs_set_aside"] == []
    assert (logs / "iteration-0002-evaluator.log").is_file()
    assert not (logs / "iteration-0002-evaluator-2.log").exists()


def test_doctor_is_healthy_right_after_a_restore_and_still_finds_a_rewrite(
    repo: Repo, mission_dir: Path, tmp_path: Path
) -> None:
    """The backups taken after the restored one hold the decisions the user rolled back:
    compared with the journal, they made doctor report an error whose fix (`--restore
    --force`) undid the restore. The restore moves them into `backups/before-restore-
    <stamp>/` (kept); a journal rewritten after the restore is still found."""
    agent = ["--agent", f"cmd:{sys.executable} {CMD_AGENT}", "--sandbox", "none"]
    start = ["run", "missions/demo", "--run-tag", "r1", "--max-iterations", "1", *agent]
    assert cli(*start, cwd=repo.root).returncode == 0
    journal = RepoPaths(repo.root).journal
    early = tmp_path / "early.sqlite3"
    shutil.copy(journal_backup(journal, 1), early)  # after iteration 1
    more = ["continue", "missions-demo-r1", *agent]
    assert cli(*more, "--max-iterations", "3", cwd=repo.root).returncode == 0
    newer = {path: path.read_bytes() for path in journal.parent.glob("backups/*.sqlite3")}

    _code, report = doctor(repo.root, "--restore", "--from", str(early), "--force")
    code, after = doctor(repo.root)
    assert code == 0 and after["healthy"], after
    folders = [Path(folder) for folder in report["restored"]["backups_set_aside"]]
    stamp = report["restored"]["refs_set_aside"][0].split("-before-restore-")[1]
    assert [folder.name for folder in folders] == [f"before-restore-{stamp}"] * 2
    beside = journal.parent / "backups" / f"before-restore-{stamp}"
    assert beside in folders  # and the other outside the repository, with the same files
    moved = [path for path in newer if (beside / path.name).is_file()]
    assert moved and not any(path.exists() for path in moved)
    # kept, never deleted: each moved or where it was, as it was
    assert all(((beside / path.name) if path in moved else path).read_bytes() == data
               for path, data in newer.items())  # fmt: skip

    assert cli(*more, "--max-iterations", "2", cwd=repo.root).returncode == 0
    forge_away_iteration(journal, 1)  # the seals stay valid: only a backup can tell
    code, tampered = doctor(repo.root)
    (found,) = [f for f in tampered["findings"] if "disagrees" in f["message"]]
    assert code == 1 and "iteration 1 (keep)" in found["message"], found


def test_the_logs_a_restore_sets_aside_are_those_of_iterations_and_sessions_it_lacks() -> None:
    """A log of an iteration the restored journal lacks goes aside, and in a lane's folder
    one of a session after those the journal has the lane start; nothing else does."""
    from autoresearch.journal.integrity import RecordedRun
    from autoresearch.supervisor.doctor import log_of_lost_work

    run = RecordedRun("r", "autoresearch/r", "c1", frozenset({0, 1, 2}), {1: 3})
    cases = [  # (file name, the lane's sessions started: None in the run's own folder) → aside
        (("iteration-0002-agent.log", None), False),  # an iteration the journal holds
        (("iteration-0003-evaluator-2.log", None), True),
        (("iteration-0003-kept-before-restore.patch", None), True),
        (("iteration-0000-evaluator-3.log", None), False),  # the baseline's
        (("session-0003-agent.log", 3), False),  # a session the journal has the lane start
        (("session-0004-evaluator-1.log", 3), True),
        (("session-0001-agent.log", 0), True),  # a lane the journal never saw start
        (("session-0009-agent.log", None), False),  # not in a lane's folder
        (("run.log", None), False),
        (("iteration-x-agent.log", None), False),
    ]
    assert [log_of_lost_work(name, run, sessions) for (name, sessions), _ in cases] == [
        want for _, want in cases
    ]


def test_a_session_artifact_built_past_the_backup_is_set_aside_and_the_run_goes_on(
    repo: Repo, mission_dir: Path, tmp_path: Path
) -> None:
    """The throttle lets a backup lag a decision behind the journal; a session after that
    decision built on its keep. Restored, resumed, that session's candidate.json would fail
    the run (its base is no commit the restored journal kept): the restore moves it aside
    with the logs of the iterations it goes back past, and the run goes on."""
    agent = ["--agent", f"cmd:{sys.executable} {CMD_AGENT}", "--sandbox", "none"]
    start = ["run", "missions/demo", "--run-tag", "r1", "--max-iterations", "1", *agent]
    assert cli(*start, cwd=repo.root).returncode == 0  # FAKE_PLAN improve: every session kept
    early = tmp_path / "early.sqlite3"
    shutil.copy(journal_backup(RepoPaths(repo.root).journal, 1), early)  # after keep 1
    more = ["continue", "missions-demo-r1", *agent, "--max-iterations", "3"]
    # keep 2, then the driver dies as session 3's artifact waits for its step
    cut = cli(*more, cwd=repo.root, env={"AUTORESEARCH_FAILPOINTS": "loop.after_agent@2"})
    run = RepoPaths(repo.root).run("missions-demo-r1")
    left = run.candidate.read_bytes()
    assert cut.returncode == -9 and b'"status": "candidate"' in left, cut.stderr

    _code, report = doctor(repo.root, "--restore", "--from", str(early), "--force")
    continued = cli(*more, cwd=repo.root)  # the backup's run had completed
    assert continued.returncode == 0, continued.stderr
    shown = json.loads(cli("status", "missions-demo-r1", "--json", cwd=repo.root).stdout)
    assert shown["status"] == "completed" and shown["iteration"] == 3, shown
    (aside,) = (Path(folder) for folder in report["restored"]["logs_set_aside"])
    assert (aside / "candidate.json").read_bytes() == left
    # what the session built stays reachable, and the continued run saved its change
    (kept_ref,) = report["restored"]["refs_set_aside"]
    assert "/kept-before-restore-" in kept_ref
    assert (run.logs / "iteration-0002-kept-before-restore.patch").is_file()

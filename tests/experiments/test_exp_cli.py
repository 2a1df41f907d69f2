"""`autoresearch exp …` as an agent uses it: real CLI processes, --json, one-line errors."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

from exp_helpers import CHECKS

from helpers import Repo, cli, make_repo


def exp(repo: Repo, *args: str, code: int = 0) -> Any:
    done = cli("exp", *args, "--json", cwd=repo.root)
    assert done.returncode == code, done.stderr
    return json.loads(done.stdout)


def test_a_scripted_agent_drives_ten_runs(repo: Repo) -> None:
    repo.write("autoresearch.checks.sh", CHECKS)
    repo.write("mem.txt", "10\n")
    init = exp(
        repo,
        "init",
        "--name",
        "Tune value",
        "--metric",
        "score",
        "--unit",
        "ms",
        "--secondary",
        "mem",
        "--scope",
        "value.txt",
        "--max-iterations",
        "12",
    )
    assert init["branch"].startswith("autoresearch/tune-value-")
    branch = init["branch"]

    # (value, extra file, expected run status, logged status, flags)
    plan: list[tuple[str, str | None, str, str, list[str]]] = [
        ("100", None, "pass", "keep", []),  # 1 baseline
        ("90", None, "pass", "keep", []),  # 2
        ("95", None, "pass", "discard", []),  # 3
        ("85", "crash.flag", "fail", "crash", []),  # 4
        ("85", "broken.flag", "pass", "checks_failed", []),  # 5
        ("80", None, "pass", "keep", []),  # 6
        ("92", None, "pass", "discard", []),  # 7
        ("79", None, "pass", "keep", []),  # 8
        ("60", None, "pass", "discard", []),  # 9
        ("78", None, "pass", "keep", ["--flag", "9:measured on a cold cache"]),  # 10
    ]
    for number, (value, extra, run_status, status, flags) in enumerate(plan, start=1):
        repo.write("value.txt", value + "\n")
        if extra:
            repo.write(extra, "")
        report = exp(repo, "run", code=0 if status in ("keep", "discard") else 1)
        assert (report["run"], report["status"]) == (number, run_status)
        if status == "checks_failed":
            assert report["checks"]["status"] == "fail"
        # the numbers suggest keeping run 9; the agent distrusts it, discards it, flags it later
        assert report["suggested_status"] == ("keep" if number == 9 else status)
        logged = exp(
            repo,
            "log",
            "--status",
            status,
            "-d",
            f"try {value}",
            "--asi",
            json.dumps({"hypothesis": f"h{number}"}),
            *flags,
        )
        assert logged["run"] == number and logged["status"] == status
        assert not (repo.root / "crash.flag").exists() and not (repo.root / "broken.flag").exists()

    status = exp(repo, "status")
    assert status["session"]["branch"] == branch
    assert status["counts"] == {"keep": 5, "discard": 3, "crash": 1, "checks_failed": 1}
    assert status["progress"] == {"logged": 10, "max": 12, "reached": False}
    assert status["baseline"]["run"] == 1 and status["baseline"]["metric"] == 100.0
    assert status["best"]["run"] == 10 and status["best"]["metric"] == 78.0
    assert status["best"]["delta_pct"] == -22.0
    # the contract's formula by hand: non-flagged keep/discard values (run 9 is flagged)
    values = [100.0, 90.0, 95.0, 80.0, 92.0, 79.0, 78.0]
    center = statistics.median(values)
    mad = statistics.median(abs(v - center) for v in values)
    assert status["confidence"]["value"] == abs(78.0 - 100.0) / mad
    assert status["confidence"]["label"] == "likely real"
    history = status["history"]
    assert [h["run"] for h in history] == list(range(1, 11))
    assert [h["status"] for h in history] == [p[3] for p in plan]
    assert history[8]["flagged"] and history[8]["flag_reason"] == "measured on a cold cache"
    assert history[3]["metric"] is None and history[2]["hypothesis"] == "h3"
    assert all(
        h["patch_path"] for h in history if h["status"] in ("discard", "crash", "checks_failed")
    )
    assert status["pending"] is None and status["unjustified"] == []
    # git: only the kept experiments are on the branch, each with its Result trailer
    subjects = repo.git("log", "--format=%s", "main..HEAD").splitlines()
    assert subjects == ["try 78", "try 79", "try 80", "try 90", "autoresearch: harness setup"]
    assert repo.git("log", "-1", "--format=%b").strip() == (
        'Result: {"status":"keep", "score":78, "mem":10}'
    )
    assert (repo.root / "value.txt").read_text() == "78\n"


def test_human_output_and_notes_and_resume(repo: Repo) -> None:
    done = cli(
        "exp", "init", "--name", "n", "--metric", "score", "--max-iterations", "5", cwd=repo.root
    )
    assert done.returncode == 0 and "created and checked out branch autoresearch/n-" in done.stdout
    done = cli("exp", "run", cwd=repo.root)
    assert done.returncode == 0
    assert "run #1 passed" in done.stdout and "score: 100  ← use these values in log" in done.stdout
    resume = cli("exp", "resume-message", cwd=repo.root).stdout
    assert "Run #1 completed but was never logged. Log it first" in resume
    assert "never game the benchmark" in resume
    assert "until 5 runs are logged" in resume
    done = cli("exp", "log", "--status", "keep", "-d", "baseline", cwd=repo.root)
    assert done.returncode == 0 and "run #1 logged as keep: baseline" in done.stdout
    cli("exp", "notes", "--body", "# Objective\nsmaller value\n", cwd=repo.root)
    done = cli("exp", "notes", "--append-idea", "try 42", cwd=repo.root)
    assert done.stdout.endswith("# Objective\nsmaller value\n\n## Ideas\n- try 42\n")
    status = cli("exp", "status", cwd=repo.root).stdout
    for text in (
        "session #1 'n' on autoresearch/n-",
        "runs:        1/5 logged",
        "baseline:    #1 100",
        "  #1   keep",
        "pending run: none",
        "## Ideas",
        "- try 42",
    ):
        assert text in status
    resume = cli("exp", "resume-message", "--json", cwd=repo.root)
    assert "was never logged" not in json.loads(resume.stdout)["message"]
    off = cli("exp", "off", cwd=repo.root)
    assert off.returncode == 0 and "closed session #1" in off.stdout


def test_expected_errors_are_one_line_exit_2(repo: Repo, tmp_path: Path) -> None:
    cases = [
        (["exp", "status"], "no active experiment session on branch main: write autoresearch.sh"),
        (["exp", "init", "--name", "n"], "init: metric required for a new session"),
    ]
    for args, message in cases:
        done = cli(*args, cwd=repo.root)
        assert (done.returncode, done.stdout) == (2, "")
        assert done.stderr.startswith(f"autoresearch: {message}")
        assert done.stderr.count("\n") == 1
    cli("exp", "init", "--name", "n", "--metric", "score", cwd=repo.root)
    errors = {
        (
            "exp",
            "log",
            "--status",
            "keep",
            "-d",
            "x",
        ): "no pending run available. Run `autoresearch exp run` first.",
        (
            "exp",
            "log",
            "--status",
            "keep",
            "-d",
            "x",
            "--metrics",
            "[1]",
        ): "--metrics must be a JSON object",
        ("exp", "log", "--status", "keep", "-d", "x", "--flag", "nope"): "--flag takes RUN:REASON",
        ("exp", "notes"): "notes: give a body to replace the notes, or an idea to append",
    }
    for args, message in errors.items():
        done = cli(*args, cwd=repo.root)
        assert done.returncode == 2 and done.stderr.startswith(f"autoresearch: {message}")
        assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1
    (tmp_path / "plain").mkdir()
    done = cli("exp", "status", cwd=tmp_path / "plain")
    assert done.returncode == 2 and "not inside a git repository" in done.stderr


def test_repo_option_points_at_a_session_worktree(repo: Repo) -> None:
    init = exp(repo, "init", "--name", "wt", "--metric", "score", "--worktree")
    wt = init["worktree"]
    done = cli("--repo", wt, "exp", "run", "--json", cwd=repo.root)
    assert done.returncode == 0 and json.loads(done.stdout)["metric"] == 100.0
    done = cli("exp", "status", cwd=repo.root)
    assert done.returncode == 2 and f"in the worktree {wt} (cd there)" in done.stderr


def test_session_commands_write_nothing_in_a_repository_without_a_session(tmp_path: Path) -> None:
    fresh = make_repo(tmp_path / "fresh")
    exclude = fresh.root / ".git" / "info" / "exclude"
    before = exclude.read_text() if exclude.exists() else None
    for args in (
        ["exp", "status"],
        ["exp", "status", "--json"],
        ["exp", "resume-message"],
        ["exp", "run"],
        ["exp", "log", "--status", "discard", "-d", "x"],
        ["exp", "notes", "--append-idea", "x"],
        ["exp", "off"],
    ):
        done = cli(*args, cwd=fresh.root)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.startswith("autoresearch: no active experiment session on branch main")
    assert fresh.git("status", "--porcelain", "--ignored") == ""
    assert not (fresh.root / ".autoresearch").exists()
    assert (exclude.read_text() if exclude.exists() else None) == before


def test_reinit_with_only_seal_or_new_segment_never_says_the_session_is_unchanged(
    repo: Repo,
) -> None:
    """Sealing and a new segment change the session: the text says what changed, never the
    'no field given: the session is unchanged' line (`exp init --seal` used to print both)."""
    assert cli("exp", "init", "--name", "n", "--metric", "score", cwd=repo.root).returncode == 0
    unchanged = "no field given: the session is unchanged"
    sealed = cli("exp", "init", "--seal", cwd=repo.root)
    assert sealed.returncode == 0, sealed.stderr
    assert "sealed autoresearch.sh: `autoresearch exp run` measures nothing" in sealed.stdout
    assert unchanged not in sealed.stdout, sealed.stdout
    segment = cli("exp", "init", "--new-segment", cwd=repo.root)
    assert segment.returncode == 0, segment.stderr
    assert "started segment 2: new baseline" in segment.stdout
    assert unchanged not in segment.stdout, segment.stdout
    nothing = cli("exp", "init", cwd=repo.root)
    assert nothing.returncode == 0 and unchanged in nothing.stdout

"""A full disk (a real, small tmpfs): one line that says so and how to go on, no traceback, no
crash log, and nothing lost – once space is freed, `resume` finishes the run with every kept
commit. Needs the right to mount (root in CI's container); skipped elsewhere."""

from __future__ import annotations

import contextlib
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import cli, git

DISK_BYTES = 48 * 1024 * 1024


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={DISK_BYTES}", "tmpfs", str(mount)],
        capture_output=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(disk: Path, leave: int) -> Path:
    """Fill the disk up to `leave` bytes."""
    filler = disk / "filler"
    with filler.open("wb") as handle, contextlib.suppress(OSError):
        chunk = b"\0" * (1 << 20)
        while True:
            handle.write(chunk)
            handle.flush()
    with filler.open("r+b") as handle:
        size = filler.stat().st_size
        handle.truncate(max(0, size - leave))
    return filler


def run_exists(repo: Path) -> bool:
    done = cli("--repo", str(repo), "status", "--json", cwd=repo)
    runs = json.loads(done.stdout)["runs"] if done.returncode == 0 else []
    return any(r["run_id"] == "missions-tune-sgd-f1" for r in runs)


def test_a_full_disk_is_one_line_and_resume_finishes(small_disk: Path) -> None:
    repo = small_disk / "demo"
    done = cli("demo", str(repo), "--iterations", "1", cwd=small_disk)
    assert done.returncode == 0, done.stderr
    run = ["--repo", str(repo), "run", "missions/tune-sgd", "--agent", "offline",
           "--max-iterations", "6", "--run-tag", "f1"]  # fmt: skip
    filler = fill(small_disk, leave=384 * 1024)
    hits = 0
    for _ in range(16):  # each attempt runs until the disk is full again
        exists = run_exists(repo)
        resume = ["--repo", str(repo), "resume", "missions-tune-sgd-f1"]
        done = cli(*(resume if exists else run), cwd=repo)
        if done.returncode == 0:
            break
        assert "Traceback" not in done.stderr, done.stderr
        errors = [line for line in done.stderr.splitlines() if line.startswith("autoresearch:")]
        assert errors and "no space left on device" in errors[-1], done.stderr
        assert len([e for e in errors if "no space" in e]) == 1, done.stderr
        assert done.returncode == 2, done.stderr
        hits += 1
        # free a little each time: the run goes on a bit further before the next hit
        with filler.open("r+b") as handle:
            handle.truncate(max(0, filler.stat().st_size - 192 * 1024))
        hint = (
            "then resume the run: autoresearch resume missions-tune-sgd-f1"
            if run_exists(repo)
            else "then run the command again"
        )
        assert hint in errors[-1], errors[-1]
    else:
        filler.unlink()
        done = cli("--repo", str(repo), "resume", "missions-tune-sgd-f1", cwd=repo)
        assert done.returncode == 0, done.stderr
    print("disk-full hits:", hits)
    assert hits >= 1, "the disk never filled up"
    assert not (repo / ".autoresearch/crash").exists()
    details = json.loads(
        cli("--repo", str(repo), "status", "missions-tune-sgd-f1", "--json", cwd=repo).stdout
    )
    assert details["status"] == "completed", details["stop_reason"]
    worktree = Path(details["manifest"]["worktree_path"])
    head = git(worktree, "rev-parse", "HEAD")
    assert head == details["last_kept_commit"]
    for it in details["iterations"]:
        if it["decision"] == "keep":
            git(worktree, "merge-base", "--is-ancestor", it["candidate_commit"], head)

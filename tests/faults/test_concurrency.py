"""Concurrent drivers: one prepare wins among twenty; steps on one run never interleave."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from helpers import GIT_ENV, Repo, artifact, edit_and_commit, write_artifact


def spawn(repo: Repo, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "autoresearch", *args],
        cwd=repo.root,
        env={**os.environ, **GIT_ENV},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_twenty_concurrent_prepares_have_exactly_one_winner(repo: Repo, mission_dir: Path) -> None:
    procs = [
        spawn(repo, "prepare", "missions/demo", "--run-tag", f"c{i}", "--json") for i in range(20)
    ]
    results = [(p.wait(timeout=120), *p.communicate()) for p in procs]
    winners = [json.loads(out)["run_id"] for code, out, _ in results if code == 0]
    assert len(winners) == 1, [err for _, _, err in results]
    losers = [" ".join(err.split()[:2]) for code, _, err in results if code != 0]
    assert losers == [f"autoresearch: autoresearch_active_run_exists:{winners[0]}"] * 19
    worktrees = list((repo.root / ".autoresearch/worktrees").iterdir())
    assert [w.name for w in worktrees] == [winners[0]]


def test_concurrent_steps_are_serialized(repo: Repo, mission_dir: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "autoresearch", "prepare", "missions/demo", "--run-tag", "s1", "--json"],
        cwd=repo.root, env={**os.environ, **GIT_ENV}, capture_output=True, text=True, check=True,
    )  # fmt: skip
    manifest = json.loads(done.stdout)
    worktree = Path(manifest["worktree_path"])
    commit = edit_and_commit(worktree, {"value.txt": "9\n"})
    write_artifact(
        Path(manifest["candidate_file"]),
        artifact(candidate_commit=commit, base_commit=manifest["last_kept_commit"]),
    )
    procs = [spawn(repo, "step", manifest["run_id"], "--json") for _ in range(8)]
    results = [(p.wait(timeout=120), *p.communicate()) for p in procs]
    recorded = [json.loads(out) for code, out, _ in results if code == 0]
    refused = [" ".join(err.split()[:5]) for code, _, err in results if code != 0]
    # a step that waited for the lock finds the placeholder the first one left: no session
    # wrote an artifact since, and a step by hand says so instead of recording a noop
    busy = f"autoresearch: autoresearch_active_run_exists:{manifest['run_id']}"
    unwritten = "autoresearch: no session has written"
    assert all(r.startswith((busy, unwritten)) for r in refused), refused
    assert sorted(r["iteration"] for r in recorded) == list(range(1, len(recorded) + 1))
    assert [r["decision"] for r in recorded].count("keep") == 1
    ledger = json.loads(Path(manifest["ledger_file"]).read_text())["entries"]
    assert len(ledger) == len(recorded) + 1

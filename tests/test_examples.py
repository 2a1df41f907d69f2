"""The missions under examples/ are valid and run end to end with the offline agent."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from helpers import cli, make_repo

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.parametrize(
    ("name", "fmt", "direction"),
    [("cache-hit-rate", "json", "higher"), ("sort-comparisons", "metric", "lower")],
)
def test_example_mission_runs(tmp_path: Path, name: str, fmt: str, direction: str) -> None:
    repo = make_repo(tmp_path / "repo")
    shutil.copytree(EXAMPLES / name, repo.root / "examples" / name)
    repo.commit("add the example")
    mission = f"examples/{name}"
    check = json.loads(cli("check", mission, "--json", cwd=repo.root).stdout)
    assert (check["evaluator"]["format"], check["evaluator"]["direction"]) == (fmt, direction)
    assert check["tune"] is not None
    done = cli(
        "run", mission, "--agent", "offline", "--max-iterations", "4", "--json", cwd=repo.root
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["status"] == "completed"
    assert summary["baseline_score"] is not None
    assert summary["counts"].get("error", 0) == 0


def test_offline_agent_without_tune_block_is_refused(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    repo.mission()
    done = cli("run", "missions/demo", "--agent", "offline", cwd=repo.root)
    assert done.returncode == 2
    assert "the offline agent needs a `tune:` block" in done.stderr


def test_demo_into_a_non_empty_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "file").write_text("x")
    done = cli("demo", str(tmp_path / "taken"), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == f"autoresearch: demo directory is not empty: {tmp_path / 'taken'}"


@pytest.mark.parametrize("where", ["a-file", "a-file/sub"])
def test_demo_where_a_file_stands_is_refused_not_a_crash(tmp_path: Path, where: str) -> None:
    # A file in the way is the user's input, not a bug: it used to be an internal error
    # (NotADirectoryError, exit 3, a crash log).
    (tmp_path / "a-file").write_text("x")
    done = cli("demo", str(tmp_path / where), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(
        f"autoresearch: cannot make the demo directory {tmp_path / where}: "
    )
    assert "internal error" not in done.stderr


def test_demo_makes_visible_progress(tmp_path: Path) -> None:
    done = cli("demo", str(tmp_path / "demo"), "--iterations", "12", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["status"] == "completed"
    assert summary["counts"]["keep"] >= 3
    assert summary["best_score"] < summary["baseline_score"] / 2

"""Which run a user means: the newest by default, a unique prefix, the closest id named."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from autoresearch.errors import NotFoundError
from autoresearch.supervisor.run_ids import NO_RUNS, pick_run_id
from helpers import Repo, cli

KNOWN = ["tune-sgd-t1", "tune-sgd-t2", "parser-speed-t1"]


@pytest.mark.parametrize(
    ("named", "meant"),
    [
        (None, "parser-speed-t1"),  # the newest (known is oldest first)
        ("tune-sgd-t2", "tune-sgd-t2"),
        ("parser", "parser-speed-t1"),
        ("tune-sgd-t1", "tune-sgd-t1"),
    ],
)
def test_the_run_a_user_means(named: str | None, meant: str) -> None:
    assert pick_run_id(named, KNOWN) == meant


@pytest.mark.parametrize(
    ("named", "known", "message"),
    [
        (None, [], NO_RUNS),
        (
            "tune",
            KNOWN,
            "run 'tune' is ambiguous: 2 runs start with it (tune-sgd-t1, tune-sgd-t2); "
            "give more of the id",
        ),
        ("tune-sdg-t1", KNOWN, "unknown run: tune-sdg-t1 (did you mean tune-sgd-t1?)"),
        ("zzz", KNOWN, "unknown run: zzz"),
        ("", KNOWN, "unknown run: "),
    ],
)
def test_what_no_run_answers(named: str | None, known: list[str], message: str) -> None:
    with pytest.raises(NotFoundError) as caught:
        pick_run_id(named, known)
    assert str(caught.value) == message


def test_report_and_status_take_the_newest_run_or_a_prefix(repo: Repo, mission_dir: Path) -> None:
    agent = f"cmd:{sys.executable} {Path(__file__).parents[1] / 'agents/fakes/cmd_agent.py'}"
    done = cli(
        "run", "missions/demo", "--agent", agent, "--run-tag", "T1", "--max-iterations", "1",
        cwd=repo.root, env={"FAKE_PLAN": "improve"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    newest = cli("report", "--json", cwd=repo.root)
    assert newest.returncode == 0, newest.stderr
    assert json.loads(newest.stdout)["report_file"].endswith("missions-demo-t1/report/report.html")
    by_prefix = cli("status", "missions-demo", "--json", cwd=repo.root)
    assert json.loads(by_prefix.stdout)["run_id"] == "missions-demo-t1"
    typo = cli("finalize", "missions-demo-t2", cwd=repo.root)
    assert (typo.returncode, typo.stderr) == (
        2,
        "autoresearch: unknown run: missions-demo-t2 (did you mean missions-demo-t1?)\n",
    )

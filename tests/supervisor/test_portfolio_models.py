"""A portfolio of one agent with two models (issue 33: `--agent claude --model haiku --agent
claude --model opus`): `--model` given once per `--agent` pairs with them in order; each
member has its own name (`claude (haiku)`) in the allocation, the iterations and status; the
models are recorded so `continue` re-derives the allocation. On real git repositories with a
`cmd:` fake that reads its model from $AUTORESEARCH_MODEL."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from autoresearch.contracts.loop import LoopSettings
from autoresearch.errors import ContractError
from autoresearch.journal.db import open_journal
from autoresearch.journal.runs import get_run
from autoresearch.supervisor.portfolio import (
    WARMUP,
    check_portfolio,
    member_index,
    member_models,
    member_name,
    recorded_name,
)
from helpers import cli, make_repo, sandbox_text

FAKE = Path(__file__).parent / "fakes/portfolio_agent.py"
# its model decides: strong keeps, weak not; each session sleeps the same 0.2 s, so that a
# loaded machine's start-up jitter does not decide which model looks cheaper (cost: seconds)
AGENT = f"cmd:{sys.executable} {FAKE} 0.5 0.2"
WEAK, STRONG = (member_name(AGENT, model) for model in ("weak", "strong"))
PAIRED = ("--agent", AGENT, "--model", "weak", "--agent", AGENT, "--model", "strong")


def agent_names(root: Path, run_id: str) -> tuple[list[str | None], dict[str, object]]:
    shown = json.loads(cli("status", run_id, "--json", cwd=root).stdout)
    names = [(row.get("agent") or {}).get("agent") for row in shown["iterations"][1:]]
    return names, {a["agent"]: (a["sessions"], a["keeps"]) for a in shown["agents"]}


def test_one_agent_with_two_models_is_two_members_and_continue_keeps_them(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo")
    repo.mission(sandbox=sandbox_text(unboxed=True))
    ran = cli("run", "missions/demo", *PAIRED, "--max-iterations", "5", "--no-certify",
              "--run-tag", "PM", cwd=repo.root)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    with open_journal(repo.root) as journal:
        run = get_run(journal, "missions-demo-pm")
        assert run is not None and run.loop is not None
        assert (run.loop.agents, run.loop.models) == ((AGENT, AGENT), ("weak", "strong"))
    again = cli("continue", "missions-demo-pm", "--max-iterations", "10", "--no-certify",
                cwd=repo.root)  # fmt: skip
    assert again.returncode == 0, again.stderr
    names, shares = agent_names(repo.root, "missions-demo-pm")
    assert len(names) == 10 and set(names) == {WEAK, STRONG}, names
    weak = names.count(WEAK)
    # warmed up once, not again on continue; seconds on a loaded machine may give one more try
    assert WARMUP <= weak <= WARMUP + 1, names
    assert shares == {f"{AGENT} (weak)": (weak, 0), f"{AGENT} (strong)": (10 - weak, 10 - weak)}


def test_lanes_share_the_sessions_between_the_models(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    repo.mission(sandbox=sandbox_text(unboxed=True))
    ran = cli("run", "missions/demo", *PAIRED, "--lanes", "2", "--max-iterations", "8",
              "--no-certify", "--run-tag", "PML", cwd=repo.root)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    names, shares = agent_names(repo.root, "missions-demo-pml")
    assert len(names) == 8 and names.count(WEAK) >= WARMUP, names
    # the sessions in flight are told apart by member, not by agent: both models warmed up
    assert names.count(STRONG) > names.count(WEAK), names
    assert shares[f"{AGENT} (weak)"] == (names.count(WEAK), 0)


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ((*PAIRED, "--model", "other"), "--model is given 3 times for 2 --agent: give it once"),
        (("--agent", AGENT, "--model", "a", "--model", "b"), "--model is given 2 times for 1"),
        (("--agent", AGENT, "--agent", AGENT), f"agent {recorded_name(AGENT)} is given twice"),
        (("--agent", AGENT, "--model", "a") * 2, f"agent {member_name(AGENT, 'a')} is given"),
    ],
)
def test_models_that_do_not_pair_are_refused_before_anything_is_prepared(
    tmp_path: Path, given: tuple[str, ...], message: str
) -> None:
    repo = make_repo(tmp_path)
    repo.mission(sandbox=sandbox_text(unboxed=True))
    done = cli("run", "missions/demo", *given, cwd=repo.root)
    assert done.returncode != 0
    assert message in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not (repo.root / ".autoresearch/worktrees").exists()


@pytest.mark.parametrize(
    ("specs", "models", "first", "refused"),
    [
        (("claude", "claude"), ("haiku", "opus"), "haiku", None),
        (("claude", "codex"), None, None, None),
        (("claude", "codex"), None, "m", None),
        # `--model` once is the first agent's: its other member runs the default model
        (("claude", "claude"), None, "haiku", None),
        (("claude", "claude"), None, None, "agent claude is given twice"),
        (("claude", "claude"), ("opus", "opus"), "opus", "agent claude (opus) is given twice"),
        (("claude", "codex"), ("a", "b", "c"), "a", "--model is given 3 times for 2 --agent"),
        (("claude",), ("a", "b"), "a", "--model is given 2 times for 1 --agent"),
    ],
)
def test_check_portfolio(
    specs: tuple[str, ...], models: tuple[str, ...] | None, first: str | None, refused: str | None
) -> None:
    if refused is None:
        check_portfolio(specs, models, first)
        return
    with pytest.raises(ContractError, match=re.escape(refused)):
        check_portfolio(specs, models, first)


def test_a_portfolio_recorded_before_paired_models_reads_as_it_ran() -> None:
    old = LoopSettings.from_dict({"agent": "claude", "agents": ["claude", "codex"], "model": "m"})
    # `--model` given once was the first agent's, and still is
    assert member_models(old) == ("m", None)
    assert "models" not in old.to_dict()  # a record stays as it was written
    # its sessions recorded the plain agent name: they still count for their member
    assert member_index(old.agents or (), member_models(old)) == {
        "claude": 0, "codex": 1, "claude (m)": 0,
    }  # fmt: skip
    # the same agent twice: only its member names tell the sessions apart
    both = member_index(("claude", "claude"), ("haiku", "opus"))
    assert both == {"claude (haiku)": 0, "claude (opus)": 1}


def test_resume_given_one_model_changes_the_first_members_only() -> None:
    recorded = LoopSettings(agent="a", agents=("a", "a"), model="x", models=("x", "y"))
    assert recorded.over(LoopSettings(agent="a", model="z")).models == ("z", "y")

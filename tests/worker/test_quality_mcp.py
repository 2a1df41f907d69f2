"""`quality_mode: high` of analyze and review through the real MCP client against a scripted
gateway on 127.0.0.1 that answers each role (main, independent, red team, arbiter) as the test
says: a clean run passes with the arbiter's answer; a truncated, empty or mismatched-model
answer fails, an invalid citation or a contradiction the arbiter leaves open needs a direct
review – each with answer null, never an ordinary answer instead."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mcp"))

from gateway_server import Gateway, Step
from mcp_helpers import connect
from worker_helpers import job_repo

from autoresearch.mcp.server import build_server
from helpers import Repo

pytestmark = pytest.mark.anyio

ROLE_MARKS = {
    "You are the main analysis": "main",
    "independent second analysis": "independent",
    "You are the red team": "red_team",
    "You are an independent arbiter": "arbiter",
}
QUESTION = {"question": "What does load return?", "files": ["src/keys.py"], "quality_mode": "high"}


def role_of(body: dict[str, Any]) -> str:
    system = body["messages"][0]["content"]
    return next(role for mark, role in ROLE_MARKS.items() if mark in system)


def branch(verdict: str = "supported", cite: str = "src/keys.py:2", **kw: Any) -> Step:
    return Step(text=f"load returns the parsed keys ({cite}).\nVERDICT: {verdict}", **kw)


def arbiter(agreement: str = "agree", verdict: str = "supported", resolution: str = "") -> Step:
    answer = {
        "answer": "load returns the parsed keys (src/keys.py:2).",
        "agreement": agreement,
        "verdict": verdict,
        "resolution": resolution,
    }
    return Step(text="```json\n" + json.dumps(answer) + "\n```")


class Roles:
    """The scripted gateway: each role's step, and the roles asked in order."""

    def __init__(self, **steps: Step) -> None:
        self.steps = {"main": branch(), "independent": branch(), "red_team": branch()}
        self.steps["arbiter"] = arbiter()
        self.steps.update(steps)
        self.asked: list[str] = []

    def __call__(self, body: dict[str, Any]) -> Step:
        role = role_of(body)
        self.asked.append(role)
        return self.steps[role]


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    repo = job_repo(tmp_path / "repo")
    repo.write("src/keys.py", "def load(path):\n    return parse(open(path).read())\n")
    repo.commit("keys")
    return repo


@pytest.fixture
def gateway(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    def start(roles: Roles) -> Gateway:
        gw = Gateway([], route=roles)
        monkeypatch.setenv("AUTORESEARCH_GATEWAY_URL", gw.url)
        monkeypatch.setenv("AUTORESEARCH_GATEWAY_MODELS", "cheap")
        monkeypatch.setenv("AUTORESEARCH_GATEWAY_MAX_ATTEMPTS", "1")
        return gw

    yield start


async def ask(repo: Repo, gateway: Any, roles: Roles, args: dict[str, Any] = QUESTION) -> Any:
    with gateway(roles):
        async with connect(build_server(repo.root)) as t:
            return await t.ok("analyze", args)


async def test_three_agreeing_branches_and_the_arbiter_pass(repo: Repo, gateway: Any) -> None:
    roles = Roles()
    done = await ask(repo, gateway, roles)
    quality = done.data["quality"]
    assert (quality["contract_version"], quality["status"]) == ("quality.v1", "passed")
    assert quality["reason_codes"] == ["quality_passed"] and quality["agreement"] == "agree"
    assert roles.asked == ["main", "independent", "red_team", "arbiter"]
    assert quality["model_calls"] == 4 and len(done.data["attempts"]) == 4
    assert [r["answered_by"] for r in quality["roles"]] == ["cheap"] * 4
    assert done.data["answer"] == done.text == "load returns the parsed keys (src/keys.py:2)."


@pytest.mark.parametrize(
    ("steps", "asked", "reason"),
    [
        ({"main": branch(finish_reason="length")}, 1, "truncated_output"),
        ({"independent": Step(text="")}, 2, "empty_answer"),
        ({"red_team": branch(model="other-model")}, 3, "model_mismatch"),
        ({"arbiter": Step(text="I agree with all three.")}, 4, "arbiter_unparsable"),
        ({"arbiter": arbiter(), "main": branch(model="cheap-mini")}, 1, "model_mismatch"),
    ],
)
async def test_a_broken_answer_fails_closed_and_stops_the_calls(
    repo: Repo, gateway: Any, steps: dict[str, Step], asked: int, reason: str
) -> None:
    roles = Roles(**steps)
    done = await ask(repo, gateway, roles)
    quality = done.data["quality"]
    assert (quality["status"], quality["reason_codes"]) == ("failed", [reason])
    assert done.data["answer"] is None and len(roles.asked) == asked
    assert '"status":"failed"' in done.text  # the model reading the text sees it too
    broken = quality["roles"][-1]
    assert reason in broken["issues"] and broken["answer"] is not None  # shown for review


@pytest.mark.parametrize(
    ("steps", "reason"),
    [
        (  # the red team contradicts; the arbiter says it cannot settle it
            {"red_team": branch("unsupported"), "arbiter": arbiter("unresolved")},
            "unresolved_disagreement",
        ),
        (  # the arbiter claims agreement where the verdicts differ
            {"red_team": branch("unsupported"), "arbiter": arbiter("agree")},
            "unresolved_disagreement",
        ),
        ({"main": branch(cite="src/keys.py:99")}, "invalid_citation"),
        ({"independent": branch(cite="src/other.py:1")}, "invalid_citation"),
        ({"main": Step(text="It returns keys (src/keys.py:2).")}, "verdict_missing"),
    ],
)
async def test_doubt_needs_a_direct_review_never_an_answer(
    repo: Repo, gateway: Any, steps: dict[str, Step], reason: str
) -> None:
    roles = Roles(**steps)
    done = await ask(repo, gateway, roles)
    quality = done.data["quality"]
    assert (quality["status"], quality["reason_codes"]) == ("needs_direct_review", [reason])
    assert done.data["answer"] is None and len(roles.asked) == 4
    assert all(r["answer"] for r in quality["roles"])


async def test_a_resolved_disagreement_passes(repo: Repo, gateway: Any) -> None:
    settled = arbiter("resolved", resolution="src/keys.py:2 returns parse(...), so supported")
    roles = Roles(red_team=branch("unsupported"), arbiter=settled)
    done = await ask(repo, gateway, roles)
    assert done.data["quality"]["status"] == "passed" and done.data["answer"]


async def test_review_in_high_quality_mode(repo: Repo, gateway: Any) -> None:
    (repo.root / "src/keys.py").write_text("def load(path):\n    return {}\n")
    ship = Step(text="Drops parsing (src/keys.py:2).\nVERDICT: fix first")
    verdict = {"answer": "fix first: src/keys.py:2", "agreement": "agree", "verdict": "fix_first"}
    roles = Roles(
        main=ship, independent=ship, red_team=ship, arbiter=Step(text=json.dumps(verdict))
    )
    with gateway(roles):
        async with connect(build_server(repo.root)) as t:
            done = await t.ok("review", {"quality_mode": "high"})
    assert done.data["quality"]["status"] == "passed"
    assert done.data["quality"]["verdict"] == "fix_first"


async def test_standard_mode_is_one_call_without_a_quality_block(repo: Repo, gateway: Any) -> None:
    roles = Roles(main=Step(text="it returns keys"))
    with gateway(lambda body: Step(text="it returns keys")):
        async with connect(build_server(repo.root)) as t:
            done = await t.ok("analyze", {**QUESTION, "quality_mode": "standard"})
    assert done.data["quality"] is None and done.data["answer"] == "it returns keys"
    assert roles.asked == []

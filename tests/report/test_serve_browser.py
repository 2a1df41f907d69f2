"""The live report in a real headless Chromium (Debian's, as test_report_browser.py) while the
run advances underneath: each new iteration appears without a reload, the chosen filter
stays, nothing is fetched from anywhere but the server. The server is the real CLI, a
subprocess the test stops with Ctrl-C (SIGINT)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from report_helpers import artifacts_dir, submit_and_step
from serve_helpers import serve_cli

from autoresearch.supervisor.handle import RunHandle
from autoresearch.supervisor.prepare import prepare
from helpers import Repo, cli

# The page polls every 1.5 s and renders the plot on a change: far under this on a busy machine.
SHOWS_WITHIN_MS = 20_000


@pytest.fixture
def served(mission_dir: Path) -> Iterator[tuple[RunHandle, str]]:
    """A run going on (its driver lock held by the test) and `autoresearch serve` over it,
    stopped with Ctrl-C at the end: exit 0 and a one-line goodbye."""
    with prepare(mission_dir, run_tag="LIVE") as h:
        with serve_cli(h.repo.repo_root, h.run_id) as server:
            yield h, server.url
        assert server.returncode == 0, server.err
        assert server.out.strip() == f"stopped serving {server.url}"


def _numbers(page: Any) -> list[int]:
    shown = page.eval_on_selector_all(
        "#iterations tbody tr:not([hidden])", "rows => rows.map(r => r.cells[0].innerText)"
    )
    return [int(n) for n in shown]


def _wait_for_row(page: Any, number: int) -> None:
    page.wait_for_function(
        f"""() => Array.from(document.querySelectorAll("#iterations tbody tr"))
                 .some(r => r.cells[0].innerText === "{number}")""",
        timeout=SHOWS_WITHIN_MS,
    )


def test_new_iterations_appear_without_a_reload(served: tuple[RunHandle, str], page: Any) -> None:
    run, url = served
    requests: list[str] = []
    problems: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on(
        "console",
        lambda m: (
            problems.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None
        ),
    )
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.goto(url)
    page.wait_for_load_state("load")
    page.evaluate("window.loadedOnce = 'the first load'")
    assert _numbers(page) == [0]

    submit_and_step(run, {"value.txt": "5\n"}, "five: a real improvement")
    _wait_for_row(page, 1)
    assert _numbers(page) == [0, 1]
    assert "five: a real improvement" in page.locator("#iterations").inner_text()

    page.locator("[data-filter=kept]").click()  # a reader's choice survives the next update
    submit_and_step(run, {"value.txt": "3\n"}, "three: worse")
    _wait_for_row(page, 2)
    assert _numbers(page) == [0, 1]  # the discarded #2 is there, hidden by the filter
    assert page.locator("[data-filter=kept]").get_attribute("aria-pressed") == "true"
    page.locator("[data-filter=all]").click()  # and the table is wired again
    assert _numbers(page) == [0, 1, 2]

    assert page.evaluate("window.loadedOnce") == "the first load"
    assert page.evaluate("performance.getEntriesByType('navigation').length") == 1
    assert page.locator("#live").inner_text().startswith("live: running")
    assert problems == []
    assert all(r.startswith(url) for r in requests), requests
    assert sum(r == url for r in requests) >= 3  # the first load and one fetch per update
    page.screenshot(path=str(artifacts_dir() / "report-live.png"), full_page=True)


CMD_AGENT = f"cmd:{sys.executable} {Path(__file__).parents[1] / 'agents/fakes/cmd_agent.py'}"


def test_a_real_run_loop_shows_as_it_goes(repo: Repo, mission_dir: Path, page: Any) -> None:
    prepared = cli("prepare", str(mission_dir), "--run-tag", "LOOP", cwd=repo.root)
    assert prepared.returncode == 0, prepared.stderr
    with serve_cli(repo.root) as server:  # the newest run: the one just prepared
        page.goto(server.url)
        page.wait_for_load_state("load")
        page.evaluate("window.loadedOnce = 'the first load'")
        assert _numbers(page) == [0]
        done = cli(
            "resume", "missions-demo-loop", "--agent", CMD_AGENT, "--max-iterations", "2",
            cwd=repo.root, env={"FAKE_PLAN": "improve,worse"},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        _wait_for_row(page, 2)
        assert _numbers(page) == [0, 1, 2]
        page.wait_for_function(
            "() => document.getElementById('live').innerText.startsWith('live: completed')",
            timeout=SHOWS_WITHIN_MS,
        )
        assert page.evaluate("window.loadedOnce") == "the first load"
    assert server.returncode == 0, server.err

"""`autoresearch serve`: the live report's server over a real run's journal (no browser here;
test_serve_browser.py has the page in Chromium)."""

from __future__ import annotations

import json
import re
import signal
import urllib.error
import urllib.request
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import pytest
from report_helpers import lanes_run, submit_and_step
from serve_helpers import serve_cli

from autoresearch.errors import NotFoundError
from autoresearch.paths import RepoPaths
from autoresearch.report import run_data
from autoresearch.report.model import ReportData
from autoresearch.report.serve import LiveReport, Serving
from autoresearch.report.serve import serve_report as start
from autoresearch.supervisor.handle import RunHandle
from autoresearch.supervisor.prepare import prepare
from helpers import Repo, cli


def get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read()


def state(serving: Serving) -> dict[str, object]:
    status, body = get(serving.url + "state")
    assert status == 200
    found: dict[str, object] = json.loads(body)
    return found


@pytest.fixture
def live_run(mission_dir: Path) -> Iterator[RunHandle]:
    """A prepared run whose driver lock is held for the test: a run going on as it is served."""
    with prepare(mission_dir, run_tag="LIVE") as h:
        yield h


@pytest.fixture
def serving(live_run: RunHandle) -> Iterator[Serving]:
    root = live_run.repo.repo_root
    served = start(partial(run_data, root, live_run.run_id), journal=RepoPaths(root).journal)
    try:
        yield served
    finally:
        served.stop()


def test_state_changes_with_a_new_iteration_and_only_then(
    live_run: RunHandle, serving: Serving
) -> None:
    before = state(serving)
    assert before["iterations"] == 0 and before["live"] is True and before["kind"] == "run"
    assert state(serving)["version"] == before["version"]  # a new read alone changes nothing

    submit_and_step(live_run, {"value.txt": "5\n"}, "five: a real improvement")
    after = state(serving)
    assert after["version"] != before["version"]
    assert (after["iterations"], after["last"]) == (1, 1)


def test_the_page_is_the_report_with_the_live_script_and_its_links_are_served(
    live_run: RunHandle, serving: Serving
) -> None:
    submit_and_step(live_run, {"value.txt": "5\n"}, "five: a real improvement")
    status, page = get(serving.url)
    text = page.decode()
    assert status == 200 and "five: a real improvement" in text
    version = state(serving)["version"]
    assert f'<p id="live" data-version="{version}"' in text
    assert "the page follows it as it goes" in text and "Rebuild it with" not in text

    links = re.findall(r'<a href="([^"]+)">', text)
    assert links, "the rows link their logs"
    for link in links:
        url = urllib.request.urljoin(serving.url, link)
        assert get(url)[0] == 200, url


def test_a_read_is_reused_until_the_journal_changes(live_run: RunHandle) -> None:
    root = live_run.repo.repo_root
    reads: list[str] = []

    def counted() -> tuple[ReportData, Path]:
        reads.append("read")
        return run_data(root, live_run.run_id)

    live = LiveReport(counted, RepoPaths(root).journal)
    first = live.snapshot()
    assert live.snapshot() is first and len(reads) == 1

    submit_and_step(live_run, {"value.txt": "5\n"}, "five: a real improvement")
    assert live.snapshot().version != first.version and len(reads) == 2
    assert LiveReport(counted).snapshot() and len(reads) == 3  # no journal: every time


def test_a_lanes_run_is_served_with_its_lanes(repo: Repo) -> None:
    run_id = lanes_run(repo, "L")
    served = start(partial(run_data, repo.root, run_id), journal=RepoPaths(repo.root).journal)
    try:
        assert state(served)["iterations"] == 2
        page = get(served.url)[1].decode()
        assert ">lane</button></th>" in page and "spend per lane" in page
    finally:
        served.stop()


@pytest.mark.parametrize(
    "path", ["nothing", "../journal.sqlite3", "%2e%2e/%2e%2e/value.txt", "state/x", "etc/passwd"]
)
def test_no_other_file_is_served(serving: Serving, path: str) -> None:
    assert get(serving.url + path)[0] == 404


def test_a_request_under_another_host_name_is_refused(serving: Serving) -> None:
    port = serving.url.rsplit(":", 1)[1].rstrip("/")
    for host, status in [("evil.example", 403), (f"localhost:{port}", 200)]:
        asked = urllib.request.Request(serving.url + "state", headers={"Host": host})
        try:
            with urllib.request.urlopen(asked, timeout=10) as answer:
                assert answer.status == status
        except urllib.error.HTTPError as refused:
            assert refused.code == status


def test_a_request_that_breaks_is_one_line_and_the_server_goes_on(
    live_run: RunHandle, capsys: pytest.CaptureFixture[str]
) -> None:
    reads: list[str] = []

    def breaks_on_the_second_read() -> tuple[ReportData, Path]:
        reads.append("read")
        if len(reads) == 2:
            raise ValueError("a bug")
        return run_data(live_run.repo.repo_root, live_run.run_id)

    served = start(breaks_on_the_second_read)
    try:
        with pytest.raises(OSError):  # the connection closes with no answer
            get(served.url + "state")
        assert get(served.url + "state")[0] == 200
    finally:
        served.stop()
    err = capsys.readouterr().err
    assert err == "autoresearch: a request failed: ValueError('a bug')\n"


def test_an_unknown_run_is_refused_before_anything_listens(live_run: RunHandle) -> None:
    with pytest.raises(NotFoundError):
        start(partial(run_data, live_run.repo.repo_root, "no-such-run"))


def test_the_cli_refuses_an_unknown_run_in_one_line(live_run: RunHandle) -> None:
    done = cli("serve", "zzz", cwd=live_run.repo.repo_root, timeout=30)
    assert done.returncode == 2
    assert done.stderr.startswith("autoresearch: unknown run: zzz")
    assert len(done.stderr.splitlines()) == 1 and done.stdout == ""


def test_a_repository_without_runs_gets_no_journal(repo: Repo) -> None:
    done = cli("serve", cwd=repo.root, timeout=30)
    assert done.returncode == 2 and "no runs yet" in done.stderr
    assert not (repo.root / ".autoresearch").exists()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_the_cli_prints_the_url_serves_and_stops_on_a_signal_with_0(
    live_run: RunHandle, sig: signal.Signals
) -> None:
    with serve_cli(live_run.repo.repo_root, "--port", "0", stop=sig) as served:
        assert f"run {live_run.run_id}" in served.first_line  # the newest run by default
        assert get(served.url + "state")[0] == 200
    assert served.returncode == 0, served.err
    assert served.out.strip() == f"stopped serving {served.url}" and served.err == ""

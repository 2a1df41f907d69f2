"""The zero-model tools' core: pure decisions table-tested, search engines side by side, and
apply_edits killed with SIGKILL mid-batch in a real subprocess."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from worker_helpers import job_repo

from autoresearch.proc import SupervisedOutcome
from autoresearch.worker.tools import edits, search
from autoresearch.worker.tools.base import Workspace
from autoresearch.worker.tools.metrics import percentile, summarize
from autoresearch.worker.tools.reading import Risk, _windows, parse_diff, risk
from autoresearch.worker.tools.shell import FailureKind, classify, destructive, tool_kind
from helpers import Repo


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        ("pytest -q", FailureKind.TEST_FAILURE),
        ("python -m pytest tests", FailureKind.TEST_FAILURE),
        ("cd x && uv run mypy src", FailureKind.TYPECHECK_FAILURE),
        ("npx tsc --noEmit", FailureKind.TYPECHECK_FAILURE),
        ("ruff check .", FailureKind.LINT_FAILURE),
        ("cargo test", FailureKind.TEST_FAILURE),
        ("go build ./...", FailureKind.BUILD_FAILURE),
        ("FOO=1 ./run.sh", FailureKind.COMMAND_FAILED),
        ("ruff check . && pytest", FailureKind.TEST_FAILURE),
    ],
)
def test_tool_kind_from_the_command(command: str, kind: FailureKind) -> None:
    assert tool_kind(command) is kind


def _outcome(
    exit_code: int | None, timed_out: bool = False, spawn: str | None = None
) -> SupervisedOutcome:
    return SupervisedOutcome("t", 1, exit_code, timed_out=timed_out, spawn_error=spawn)


@pytest.mark.parametrize(
    ("outcome", "kind"),
    [
        (_outcome(0), FailureKind.NONE),
        (_outcome(1), FailureKind.TEST_FAILURE),
        (_outcome(127), FailureKind.MISSING_COMMAND),
        (_outcome(126), FailureKind.MISSING_COMMAND),
        (_outcome(None, spawn="no bash"), FailureKind.MISSING_COMMAND),
        (_outcome(None, timed_out=True), FailureKind.TIMEOUT),
    ],
)
def test_classify_uses_structured_facts(outcome: SupervisedOutcome, kind: FailureKind) -> None:
    assert classify("pytest", outcome) is kind


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("rm -rf build", "rm"),
        ("make && sudo make install", "sudo"),
        ("git reset --hard", "git reset --hard"),
        ("git -C . clean -fdx", "git clean"),
        ("git push origin main", "git push"),
        ("env X=1 rm f", "rm"),
        ("echo $(rm x)", "rm"),
        ("pytest -q", None),
        ("git status && git diff", None),
        ("echo 'rm is a word'", None),
        ("grep -r rm .", None),
    ],
)
def test_destructive_commands(command: str, reason: str | None) -> None:
    assert destructive(command) == reason


@pytest.mark.parametrize(
    ("path", "added", "deleted", "gone", "level"),
    [
        ("src/autoresearch/journal/schema.py", 1, 0, False, Risk.HIGH),
        ("migrations/001.sql", 1, 0, False, Risk.HIGH),
        ("pyproject.toml", 1, 0, False, Risk.HIGH),
        ("src/app.py", 1, 0, True, Risk.HIGH),
        ("src/app.py", 30, 20, False, Risk.MEDIUM),
        ("src/app.py", 3, 2, False, Risk.LOW),
        ("tests/test_app.py", 300, 0, False, Risk.LOW),
        ("README.md", 100, 100, False, Risk.LOW),
    ],
)
def test_risk(path: str, added: int, deleted: int, gone: bool, level: Risk) -> None:
    assert risk(path, added, deleted, gone) is level


def test_parse_diff_counts_and_hunks() -> None:
    text = (
        "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@ def f\n-a\n+b\n+c\n"
        "diff --git a/y b/y\ndeleted file mode 100644\n--- a/y\n+++ /dev/null\n@@ -1 +0,0 @@\n-z\n"
    )
    x, y = parse_diff(text)
    assert (x.path, x.added, x.deleted, x.hunks) == ("x.py", 2, 1, ["@@ -1,2 +1,2 @@ def f"])
    assert (y.path, y.deleted, y.deleted_file) == ("y", 1, True)


def test_windows_merge() -> None:
    import re

    lines = [f"l{i}" for i in range(10)]
    assert _windows(lines, [re.compile(r"l[23]$")], 1) == [(1, 5)]
    assert _windows(lines, [re.compile(r"l[18]$")], 1) == [(0, 3), (7, 10)]


def test_stats_pure() -> None:
    rows = [
        '{"tool": "a", "status": "ok", "bytes_read": 10, "bytes_returned": 2, "latency_ms": 5}',
        '{"tool": "a", "status": "error", "latency_ms": 7}',
        "garbage",
    ]
    s = summarize(rows, max_error_rate=0.4)
    assert (s.tools[0].calls, s.tools[0].errors, s.skipped_lines) == (2, 1, 1)
    assert s.over_threshold == ["a", "total"]
    assert percentile([1, 2, 3, 4], 50) == 2 and percentile([], 95) is None


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    repo = job_repo(tmp_path / "repo")
    repo.write("src/many.py", "".join(f"hit {i}\n" for i in range(30)))
    repo.commit("many")
    repo.write("src/untracked.py", "hit untracked\n")
    return repo


@pytest.mark.parametrize("mode", list(search.Mode))
def test_the_three_engines_agree(repo: Repo, mode: search.Mode) -> None:
    ws = Workspace(repo.root)
    query = search.Query("hit", mode, max_results=10)
    results = {}
    for engine in search.Engine:
        out = search.search(ws, query, engine)
        assert out["engine"] == engine.value
        del out["engine"], out["receipt"]["bytes_read"], out["receipt"]["bytes_returned"]
        results[engine] = out
    first = results[search.Engine.RIPGREP]
    assert first["total_matches"] == (31 if mode is search.Mode.COUNT else 12) and first["receipt"][
        "truncated"
    ] == (mode is search.Mode.LINES)
    if mode is search.Mode.LINES:
        for out in results.values():  # the order of files may differ; the set may not
            out["matches"] = sorted(map(str, out["matches"]))
    assert results[search.Engine.GIT_GREP] == first == results[search.Engine.PYTHON]


EDITS_SCRIPT = """
import sys
from pathlib import Path
from autoresearch.worker.tools import edits
from autoresearch.worker.tools.base import Workspace
root = Path(sys.argv[1])
edits.apply_edits(Workspace(root), [
    edits.Edit("src/a.py", "old", "new", count=200),
    edits.Edit("src/b.py", "old", "new", count=200),
    edits.Edit("src/c.py", "old", "new", count=200),
])
"""


@pytest.mark.parametrize(
    ("point", "after"), [("apply_edits.staged@2", "old"), ("apply_edits.replaced@1", "new")]
)
def test_apply_edits_killed_mid_batch_applies_whole_or_not_at_all(
    repo: Repo, point: str, after: str
) -> None:
    names = ["src/a.py", "src/b.py", "src/c.py"]
    for name in names:
        repo.write(name, "x = 'old'\n" * 200)
    env = {**os.environ, "AUTORESEARCH_FAILPOINTS": point}
    done = subprocess.run(
        [sys.executable, "-c", EDITS_SCRIPT, str(repo.root)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    texts = {n: (repo.root / n).read_text() for n in names}
    # Each file is whole – old or new, never a mix – at the instant of the kill.
    assert all(t in ("x = 'old'\n" * 200, "x = 'new'\n" * 200) for t in texts.values())
    assert edits.recover(Workspace(repo.root))
    assert {n: (repo.root / n).read_text() for n in names} == {
        n: f"x = '{after}'\n" * 200 for n in names
    }
    assert not list((repo.root / "src").glob(".*.edit"))
    assert not list((repo.root / ".autoresearch/worker/edits").iterdir())

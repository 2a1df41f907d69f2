"""Benchmark of the worker's zero-model tools on this repository (issue 16).

Per tool: the bytes the tool read against the bytes it returned to the caller (the context a
planning agent saves), and search latency side by side with plain `rg` on the same query
(median of N runs each, reported as a ratio). Nothing is asserted: this prints numbers.

    python bench/worker_tools.py [--runs N] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from autoresearch.worker.tools import reading, search
from autoresearch.worker.tools.base import Workspace
from autoresearch.worker.tools.shell import ShellRequest, shell

ROOT = Path(__file__).resolve().parents[1]


def cases(ws: Workspace) -> list[tuple[str, Any]]:
    files = ["src/autoresearch/proc.py", "src/autoresearch/git.py", "src/autoresearch/redact.py"]
    return [
        ("search lines 'def '", lambda: search.search(ws, search.Query("def ", max_results=50))),
        (
            "search files 'import'",
            lambda: search.search(ws, search.Query("import", search.Mode.FILES, max_results=500)),
        ),
        (
            "search count 'TODO|XXX'",
            lambda: search.search(ws, search.Query("TODO|XXX", search.Mode.COUNT)),
        ),
        (
            "read_pack 3 files, 2 symbols",
            lambda: reading.read_pack(ws, files, [], ["run_capture", "redact"], 3),
        ),
        ("diff_digest HEAD~5", lambda: reading.diff_digest(ws, "HEAD~5")),
        (
            "history src/autoresearch/git.py",
            lambda: reading.history(ws, "src/autoresearch/git.py", 50, (1, 200)),
        ),
        ("shell 'git log --stat -n 50'", lambda: shell(ws, ShellRequest("git log --stat -n 50"))),
    ]


def timed(work: Any, runs: int) -> float:
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        work()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        # Artifacts go to a copy's state folder, not this repository's.
        subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), tmp], check=True)
        ws = Workspace(Path(tmp))
        for name, work in cases(ws):
            r = work()["receipt"]
            ratio = r["bytes_returned"] / r["bytes_read"] if r["bytes_read"] else None
            rows.append(
                {
                    "case": name,
                    "bytes_read": r["bytes_read"],
                    "bytes_returned": r["bytes_returned"],
                    "returned_over_read": ratio,
                    "truncated": r["truncated"],
                }
            )
        rg = search.ripgrep()
        query = search.Query("def ", max_results=50)
        tool_ms = timed(lambda: search.search(ws, query), args.runs)
        rg_ms = timed(
            lambda: subprocess.run(
                [rg or "rg", "-n", "def ", "."], cwd=tmp, capture_output=True, check=False
            ),
            args.runs,
        )
    latency = {
        "search_ms": round(tool_ms, 2),
        "plain_rg_ms": round(rg_ms, 2),
        "ratio": round(tool_ms / rg_ms, 2) if rg_ms else None,
    }
    if args.json:
        print(json.dumps({"tools": rows, "search_latency": latency}, indent=2))
        return
    print(f"{'case':<36}{'read B':>12}{'returned B':>12}{'ret/read':>10}")
    for row in rows:
        ratio = "-" if row["returned_over_read"] is None else f"{row['returned_over_read']:.3f}"
        print(f"{row['case']:<36}{row['bytes_read']:>12}{row['bytes_returned']:>12}{ratio:>10}")
    print(
        f"search 'def ' (median of {args.runs}): tool {latency['search_ms']} ms, plain rg "
        f"{latency['plain_rg_ms']} ms, ratio {latency['ratio']}"
    )


if __name__ == "__main__":
    main()

"""Search latency of the worker's `search` per engine on a generated tree (issue 16).

One run measures, on the same generated git repository and the same queries: the tool with
ripgrep (the wheel's `rg`), with `git grep`, and with the Python walker, next to plain `rg`
as the reference. Each cell is the median of N runs in milliseconds; the ratios are against
the tool on ripgrep, so they compare engines on this machine, not machines. Nothing is
asserted: this prints numbers.

    python bench/search_latency.py [--files N] [--lines N] [--runs N] [--json]
"""

from __future__ import annotations

import argparse
import functools
import json
import random
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from autoresearch.worker.tools import search
from autoresearch.worker.tools.base import Workspace
from autoresearch.worker.tools.search import Engine, Mode, Query

GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
}
WORDS = ("alpha", "beta", "gamma", "delta", "value", "result", "config", "parse", "token")
QUERIES: tuple[tuple[str, Query], ...] = (
    ("lines, rare literal", Query("needle_marker", Mode.LINES, literal=True)),
    ("lines, common regex", Query(r"def \w+_7\(", Mode.LINES, max_results=200)),
    ("files, common word", Query("config", Mode.FILES, max_results=5000)),
    ("count, regex", Query(r"return (alpha|beta)", Mode.COUNT, max_results=5000)),
)


def generate(root: Path, files: int, lines: int, seed: int = 7) -> int:
    """A deterministic Python-like tree in a fresh git repository; returns its size in bytes."""
    rng = random.Random(seed)
    total = 0
    for n in range(files):
        body = []
        for i in range(lines):
            a, b = rng.choice(WORDS), rng.choice(WORDS)
            if i % 10 == 0:
                body.append(f"def {a}_{i % 9}({b}):")
            else:
                body.append(f"    return {a} + {b}  # {rng.randrange(10**6)}")
        if n % 97 == 0:
            body.append("needle_marker = True")
        path = root / f"pkg{n % 40:02d}" / f"mod_{n:05d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        text = "\n".join(body) + "\n"
        path.write_text(text)
        total += len(text)
    env = {**GIT_ENV, "PATH": "/usr/bin:/bin"}
    for argv in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "tree"]):
        subprocess.run(["git", *argv], cwd=root, env=env, check=True)
    return total


def median_ms(work: Callable[[], Any], runs: int) -> float:
    work()  # warm the page cache and the engine once
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        work()
        samples.append(time.perf_counter() - t0)
    return round(statistics.median(samples) * 1000, 2)


def plain_rg(rg: str, root: Path, query: Query) -> Callable[[], Any]:
    flags = {Mode.LINES: ["-n"], Mode.FILES: ["-l"], Mode.COUNT: ["-c"]}[query.mode]
    argv = [rg, *flags, *(["-F"] if query.literal else []), "-e", query.pattern, "."]
    return lambda: subprocess.run(argv, cwd=root, capture_output=True, check=False)


def measure(root: Path, runs: int) -> list[dict[str, Any]]:
    ws = Workspace(root)
    rg = search.ripgrep()
    if rg is None:
        raise SystemExit("no rg: install the ripgrep wheel (the dev extra has it)")
    rows = []
    for name, query in QUERIES:
        row: dict[str, Any] = {"query": name}
        answers = set()
        for engine in Engine:
            result = search.search(ws, query, engine)
            answers.add((result["total_matches"], result["total_files"]))
            row[engine.value] = median_ms(functools.partial(search.search, ws, query, engine), runs)
        row["plain_rg"] = median_ms(plain_rg(rg, root, query), runs)
        row["same_answer"] = len(answers) == 1  # every engine found the same matches
        base = row[Engine.RIPGREP.value]
        for key in (Engine.GIT_GREP.value, Engine.PYTHON.value, "plain_rg"):
            row[f"{key}/ripgrep"] = round(row[key] / base, 2) if base else None
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--lines", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        size = generate(root, args.files, args.lines)
        rows = measure(root, args.runs)
    tree = {"files": args.files, "lines_per_file": args.lines, "bytes": size, "runs": args.runs}
    if args.json:
        print(json.dumps({"tree": tree, "queries": rows}, indent=2))
        return
    print(
        f"tree: {args.files} files x {args.lines} lines ({size / 1e6:.1f} MB); "
        f"median of {args.runs} runs, ms (ratio to the tool on ripgrep)"
    )
    print(f"{'query':<22}{'ripgrep':>10}{'git grep':>18}{'python':>18}{'plain rg':>18}  same")
    for r in rows:
        cells = "".join(
            f"{r[k]:>9} ({r[f'{k}/ripgrep']:>5}x)" for k in ("git_grep", "python", "plain_rg")
        )
        print(f"{r['query']:<22}{r['ripgrep']:>10}{cells}  {r['same_answer']}")


if __name__ == "__main__":
    main()

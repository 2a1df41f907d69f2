"""Each test's CPU, for finding the slow ones on a shared machine, where wall time (pytest's
--durations) mostly measures the neighbours. Opt in with AUTORESEARCH_TEST_CPU_LOG=FILE: every
worker appends one JSON line per test (setup, call and teardown together):

    AUTORESEARCH_TEST_CPU_LOG=/tmp/cpu.jsonl python -m pytest -n 2 -q
    python tests/cpu_times.py /tmp/cpu.jsonl 40      # the 40 costliest tests and the totals

`cpu` is this process's user+system time plus that of the children it waited for in the test
(the `autoresearch` processes, git, evaluators); a child reaped later counts where it is reaped.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

LOG_VARIABLE = "AUTORESEARCH_TEST_CPU_LOG"


def _cpu_seconds() -> float:
    self_, children = (
        resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    )
    return self_.ru_utime + self_.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    log = os.environ.get(LOG_VARIABLE)
    cpu, wall = _cpu_seconds(), time.perf_counter()
    yield
    if log:
        line = {
            "test": item.nodeid,
            "cpu": _cpu_seconds() - cpu,
            "wall": time.perf_counter() - wall,
        }
        with open(log, "a") as out:  # one short append per line: the workers' lines never mix
            out.write(json.dumps(line) + "\n")


def summary(lines: list[dict[str, float | str]], top: int) -> str:
    """The `top` costliest tests by CPU, then the sums: all tests and the top ones."""
    rows = sorted(lines, key=lambda line: -float(line["cpu"]))
    out = [
        f"{float(r['cpu']):7.2f} cpu {float(r['wall']):7.2f} wall  {r['test']}" for r in rows[:top]
    ]
    for label, chosen in ((f"top {top}", rows[:top]), (f"all {len(rows)}", rows)):
        cpu, wall = (sum(float(r[key]) for r in chosen) for key in ("cpu", "wall"))
        out.append(f"{label}: {cpu:.1f} s cpu, {wall:.1f} s wall (summed over tests)")
    return "\n".join(out)


if __name__ == "__main__":
    records = [json.loads(text) for text in Path(sys.argv[1]).read_text().splitlines() if text]
    print(summary(records, int(sys.argv[2]) if len(sys.argv) > 2 else 120))

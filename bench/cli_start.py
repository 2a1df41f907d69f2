"""CLI start-up beside `python -c pass` and `python -c "import click"` (issue 36: the light
commands within 2x of importing click; `autoresearch mcp` answers `initialize` within 0.5 s).

Each command runs in turn with the click yardstick, A B A B ..., and the ratio is taken run by
run, so a machine whose speed drifts (other work starting) moves both sides of each ratio.
CPU (user + system of the finished child) is the figure to read on a shared machine; wall
time is printed beside it, with the load average when the row started.
"""

from __future__ import annotations

import compileall
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

MCP_TARGET_S = 0.5
RATIO_TARGET = 2.0
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"},
    },
}


@dataclass(frozen=True)
class Sample:
    """One run of a command: seconds of wall clock and of CPU (its own and its children's)."""

    wall: float
    cpu: float


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv: Sequence[str], cwd: Path, stdin: bytes = b"") -> Sample:
    cpu0, t0 = _children_cpu(), time.perf_counter()
    subprocess.run(argv, cwd=cwd, input=stdin, capture_output=True, check=False)
    return Sample(time.perf_counter() - t0, _children_cpu() - cpu0)


def mcp_initialize(argv: Sequence[str], cwd: Path) -> Sample:
    """From starting `autoresearch mcp` to its answer to `initialize` (the server then stops:
    its input ends)."""
    cpu0, t0 = _children_cpu(), time.perf_counter()
    server = subprocess.Popen(
        argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
    server.stdin.flush()
    answer = server.stdout.readline()
    wall = time.perf_counter() - t0
    server.stdin.close()
    server.wait(timeout=30)
    if b'"result"' not in answer:
        raise RuntimeError(f"autoresearch mcp answered {answer[:200]!r}")
    return Sample(wall, _children_cpu() - cpu0)  # CPU: the whole life, its stop included


def spread(values: list[float]) -> str:
    return f"{min(values):.3f}-{statistics.median(values):.3f}-{max(values):.3f}"


def load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def row(label: str, pairs: list[tuple[Sample, Sample]], loadavg: str) -> str:
    """A command's wall and CPU spread and its median CPU and wall ratios to the yardstick."""
    cpu_ratio = statistics.median(a.cpu / max(b.cpu, 1e-6) for a, b in pairs)
    wall_ratio = statistics.median(a.wall / b.wall for a, b in pairs)
    wall = spread([a.wall for a, _ in pairs])
    cpu = spread([a.cpu for a, _ in pairs])
    return f"{label:<34} {wall:>19} {cpu:>19} {cpu_ratio:>9.2f} {wall_ratio:>9.2f} {loadavg:>5}"


def run(repo: Path, run_id: str, repeat: int) -> None:
    """Print the start-up of the light commands beside `python -c pass` and importing click."""
    exe = shutil.which("autoresearch") or str(Path(sys.executable).parent / "autoresearch")
    import autoresearch  # its bytecode compiled, as an install has it: start-up, not compiling

    compileall.compile_dir(Path(autoresearch.__file__).parent, quiet=2)
    click = [sys.executable, "-c", "import click"]
    commands: list[tuple[str, list[str], bytes]] = [
        ("python -c pass", [sys.executable, "-c", "pass"], b""),
        ('python -c "import click"', click, b""),
        ("autoresearch --help", [exe, "--help"], b""),
        ("autoresearch exp --help", [exe, "exp", "--help"], b""),
        ("autoresearch exp hook stop", [exe, "exp", "hook", "stop"], b"{}"),
        ("autoresearch status", [exe, "status"], b""),
        ("autoresearch status RUN (1000 its)", [exe, "status", run_id], b""),
    ]
    print(f"\nCLI start-up: min-median-max of {repeat} runs; ratios to `import click`, run by run")
    print(f"{'command':<34} {'wall s':>19} {'cpu s':>19} {'cpu/click':>9} {'wall/clk':>9} load")
    for label, argv, stdin in commands:
        loadavg = load()
        pairs = [(timed(argv, repo, stdin), timed(click, repo)) for _ in range(repeat)]
        print(row(label, pairs, loadavg))
    loadavg = load()
    pairs = [(mcp_initialize([exe, "mcp"], repo), timed(click, repo)) for _ in range(repeat)]
    print(row("autoresearch mcp -> initialize", pairs, loadavg))
    answered = statistics.median(a.wall for a, _ in pairs)
    print(f"target: the light commands' cpu/click <= {RATIO_TARGET}; "
          f"mcp answers initialize <= {MCP_TARGET_S} s (median {answered:.3f} s)")  # fmt: skip

"""CLI start-up beside `python -c pass` and `python -c "import click"` (issue 36: the light
commands within 2x of importing click; `autoresearch mcp` answers `initialize` within 0.5 s).

Each command runs in turn with the click yardstick, A B A B ..., and the ratio is taken run by
run, so a machine whose speed drifts (other work starting) moves both sides of each ratio.
CPU (user + system of the finished child) is the figure to read on a shared machine; wall
time is printed beside it, with the load average when the row started.

`--reference SRC` (bench/run.py) times another source tree beside this one (an older commit
unpacked: `git archive BASE | tar -x -C DIR`, then DIR/src): each command runs on both trees
and the yardstick in turn, A B C A C B ... (the trees take turns going first), so the two
trees' ratios come from the same minutes.
`python -c "import mcp"` is the floor of `autoresearch mcp`: the official SDK's own import.
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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import targets  # bench/targets.py: the targets, printed together at the end

MCP_TARGET_S = 0.5
RATIO_TARGET = 2.0
# What the commands are measured beside: the interpreter, the yardstick and the SDK's import.
FLOORS = (
    ("python -c pass", "pass"),
    ('python -c "import click"', "import click"),
    ('python -c "import mcp" (the SDK)', "import mcp"),
)
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


@dataclass(frozen=True)
class Tree:
    """A source tree of autoresearch to time: its label and the environment that imports it."""

    label: str
    src: Path

    def env(self) -> dict[str, str]:
        return {**os.environ, "PYTHONPATH": str(self.src)}


def timed(argv: Sequence[str], cwd: Path, stdin: bytes = b"", tree: Tree | None = None) -> Sample:
    env = tree.env() if tree else None
    cpu0, t0 = _children_cpu(), time.perf_counter()
    subprocess.run(argv, cwd=cwd, input=stdin, capture_output=True, check=False, env=env)
    return Sample(time.perf_counter() - t0, _children_cpu() - cpu0)


def mcp_initialize(argv: Sequence[str], cwd: Path, tree: Tree) -> Sample:
    """From starting `autoresearch mcp` to its answer to `initialize` (the server then stops:
    its input ends)."""
    cpu0, t0 = _children_cpu(), time.perf_counter()
    server = subprocess.Popen(
        argv,
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=tree.env(),
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


def cpu_ratio(pairs: list[tuple[Sample, Sample]]) -> float:
    """The median of the rounds' CPU ratios of a command to the yardstick."""
    return statistics.median(a.cpu / max(b.cpu, 1e-6) for a, b in pairs)


def row(label: str, pairs: list[tuple[Sample, Sample]], loadavg: str) -> str:
    """A command's wall and CPU spread and its median CPU and wall ratios to the yardstick."""
    wall_ratio = statistics.median(a.wall / b.wall for a, b in pairs)
    wall = spread([a.wall for a, _ in pairs])
    cpu = spread([a.cpu for a, _ in pairs])
    return (
        f"{label:<46} {wall:>19} {cpu:>19} {cpu_ratio(pairs):>9.2f} {wall_ratio:>9.2f} {loadavg:>5}"
    )


def trees(references: Sequence[Path]) -> list[Tree]:
    """This tree (the one this process imports) and each reference, compiled as an install
    has them: start-up, not compiling, is timed."""
    import autoresearch

    here = Tree("this tree", Path(autoresearch.__file__).parent.parent)
    found = [here, *(Tree(f"ref {src.parent.name or src}", src) for src in references)]
    for tree in found:
        compileall.compile_dir(tree.src / "autoresearch", quiet=2)
    return found


def side_by_side(
    label: str, measure: Callable[[Tree], Sample], timing: Sequence[Tree], repo: Path, repeat: int
) -> dict[str, list[tuple[Sample, Sample]]]:
    """Print one row per tree: each round times the yardstick, then the command on each tree,
    the trees in turn first (a tree always timed right after the yardstick, or always last,
    would meet the machine in the same state every round)."""
    loadavg, click = load(), [sys.executable, "-c", "import click"]
    rounds = [(timed(click, repo), in_turn(measure, timing, i)) for i in range(repeat)]
    by_tree = {
        tree.label: [(samples[index], yardstick) for yardstick, samples in rounds]
        for index, tree in enumerate(timing)
    }
    for tree_label, pairs in by_tree.items():
        print(row(f"{label} [{tree_label}]", pairs, loadavg))
    return by_tree


def in_turn(measure: Callable[[Tree], Sample], timing: Sequence[Tree], round_: int) -> list[Sample]:
    """`measure` of every tree, starting at tree `round_` (mod their number); in `timing`'s
    order."""
    count = len(timing)
    found = {i % count: measure(timing[i % count]) for i in range(round_, round_ + count)}
    return [found[i] for i in range(count)]


def run(
    repo: Path, run_id: str, repeat: int, references: Sequence[Path] = ()
) -> list[targets.Verdict]:
    """Print the start-up of the light commands beside `python -c pass` and importing click
    (and beside the same commands of each reference tree, interleaved); this tree's verdicts
    on the issue's targets."""
    exe = shutil.which("autoresearch") or str(Path(sys.executable).parent / "autoresearch")
    timing = trees(references)
    print(f"\nCLI start-up: min-median-max of {repeat} runs; ratios to `import click`, run by run")
    print(f"{'command':<46} {'wall s':>19} {'cpu s':>19} {'cpu/click':>9} {'wall/clk':>9} load")
    for label, code in FLOORS:
        # the floors import no autoresearch: timed once, in this process's environment
        floor = measured([sys.executable, "-c", code], repo, b"", plain=True)
        side_by_side(label, floor, timing[:1], repo, repeat)
    verdicts = []
    journal = repo / ".autoresearch" / "journal.sqlite3"
    for label, args, stdin, journal_state in commands(run_id):
        if journal_state == LEFT_ALONE:
            left_alone(journal)
        measure = measured([exe, *args], repo, stdin)
        if journal_state == JUST_WRITTEN:
            measure = written_first(journal, measure)
        found = side_by_side(label, measure, timing, repo, repeat)
        if label in TARGETED:
            mine = found[timing[0].label]
            verdicts.append(
                targets.at_most(f"{label}: CPU / import click", cpu_ratio(mine), RATIO_TARGET)
            )
    initialize = side_by_side(
        "mcp -> initialize", lambda tree: mcp_initialize([exe, "mcp"], repo, tree), timing, repo,
        repeat,
    )  # fmt: skip
    medians = ", ".join(
        f"{tree} {statistics.median(a.wall for a, _ in pairs):.3f} s"
        for tree, pairs in initialize.items()
    )
    print(f"target: the light commands' cpu/click <= {RATIO_TARGET}; "
          f"mcp answers initialize <= {MCP_TARGET_S} s (median wall: {medians})")  # fmt: skip
    answered = statistics.median(a.wall for a, _ in initialize[timing[0].label])
    verdicts.append(
        targets.at_most("mcp answers initialize (median wall)", answered, MCP_TARGET_S, " s")
    )
    return verdicts


def measured(
    argv: list[str], repo: Path, stdin: bytes, plain: bool = False
) -> Callable[[Tree], Sample]:
    """`argv` timed in `repo` on a tree (`plain`: in this process's environment)."""
    return lambda tree: timed(argv, repo, stdin, None if plain else tree)


def left_alone(journal: Path) -> None:
    """Wait until the journal (at rest: no process holds it open) has been left alone as long
    as a reader waits before it notes it checked (journal/checked.py): `status` after a run,
    or between two `step`s. The first timed run of this tree checks it whole and notes it."""
    from autoresearch.journal import checked

    found = checked.at_rest(journal)
    assert found is not None, f"{journal} is not at rest"
    left = found.changed_ns / 1e9 + checked.SETTLE_SECONDS + 1 - time.time()
    if left > 0:
        print(f"(waiting {left:.0f} s for the journal to be left alone "
              f"{checked.SETTLE_SECONDS:.0f} s, as a reader needs to note it checked)")  # fmt: skip
        time.sleep(left)


def written_first(journal: Path, measure: Callable[[Tree], Sample]) -> Callable[[Tree], Sample]:
    """`measure`, the journal's change time moved just before (as a write moves it): every
    read checks the journal whole, as one right after a step does."""

    def after_a_write(tree: Tree) -> Sample:
        os.utime(journal)
        return measure(tree)

    return after_a_write


# The commands issue 36 holds to RATIO_TARGET (`status RUN`, one run's whole history, is timed
# for what it is: the issue names `status`, `--help` and the hooks).
TARGETED = frozenset(
    {"autoresearch --help", "autoresearch exp --help", "autoresearch exp hook stop",
     "autoresearch status"}
)  # fmt: skip


# What a command finds of the journal: whatever it is, left alone long enough to be noted
# checked (journal/checked.py), or written just before each run (checked whole every time).
ANY, LEFT_ALONE, JUST_WRITTEN = "any", "left alone", "just written"


def commands(run_id: str) -> list[tuple[str, list[str], bytes, str]]:
    """The light commands: their label, arguments, input and the journal they find."""
    return [
        ("autoresearch --help", ["--help"], b"", ANY),
        ("autoresearch exp --help", ["exp", "--help"], b"", ANY),
        ("autoresearch exp hook stop", ["exp", "hook", "stop"], b"{}", ANY),
        ("autoresearch status", ["status"], b"", LEFT_ALONE),
        ("autoresearch status RUN (1000 its)", ["status", run_id], b"", LEFT_ALONE),
        ("autoresearch status, just written", ["status"], b"", JUST_WRITTEN),
    ]

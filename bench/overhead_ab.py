"""The overhead section beside reference source trees (`run.py --only overhead --reference SRC`).

Each round runs the section once per tree, each in a fresh process (this tree, then each
reference: A B A B ...), so every tree's figures come from the same minutes of a loaded
machine. Per bucket and tree: the median ratio to the git floor over the rounds, its spread,
how many rounds went over the target and over the margin, and the supervisor's median CPU ms
per step (steadier than wall time under load); the load average of each round is printed too.
A reference is a source tree that this bench can drive (`git archive BASE | tar -x -C DIR`,
then DIR/src, of a recent commit).
"""

from __future__ import annotations

import compileall
import json
import os
import statistics
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import targets  # bench/targets.py: the targets, printed together at the end

TARGET = 1.5  # issue 36: the step's overhead within 1.5x the git floor at every run length
MARGIN = 1.35  # what the project aims for, so that a loaded machine does not cross the target
ROWS_FLAG = "--rows-json"  # the child prints its rows as JSON instead of the table


@dataclass(frozen=True)
class Round:
    """One run of the overhead section on one tree: per bucket (run length) its figures."""

    tree: str
    load: float  # the 1-minute load average as the round started
    buckets: tuple[int, ...]  # the run's length after each bucket's steps
    ratio: tuple[float, ...]
    cpu_ms: tuple[float, ...]


def run_round(label: str, src: Path, quick: bool) -> Round:
    """The overhead section on `src` in a fresh process (this bench, that tree's package)."""
    bench = Path(__file__).resolve().parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), str(bench)])}
    argv = [sys.executable, str(bench / "run.py"), "--only", "overhead", ROWS_FLAG]
    load = os.getloadavg()[0]
    done = subprocess.run(
        [*argv, *(["--quick"] if quick else [])],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:  # say why: the tree's own error, not only an exit status
        sys.exit(f"the overhead section on {src} failed:\n{done.stderr[-3000:]}")
    rows = json.loads(done.stdout.splitlines()[-1])
    return Round(
        label,
        load,
        tuple(r["iteration"] for r in rows),
        tuple(r["overhead_ms"] / r["floor_ms"] for r in rows),
        tuple(r["cpu_ms"] for r in rows),
    )


def print_rows(rounds: Sequence[Round], labels: Sequence[str]) -> None:
    """One line per bucket and tree: ratio median (min-max), rounds over target and margin."""
    loads = ", ".join(f"{r.load:.1f}" for r in rounds)
    print(f"\nOverhead beside references ({len(rounds) // len(labels)} rounds; loads {loads})")
    print(f"{'iteration':>10} {'tree':<24} {'ratio median (min-max)':>24} "
          f"{f'>{TARGET}':>6} {f'>{MARGIN}':>6} {'cpu ms':>7}")  # fmt: skip
    for at, bucket in enumerate(rounds[0].buckets):
        for label in labels:
            mine = [r for r in rounds if r.tree == label]
            ratios = [r.ratio[at] for r in mine]
            cpu = statistics.median(r.cpu_ms[at] for r in mine)
            spread = f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})"
            print(f"{bucket:>10} {label:<24} {spread:>24} "
                  f"{sum(x > TARGET for x in ratios):>6} {sum(x > MARGIN for x in ratios):>6} "
                  f"{cpu:>7.2f}")  # fmt: skip


def run(references: Sequence[Path], rounds: int, quick: bool) -> list[targets.Verdict]:
    """Print the overhead of this tree beside each reference, `rounds` alternating rounds;
    this tree's verdict: its worst run length's median ratio over the rounds."""
    import autoresearch

    trees = [("this tree", Path(autoresearch.__file__).parent.parent)]
    # a reference by its folder's name, or its whole path where two share a name
    names = [src.parent.name for src in references]
    trees += [
        (f"ref {name if names.count(name) == 1 and name else src}", src)
        for name, src in zip(names, references, strict=True)
    ]
    for _, src in trees:  # start-up is not what is timed: compiled as an install has them
        compileall.compile_dir(src / "autoresearch", quiet=2)
    # each round turns the order (A B, B A, ...): no tree always runs first after a pause
    done = [
        run_round(label, src, quick)
        for turn in range(rounds)
        for label, src in trees[turn % len(trees) :] + trees[: turn % len(trees)]
    ]
    print_rows(done, [label for label, _ in trees])
    mine = [r for r in done if r.tree == trees[0][0]]
    worst = max(statistics.median(r.ratio[at] for r in mine) for at in range(len(mine[0].buckets)))
    what = f"step overhead / git floor, worst of {len(mine[0].buckets)} run lengths (medians)"
    return [targets.at_most(what, worst, TARGET)]

#!/usr/bin/env python3
"""Project tasks with nothing but Python >= 3.11 and git: bootstrap .venv, then run a task.

python3 dev.py demo [ARGS]   install the core and the report extra, then run `autoresearch demo`
python3 dev.py test          install the dev extra, then lint, type-check and run the test suite
python3 dev.py test --quick  the same with only the unit tests (no fixture: no repo, no run, no
                             bench); both print how many tests they selected
python3 dev.py bench [ARGS]  install the dev extra, then run the benchmarks

One .venv serves all three: the demo installs only what it needs (no Ray, Playwright or mypy),
`test` and `bench` upgrade the same .venv to the dev extra, and a dev .venv serves the demo as is.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
STAMP = VENV / ".autoresearch-install"
# the distribution's name before it became autoresearch-loop (the new one is autoresearch_loop-*)
OLD_DIST_INFO = (
    "lib/python*/site-packages/autoresearch-*.dist-info",
    "Lib/site-packages/autoresearch-*.dist-info",
)


# The extras a task needs, smallest first: an install of a later one serves an earlier one.
EXTRAS = ("report", "dev")
TASK_EXTRA = {"demo": "report", "test": "dev", "bench": "dev"}


def _install_key(extra: str) -> str:
    """The stamp: which extra is installed, for which pyproject.toml."""
    return f"{extra} {hashlib.sha256((ROOT / 'pyproject.toml').read_bytes()).hexdigest()}"


def covers(stamp: str, key: str) -> bool:
    """Whether the install `stamp` records serves the one `key` asks for: the same pyproject.toml
    and an extra at least as large (a stamp of the old form, a bare hash, serves none)."""
    have, _, have_hash = stamp.partition(" ")
    want, _, want_hash = key.partition(" ")
    return have in EXTRAS and have_hash == want_hash and EXTRAS.index(have) >= EXTRAS.index(want)


def ensure_env(extra: str) -> None:
    """Create .venv and install the project with `extra`, unless an install that covers it is
    there for today's pyproject.toml (demo after test reuses the dev install; test after demo
    upgrades it)."""
    if sys.version_info < (3, 11):  # noqa: UP036 - this script may be run by an older python3
        sys.exit(f"autoresearch needs Python >= 3.11 (this is {sys.version.split()[0]})")
    if STAMP.exists() and covers(STAMP.read_text(), _install_key(extra)):
        return
    if not (BIN / "python").exists():
        print(f"creating {VENV}", file=sys.stderr)
        venv.EnvBuilder(with_pip=True).create(VENV)
    print(f"installing autoresearch with its {extra} extra into .venv", file=sys.stderr)
    run([str(BIN / "python"), "-m", "pip", "install", "--quiet", "--upgrade", "pip"])
    if any(path for pattern in OLD_DIST_INFO for path in VENV.glob(pattern)):
        # the distribution was renamed: the old one would register every back-end twice
        run([str(BIN / "python"), "-m", "pip", "uninstall", "--quiet", "--yes", "autoresearch"])
    run([str(BIN / "python"), "-m", "pip", "install", "--quiet", "-e", f".[{extra}]"])
    STAMP.write_text(_install_key(extra))


def run(argv: list[str]) -> None:
    done = subprocess.run(argv, cwd=ROOT, check=False)
    if done.returncode != 0:
        sys.exit(done.returncode)


def main(argv: list[str]) -> None:
    task, args = (argv[0], argv[1:]) if argv else ("help", [])
    if task not in TASK_EXTRA:
        sys.exit(__doc__)
    ensure_env(TASK_EXTRA[task])
    if task == "demo":
        os.execv(BIN / "autoresearch", [str(BIN / "autoresearch"), "demo", *args])
    if task == "bench":
        run([str(BIN / "python"), "bench/run.py", *args])
        return
    paths = [
        p for p in ("src", "tests", "bench", "examples", "tools", "dev.py") if (ROOT / p).exists()
    ]
    run([str(BIN / "ruff"), "check", *paths])
    run([str(BIN / "ruff"), "format", "--check", *paths])
    run([str(BIN / "mypy")])
    workers = ("-n", str(worker_count()))
    run([str(BIN / "python"), "-m", "pytest", *workers, *DIST, "-q", *pytest_args(args)])


def worker_count() -> int:
    """One xdist worker more than the CPUs this process may use. With one per CPU (`-n auto`)
    the suite left 21 % of 2 cores idle (/proc/stat sampled every 5 s over a whole run): its
    tests wait on agent timeouts, kill graces, Ray's health checks and sleeping fakes. A third
    worker runs in those waits: 95 % busy; the suite took 627 and 629 s with two workers, 566
    and 599 s with three (one machine, runs one after another, 2026-12-07)."""
    usable = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    return (len(usable) if usable else os.cpu_count() or 1) + 1


# xdist's `load` hands out runs of consecutive tests (a module's fixtures stay on one worker)
# but leaves a worker idle at the end while the other finishes its last ones; `worksteal` splits
# the same way and lets the idle worker take half of what the other has left; `loadfile` keeps
# a whole file on one worker (tests/agents/test_backends.py alone is ~50 s of CPU): a long tail
DIST = ("--dist", "worksteal")


def pytest_args(args: list[str]) -> list[str]:
    """--quick selects the tests tests/conftest.py marks `unit`; the rest goes to pytest."""
    if "--quick" not in args:
        return args
    return ["-m", "unit and not slow", *(arg for arg in args if arg != "--quick")]


if __name__ == "__main__":
    main(sys.argv[1:])

#!/usr/bin/env python3
"""Project tasks with nothing but Python >= 3.11 and git: bootstrap .venv, then run a task.

python3 dev.py demo [ARGS]   install, then run `autoresearch demo`
python3 dev.py test          install, then lint, type-check and run the test suite
python3 dev.py test --quick  the same with only the unit tests (no fixture: no repo, no run)
python3 dev.py bench [ARGS]  install, then run the benchmarks
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


def _install_key() -> str:
    return hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()


def ensure_env() -> None:
    """Create .venv and install the project with its dev extra, once per pyproject change."""
    if sys.version_info < (3, 11):  # noqa: UP036 - this script may be run by an older python3
        sys.exit(f"autoresearch needs Python >= 3.11 (this is {sys.version.split()[0]})")
    if STAMP.exists() and STAMP.read_text() == _install_key():
        return
    if not (BIN / "python").exists():
        print(f"creating {VENV}", file=sys.stderr)
        venv.EnvBuilder(with_pip=True).create(VENV)
    print("installing autoresearch and its dev tools into .venv", file=sys.stderr)
    run([str(BIN / "python"), "-m", "pip", "install", "--quiet", "--upgrade", "pip"])
    run([str(BIN / "python"), "-m", "pip", "install", "--quiet", "-e", ".[dev]"])
    STAMP.write_text(_install_key())


def run(argv: list[str]) -> None:
    done = subprocess.run(argv, cwd=ROOT, check=False)
    if done.returncode != 0:
        sys.exit(done.returncode)


def main(argv: list[str]) -> None:
    task, args = (argv[0], argv[1:]) if argv else ("help", [])
    if task not in ("demo", "test", "bench"):
        sys.exit(__doc__)
    ensure_env()
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
    run([str(BIN / "python"), "-m", "pytest", "-n", "auto", "-q", *pytest_args(args)])


def pytest_args(args: list[str]) -> list[str]:
    """--quick selects the tests tests/conftest.py marks `unit`; the rest goes to pytest."""
    if "--quick" not in args:
        return args
    return ["-m", "unit and not slow", *(arg for arg in args if arg != "--quick")]


if __name__ == "__main__":
    main(sys.argv[1:])

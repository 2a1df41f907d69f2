"""Helpers for experiment-session tests: a real harness in a real repository."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from autoresearch.experiments import (
    InitParams,
    InitResult,
    LogParams,
    LogReport,
    RunParams,
    RunReport,
    init_session,
    log_experiment,
    run_experiment,
)
from helpers import Repo, make_repo

# value.txt is the primary metric; mem.txt (when present) a secondary one; crash.flag makes the
# benchmark fail; slow.flag makes it hang (recording its pid in $PIDFILE); big.flag prints > 1 MB
# after the METRIC line.
HARNESS = textwrap.dedent(
    """\
    #!/bin/bash
    if [ -f crash.flag ]; then echo "boom" >&2; exit 3; fi
    if [ -f slow.flag ]; then
      echo $$ > "$PIDFILE"; sleep 30 & echo $! >> "$PIDFILE"; wait
    fi
    echo "METRIC score=$(cat value.txt)"
    if [ -f mem.txt ]; then echo "METRIC mem=$(cat mem.txt)"; fi
    if [ -f big.flag ]; then
      for i in $(seq 1 12000); do
        echo "filler line $i xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
      done
    fi
    echo "done"
    """
)
CHECKS = textwrap.dedent(
    """\
    #!/bin/bash
    if [ -f broken.flag ]; then echo "1 test failed" >&2; exit 1; fi
    echo "checks ok"
    """
)


def exp_repo(path: Path, value: str = "100", checks: bool = False) -> Repo:
    """A repository with the harness written but not committed (phase 1 done)."""
    repo = make_repo(path, value=value)
    repo.write("autoresearch.sh", HARNESS)
    if checks:
        repo.write("autoresearch.checks.sh", CHECKS)
    return repo


def init(where: Path, **fields: Any) -> InitResult:
    fields.setdefault("name", "speed up")
    fields.setdefault("metric", "score")
    return init_session(where, InitParams(**fields))


def run(where: Path, **kw: Any) -> RunReport:
    return run_experiment(where, RunParams(**kw))


def log(where: Path, status: str, description: str = "an experiment", **kw: Any) -> LogReport:
    return log_experiment(where, LogParams(status=status, description=description, **kw))


def cycle(repo: Repo, value: str, status: str, description: str = "", **kw: Any) -> LogReport:
    """One loop iteration: edit value.txt, run, log."""
    repo.write("value.txt", value + "\n")
    run(repo.root)
    return log(repo.root, status, description or f"value {value}", **kw)

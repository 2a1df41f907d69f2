"""Benchmark: what the Bubblewrap sandbox costs per agent session and per evaluation.

    .venv/bin/python bench/sandbox.py [--runs 20] [--json]

In a throwaway repository with a linked worktree (a run's layout), it starts the same child
`--runs` times unconfined and inside the run's box, alternating, through the code a run uses:
a `cmd:` agent session (`ExternalAgent.run`, the box widened by the session's git data) and an
evaluation (`evaluate.run_evaluator`: `python3` printing a JSON verdict). It prints min /
median / max milliseconds of each, side by side with `none`. Nothing here is a pass/fail test.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from autoresearch.agents.base import SessionRequest
from autoresearch.agents.command import command_agent
from autoresearch.confine import Box, machine_support
from autoresearch.contracts.sandbox import EvaluatorSpec
from autoresearch.evaluate import run_evaluator
from autoresearch.states import EvalFormat

GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "b@example.com",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "b@example.com"}  # fmt: skip
EVALUATOR = """python3 -c 'import json; print(json.dumps({"pass": True, "score": 1.0}))'"""


def _git(cwd: Path, *args: str) -> None:
    env = {**os.environ, **GIT_ENV}
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def _layout(root: Path) -> tuple[Path, Path]:
    """A repository with a run's linked worktree and run folder; (repo, worktree)."""
    repo = root / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "value.txt").write_text("1\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "initial")
    worktree = repo / ".autoresearch" / "worktrees" / "bench"
    _git(repo, "worktree", "add", "-q", "-b", "bench", str(worktree))
    (repo / ".autoresearch" / "runs" / "bench" / "logs").mkdir(parents=True)
    return repo, worktree


def _session(repo: Path, worktree: Path, box: Box | None) -> Callable[[int], None]:
    run_dir = repo / ".autoresearch" / "runs" / "bench"
    agent = command_agent("true")

    def once(n: int) -> None:
        request = SessionRequest(
            run_id="bench", iteration=n, worktree=worktree, base_commit="",
            instructions_file=run_dir / "instructions.md",
            candidate_file=run_dir / "candidate.json",
            log_path=run_dir / "logs" / f"agent-{n}.log", timeout=60, box=box,
        )  # fmt: skip
        result = agent.run(request, lambda: False, lambda pgid: None)
        assert result.exit_code == 0, result

    return once


def _evaluation(repo: Path, worktree: Path, box: Box | None) -> Callable[[int], None]:
    spec = EvaluatorSpec(command=EVALUATOR, format=EvalFormat.JSON)
    logs = repo / ".autoresearch" / "runs" / "bench" / "logs"

    def once(n: int) -> None:
        record = run_evaluator(spec, worktree, dict(os.environ), logs / f"eval-{n}.log", box=box)
        assert record.score == 1.0, record

    return once


def _timed(step: Callable[[int], None], n: int) -> float:
    start = time.perf_counter()
    step(n)
    return (time.perf_counter() - start) * 1000


def measure(runs: int) -> dict[str, dict[str, list[float]]]:
    support = machine_support()
    if support.bwrap is None:
        raise SystemExit(f"bench/sandbox.py: {support.reason}")
    with tempfile.TemporaryDirectory() as tmp:
        repo, worktree = _layout(Path(tmp))
        agent_box = Box(support.bwrap, repo)
        eval_box = Box(support.bwrap, repo, network=False)
        kinds = {
            "session": (_session(repo, worktree, None), _session(repo, worktree, agent_box)),
            "evaluation": (
                _evaluation(repo, worktree, None),
                _evaluation(repo, worktree, eval_box),
            ),
        }
        times: dict[str, dict[str, list[float]]] = {}
        for kind, (plain, boxed) in kinds.items():
            plain(0), boxed(0)  # warm the caches (and bwrap's probe) first
            pairs = [(_timed(plain, n), _timed(boxed, n)) for n in range(1, runs + 1)]
            times[kind] = {"none": [p for p, _ in pairs], "bwrap": [b for _, b in pairs]}
        return times


def table(times: dict[str, dict[str, list[float]]]) -> str:
    lines = [f"{'child':<11} {'sandbox':<7} {'min ms':>8} {'median ms':>10} {'max ms':>8}"]
    for kind, modes in times.items():
        for mode, values in modes.items():
            lines.append(
                f"{kind:<11} {mode:<7} {min(values):>8.1f} "
                f"{statistics.median(values):>10.1f} {max(values):>8.1f}"
            )
        extra = statistics.median(modes["bwrap"]) - statistics.median(modes["none"])
        lines.append(f"{kind:<11} {'cost':<7} {'':>8} {extra:>+10.1f}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    times = measure(args.runs)
    print(json.dumps(times) if args.json else table(times))


if __name__ == "__main__":
    main()

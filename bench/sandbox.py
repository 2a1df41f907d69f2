"""Benchmark: what the Bubblewrap sandbox costs per agent session and per evaluation.

    .venv/bin/python bench/sandbox.py [--runs 20] [--json]
    python3 dev.py bench --only sandbox

In a throwaway repository with a linked worktree (a run's layout), it starts the same child
`--runs` times unconfined and inside the run's box, alternating, through the code a run uses:
a `cmd:` agent session (`ExternalAgent.run`, the box widened by the session's git data) and an
evaluation (`evaluate.run_evaluator`: `python3` printing a JSON verdict). It prints min /
median / max milliseconds of each, side by side with `none`, and the ratio bwrap / none of each
alternating pair (min / median / max: a load spike hits both halves of a pair alike), with the
load average before and after. Nothing here is a pass/fail test.
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
    lines = [f"{'child':<11} {'sandbox':<7} {'min':>8} {'median':>8} {'max':>8}  (ms)"]
    for kind, modes in times.items():
        for mode, values in modes.items():
            lines.append(f"{kind:<11} {mode:<7} {_spread(values, '8.1f')}")
        extra = statistics.median(modes["bwrap"]) - statistics.median(modes["none"])
        ratios = [b / p for p, b in zip(modes["none"], modes["bwrap"], strict=True) if p > 0]
        lines.append(
            f"{kind:<11} {'ratio':<7} {_spread(ratios, '8.2f')}  (times: bwrap / none, per pair)"
        )
        lines.append(f"{kind:<11} {'cost':<7} {'':>8} {extra:>+8.1f}  (median ms)")
    return "\n".join(lines)


def _spread(values: list[float], fmt: str) -> str:
    low, mid, high = min(values), statistics.median(values), max(values)
    return f"{low:>{fmt}} {mid:>{fmt}} {high:>{fmt}}"


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def run(runs: int) -> None:
    """`dev.py bench --only sandbox`: the table, or why this machine cannot sandbox."""
    support = machine_support()
    if support.bwrap is None:
        print(f"\nSandbox cost: skipped ({support.reason})")
        return
    before = _load()
    times = measure(runs)
    print(f"\nSandbox cost per child ({runs} alternating pairs; load average {before} before, "
          f"{_load()} after)")  # fmt: skip
    print(table(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not args.json:
        run(args.runs)
        return
    print(json.dumps(measure(args.runs)))


if __name__ == "__main__":
    main()

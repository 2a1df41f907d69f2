"""Benchmark: premium-thread tokens with and without the delegation worker (issue 37).

The source's claim is that the planning agent spends fewer premium tokens when it delegates
and loses no quality. Here a scripted planning model does the same fixed tasks two ways in a
scratch git repository, and a counter charges it for every text that enters (in) or leaves
(out) its thread, at ~4 bytes a token:

* direct – it reads the file it must change whole, writes the edit, runs the check and reads
  the whole check log;
* delegated – it sends a `job_start` request and a `job_wait` request and reads the two
  replies (the real `outcome.v1` answers of real jobs, run by a `cmd:` agent doing the same
  edit, checked by the same command).

A task counts as accepted when its check passes (direct) or its verdict is `accepted`
(delegated). One task's check asks for another value than its prompt: both arms must fail it.
Nothing is asserted: this prints the per-task tokens and the ratio.

    python bench/worker_tokens.py [--tasks N] [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autoresearch.worker import jobs
from autoresearch.worker.model import CheckSpec, JobRequest, ScopeSpec, TaskKind

FILLER_FUNCTIONS = 60  # per module: the bulk a direct read pays for
LOG_LINES = 120  # per check run: the test log a direct run reads
IMPOSSIBLE_TASK = 8  # its check wants another value than the prompt asks


@dataclass
class Counter:
    """The scripted planning model's meter: tokens into and out of its thread."""

    tokens_in: int = 0
    tokens_out: int = 0

    @staticmethod
    def tokens(text: str) -> int:
        return math.ceil(len(text.encode()) / 4)

    def read(self, text: str) -> None:
        self.tokens_in += self.tokens(text)

    def write(self, text: str) -> None:
        self.tokens_out += self.tokens(text)


@dataclass
class Task:
    number: int
    module: str
    prompt: str
    check: str
    edit: str  # the shell command that makes the change
    results: dict[str, Any] = field(default_factory=dict)


def make_repo(root: Path, count: int) -> list[Task]:
    """A repository of `count` modules, each with a check that prints a long test log."""
    (root / "src").mkdir(parents=True)
    (root / "tests").mkdir()
    tasks = []
    for n in range(count):
        body = [f"VALUE_{n} = 0", ""]
        for f in range(FILLER_FUNCTIONS):
            body += [
                f"def helper_{n}_{f}(x: int) -> int:",
                f'    """Helper {f}."""',
                "    return x",
                "",
            ]
        module = f"src/mod_{n}.py"
        (root / module).write_text("\n".join(body))
        wanted = -1 if n == IMPOSSIBLE_TASK else n + 1
        check = (
            f"import sys; sys.path.insert(0, 'src'); import mod_{n}\n"
            f"for i in range({LOG_LINES}):\n"
            f"    print(f'tests/test_mod_{n}.py::test_case_{{i}} PASSED')\n"
            f"assert mod_{n}.VALUE_{n} == {wanted}, f'VALUE_{n} is {{mod_{n}.VALUE_{n}}}'\n"
        )
        (root / f"tests/check_{n}.py").write_text(check)
        edit = f"sed -i 's/^VALUE_{n} = .*/VALUE_{n} = {n + 1}/' {module}"
        prompt = f"Set VALUE_{n} in {module} to {n + 1}."
        tasks.append(Task(n, module, prompt, f"python3 tests/check_{n}.py", edit))
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com"]
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run([*git, "-C", str(root), "add", "-A"], check=True)
    subprocess.run([*git, "-C", str(root), "commit", "-qm", "tasks"], check=True)
    return tasks


def direct(root: Path, task: Task) -> tuple[Counter, bool]:
    meter = Counter()
    meter.read(task.prompt)
    meter.read((root / task.module).read_text())  # it reads the file to find the line
    meter.write(json.dumps({"path": task.module, "old": f"VALUE_{task.number} = 0",
                            "new": f"VALUE_{task.number} = {task.number + 1}"}))  # fmt: skip
    subprocess.run(["sh", "-c", task.edit], cwd=root, check=True)
    meter.write(task.check)
    done = subprocess.run(["sh", "-c", task.check], cwd=root, capture_output=True, text=True)
    meter.read(done.stdout + done.stderr)  # the whole test log
    subprocess.run(["git", "checkout", "-q", "--", "."], cwd=root, check=True)
    return meter, done.returncode == 0


def delegated(root: Path, task: Task) -> tuple[Counter, bool]:
    meter = Counter()
    meter.read(task.prompt)
    agent = "cmd:" + task.edit
    request = {
        "prompt": task.prompt,
        "verification_policy": {"version": 1, "task_kind": "modifying"},
        "agent": agent,
        "scoped_patch": {"paths": ["src"]},
        "checks": [{"command": task.check, "timeout_ms": 60000}],
    }
    meter.write(json.dumps(request))
    started = jobs.start(
        root,
        JobRequest(
            prompt=task.prompt,
            task_kind=TaskKind.MODIFYING,
            agent=agent,
            scope=ScopeSpec(("src",)),
            checks=(CheckSpec(task.check, timeout_seconds=60),),
        ),
    )
    meter.read(json.dumps(started.to_dict()))
    job_id = started.job.job_id
    meter.write(json.dumps({"job_id": job_id, "timeout_ms": 60000}))
    done = jobs.wait(root, job_id, 60)
    meter.read(json.dumps(done.to_dict()))
    subprocess.run(["git", "checkout", "-q", "--", "src"], cwd=root, check=True)
    return meter, done.outcome.status.value == "accepted"


def run(count: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["XDG_STATE_HOME"] = str(Path(tmp) / "state")  # its own job slots
        root = Path(tmp) / "repo"
        tasks = make_repo(root, count)
        rows = []
        for task in tasks:
            d, d_ok = direct(root, task)
            w, w_ok = delegated(root, task)
            rows.append(
                {
                    "task": task.number,
                    "direct_in": d.tokens_in,
                    "direct_out": d.tokens_out,
                    "direct_accepted": d_ok,
                    "worker_in": w.tokens_in,
                    "worker_out": w.tokens_out,
                    "worker_accepted": w_ok,
                }
            )
    return summary(rows)


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    def total(key: str) -> int:
        return sum(int(r[key]) for r in rows)

    direct_total = total("direct_in") + total("direct_out")
    worker_total = total("worker_in") + total("worker_out")
    return {
        "tasks": rows,
        "direct_tokens": direct_total,
        "worker_tokens": worker_total,
        "ratio_worker_to_direct": round(worker_total / direct_total, 3),
        "direct_accepted_share": round(sum(r["direct_accepted"] for r in rows) / len(rows), 3),
        "worker_accepted_share": round(sum(r["worker_accepted"] for r in rows) / len(rows), 3),
    }


def render(result: dict[str, Any]) -> str:
    lines = ["task  direct in/out  ok   worker in/out  ok"]
    for r in result["tasks"]:
        lines.append(
            f"{r['task']:>4}  {r['direct_in']:>6}/{r['direct_out']:<6} "
            f"{r['direct_accepted']!s:<5} {r['worker_in']:>6}/{r['worker_out']:<6} "
            f"{r['worker_accepted']}"
        )
    lines.append(
        f"premium tokens: direct {result['direct_tokens']}, delegated {result['worker_tokens']}"
        f" – ratio {result['ratio_worker_to_direct']} (delegated / direct); accepted: direct "
        f"{result['direct_accepted_share']:.0%}, delegated {result['worker_accepted_share']:.0%}"
    )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = run(max(1, args.tasks))
    print(json.dumps(result, indent=2) if args.json else render(result))


if __name__ == "__main__":
    main()

"""instructions.md carries the lines of supervisor.md §8, in order."""

from __future__ import annotations

import json

from autoresearch.supervisor.handle import RunHandle

ORDERED_PREFIXES = [
    "# ",
    "Run ID: missions-demo-t1",
    "Mission directory: ",
    "Mission file: ",
    "Sandbox file: ",
    "Mission slug: missions-demo",
    "Iteration: 1",
    "Baseline commit: ",
    "Last kept commit: ",
    "Last kept score: 1",
    "Results file: ",
    "Candidate artifact: ",
    "Keep policy: score_improvement",
    "Iteration state snapshot:",
    "```json",
    "Operate as a thin autoresearch experiment worker for exactly one experiment cycle.",
    "Do not loop forever inside this session. Make at most one candidate commit, then write "
    "the candidate artifact JSON and exit.",
    "Candidate artifact contract",
    "Supervisor semantics:",
    "Evaluator contract:",
    "- command: python3 scripts/eval.py",
    "- format: json",
    "- required output field: pass (boolean)",
    "- optional output field: score (number)",
    "Mission content:",
    "Sandbox policy:",
]


def test_instruction_lines_in_order(run: RunHandle) -> None:
    lines = run.paths.instructions.read_text().splitlines()
    position = 0
    for prefix in ORDERED_PREFIXES:
        found = next((i for i in range(position, len(lines)) if lines[i].startswith(prefix)), None)
        assert found is not None, f"missing or out of order: {prefix!r}"
        position = found + 1
    assert f"Candidate artifact: {run.paths.candidate}" in lines
    assert f"Results file: {run.worktree / 'results.tsv'}" in lines


def test_snapshot_fields_and_capped_mission(run: RunHandle) -> None:
    text = run.paths.instructions.read_text()
    block = text.split("Iteration state snapshot:\n```json\n", 1)[1].split("\n```", 1)[0]
    snapshot = json.loads(block)
    assert list(snapshot) == [
        "iteration", "baseline_commit", "last_kept_commit", "last_kept_score",
        "previous_iteration_outcome", "recent_ledger_summary", "keep_policy",
    ]  # fmt: skip
    assert snapshot["previous_iteration_outcome"] == "none yet"
    assert block.startswith('{\n  "iteration": 1')  # 2-space indent
    assert "Make value.txt bigger." in text.split("Mission content:", 1)[1]


def test_mission_and_policy_are_capped(run: RunHandle) -> None:
    from dataclasses import replace

    from autoresearch.supervisor import instructions

    long_run = replace(run.run, sandbox=replace(run.run.sandbox, mission_text="m" * 10_000))
    text = instructions.render(long_run, [], "m" * 10_000, "p" * 10_000, "r.tsv", "c.json")
    mission = text.split("Mission content:\n```markdown\n", 1)[1].split("\n```", 1)[0]
    policy = text.split("Sandbox policy:\n```markdown\n", 1)[1].split("\n```", 1)[0]
    assert len(mission) == instructions.MISSION_CAP and mission.endswith("…")
    assert len(policy) == instructions.SANDBOX_CAP

"""sandbox.md's `evaluation.resources` on the local executor (audit U5): nothing on this
machine hands them out, so a loop that runs here says so once, before anything is measured –
`run` (before its baseline) and `continue`/`resume` alike – and runs; `--executor ray` is the
one that schedules them (tests/supervisor/test_ray_slots.py). A sandbox that asks for none
hears nothing."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from autoresearch.contracts.sandbox import EvaluationSlots
from autoresearch.supervisor.executor import MSG_RESOURCES_UNSCHEDULED, unscheduled_resources
from helpers import Repo, cli, sandbox_text

AGENT = f"cmd:{sys.executable} {Path(__file__).parent / 'fakes/lane_agent.py'}"
RUN_ID = "missions-demo-g1"
SCORE = 'import glob, json; print(json.dumps({"pass": True, "score": len(glob.glob("bonus-*"))}))\n'


@pytest.mark.parametrize(
    ("evaluation", "said"),
    [
        (EvaluationSlots(), None),
        (EvaluationSlots(2, {}), None),
        (EvaluationSlots(1, {"GPU": 1.0}), ("{GPU: 1}", 1)),
        (EvaluationSlots(2, {"GPU": 1.0, "gpu_slot": 0.5}), ("{GPU: 1, gpu_slot: 0.5}", 2)),
    ],
)
def test_the_note_names_the_resources_and_the_slots(
    evaluation: EvaluationSlots, said: tuple[str, int] | None
) -> None:
    expected = None
    if said is not None:
        expected = MSG_RESOURCES_UNSCHEDULED.format(resources=said[0], slots=said[1])
    assert unscheduled_resources(evaluation) == expected


def _mission(repo: Repo, resources: str | None) -> None:
    repo.write("scripts/score.py", SCORE)
    extra = f"evaluation:\n  slots: 1\n  resources: {resources}\n" if resources else ""
    repo.mission(sandbox=sandbox_text("python3 scripts/score.py", extra=extra))


def test_a_local_lanes_run_asking_for_a_gpu_says_once_that_nothing_schedules_it(
    repo: Repo,
) -> None:
    _mission(repo, "{GPU: 1}")
    note = "autoresearch: " + MSG_RESOURCES_UNSCHEDULED.format(resources="{GPU: 1}", slots=1)
    done = cli("run", "missions/demo", "--agent", AGENT, "--run-tag", "G1", "--lanes", "2",
               "--max-iterations", "2", cwd=repo.root, timeout=180)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stderr.count(note) == 1, done.stderr
    # said before anything was measured: ahead of the loop's first line on stderr
    assert done.stderr.splitlines()[0] == note, done.stderr
    again = cli("continue", RUN_ID, "--max-iterations", "+1", cwd=repo.root, timeout=180)
    assert again.returncode == 0, again.stderr
    assert again.stderr.count(note) == 1, again.stderr


def test_a_local_run_asking_for_no_resources_hears_nothing_of_them(repo: Repo) -> None:
    _mission(repo, None)
    done = cli("run", "missions/demo", "--agent", AGENT, "--run-tag", "G1", "--lanes", "2",
               "--max-iterations", "1", cwd=repo.root, timeout=180)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "evaluation.resources" not in done.stderr, done.stderr

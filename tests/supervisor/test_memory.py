"""Memory across runs (issue 33): a new run of a mission starts with a digest of the mission's
earlier runs in its instructions: what was kept and what it was worth, what failed. Bounded,
deterministic, per mission, and switched off by sandbox.md's `search: {memory: false}`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from autoresearch.contracts.sandbox import parse_sandbox
from autoresearch.errors import ContractError
from autoresearch.noise import Interval
from autoresearch.supervisor import memory
from autoresearch.supervisor.memory import EarlierRun, KeptChange
from helpers import Repo, cli, sandbox_text

FAKE = Path(__file__).parents[1] / "agents/fakes/cmd_agent.py"
HEADER = "Earlier runs of this mission"


def copying_agent(into: Path) -> str:
    """The fake agent, which first copies the instructions it was given where the test reads
    them (`into`/instructions-<iteration>.md)."""
    copy = f'cp "$AUTORESEARCH_INSTRUCTIONS_FILE" {into}/instructions-$AUTORESEARCH_ITERATION.md'
    return f"cmd:{copy} && {sys.executable} {FAKE}"


def run_once(repo: Repo, mission: str, tag: str, into: Path, plan: str) -> None:
    into.mkdir(parents=True, exist_ok=True)
    # unboxed: the agent copies its instructions to `into`, outside the repository
    done = cli(
        "run", mission, "--agent", copying_agent(into), "--run-tag", tag, "--json",
        "--max-iterations", "2", "--sandbox", "none", cwd=repo.root, env={"FAKE_PLAN": plan},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_a_second_run_of_a_mission_is_told_what_the_first_kept(repo: Repo, tmp_path: Path) -> None:
    repo.mission()
    run_once(repo, "missions/demo", "T1", tmp_path / "one", "improve,worse")
    assert HEADER not in (tmp_path / "one/instructions-1.md").read_text()  # nothing earlier
    run_once(repo, "missions/demo", "T2", tmp_path / "two", "improve,improve")
    text = (tmp_path / "two/instructions-1.md").read_text()
    section = text.split(HEADER, 1)[1].split("\n\n", 1)[0].splitlines()
    assert section[1:] == [
        "- run missions-demo-t1 (completed, 2 iterations): 1 → 2",
        "  - kept (iteration 1, +1): improve to 2",
        "  - failed ×1: worse to 1.5",
    ]
    # a mission of its own has no earlier runs, though the repository has
    repo.mission("missions/other")
    run_once(repo, "missions/other", "T1", tmp_path / "other", "improve")
    assert HEADER not in (tmp_path / "other/instructions-1.md").read_text()
    # switched off in sandbox.md: the same mission's third run is told nothing
    repo.mission(sandbox=sandbox_text(extra="search:\n  memory: false\n"))
    run_once(repo, "missions/demo", "T3", tmp_path / "three", "improve")
    assert HEADER not in (tmp_path / "three/instructions-1.md").read_text()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ("search:\n  memory: maybe\n", "search.memory must be true or false."),
        (
            "search:\n  memry: false\n",
            "search.memry is not a known key (known: memory, strategy, archive_size, plateau, on_plateau).",
        ),
        ("search: off\n", "search must be a mapping."),
    ],
)
def test_bad_search_settings_are_refused(extra: str, message: str) -> None:
    with pytest.raises(ContractError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_sandbox(sandbox_text(extra=extra))


def test_memory_is_on_unless_turned_off() -> None:
    assert parse_sandbox(sandbox_text()).memory is True
    assert parse_sandbox(sandbox_text(extra="search:\n  memory: false\n")).memory is False


def _run(run_id: str, **fields: object) -> EarlierRun:
    base: dict[str, object] = {
        "run_id": run_id, "status": "completed", "iterations": 3,
        "baseline_score": 1.0, "final_score": 2.0,
    }  # fmt: skip
    return EarlierRun(**{**base, **fields})  # type: ignore[arg-type]


CERTIFIED = Interval(mean=0.9, low=0.5, high=1.3, n=4)
DIGEST_CASES = [
    ([], []),
    ([_run("r1")], ["- run r1 (completed, 3 iterations): 1 → 2", "  - nothing was kept"]),
    (
        [_run("r1", certified=CERTIFIED, kept=(KeptChange(2, "b", 0.5), KeptChange(1, "a", None)))],
        [
            "- run r1 (completed, 3 iterations): 1 → 2; certified improvement +0.9 [0.5, 1.3]",
            "  - kept (iteration 1, n/a): a",
            "  - kept (iteration 2, +0.5): b",
        ],
    ),
    (
        [_run("r1", failed=(("x\n y", 3), ("z", 1)), baseline_score=None)],
        [
            "- run r1 (completed, 3 iterations): n/a → 2",
            "  - nothing was kept",
            "  - failed ×3: x y",
            "  - failed ×1: z",
        ],
    ),
]


@pytest.mark.parametrize(("earlier", "expected"), DIGEST_CASES)
def test_the_digest_of_earlier_runs(earlier: list[EarlierRun], expected: list[str]) -> None:
    lines = memory.digest_lines(earlier)
    assert lines[1:-1] == expected
    assert memory.digest_lines(earlier) == lines  # the same records, the same text


def test_the_digest_is_bounded() -> None:
    long = "w" * 10_000
    kept = tuple(KeptChange(i, long, float(i)) for i in range(50))
    failed = tuple((f"{long}{i}", 1) for i in range(50))
    earlier = [_run(f"r{i}", kept=kept, failed=failed) for i in range(20)]
    text = "\n".join(memory.digest_lines(earlier))
    assert len(text) <= memory.DIGEST_CAP
    runs_shown = [line for line in text.splitlines() if line.startswith("- run ")]
    assert [line.split()[2] for line in runs_shown] == ["r0", "r1", "r2"]  # newest first
    kept_shown = [line for line in text.splitlines() if "kept (iteration" in line]
    assert kept_shown[:5] == [f"  - kept (iteration {i}, +{i}): {'w' * 99}…" for i in range(45, 50)]


def test_kept_changes_and_most_failed_follow_the_direction() -> None:
    from autoresearch.journal.iteration_records import IterationRecord
    from autoresearch.states import Direction

    def it(n: int, desc: str, score: float | None = None) -> IterationRecord:
        from autoresearch.contracts.stored_evaluation import StoredEvaluation

        ev = None if score is None else StoredEvaluation.from_dict({"score": score})
        return IterationRecord(
            "r", n, "iteration", "applied", "score_improvement", "", "",  # type: ignore[arg-type]
            description=desc, evaluator=ev,
        )  # fmt: skip

    kept = [it(1, "a", 8.0), it(3, "b", 5.0)]
    lower = memory.kept_changes(kept, 10.0, Direction.LOWER)
    assert [(k.iteration, k.gain) for k in lower] == [(1, 2.0), (3, 3.0)]
    higher = memory.kept_changes(kept, 10.0, Direction.HIGHER)
    assert [k.gain for k in higher] == [-2.0, -3.0]
    failed = [it(1, "x"), it(2, "y"), it(3, "y"), it(4, ""), it(5, "x"), it(6, "z")]
    assert memory.most_failed(failed) == (("x", 2), ("y", 2), ("(no description)", 1))


def test_a_long_earlier_run_is_read_in_bounded_slices(repo: Repo, tmp_path: Path) -> None:
    """More keeps than one read takes (SCAN_CAP): the oldest read has no gain to claim (its
    predecessor was not read), and the section stays within its cap."""
    from dataclasses import replace

    from sup_helpers import submit_and_step

    from autoresearch.journal import iteration_records
    from autoresearch.supervisor.prepare import prepare

    mission = repo.mission()
    first = prepare(mission, run_tag="T1")
    submit_and_step(first, {"value.txt": "5\n"}, description="five")
    kept = iteration_records.get_iteration(first.journal, first.run_id, 1)
    assert kept is not None
    with first.journal.tx() as conn:
        for n in range(2, memory.SCAN_CAP + 3):
            iteration_records.insert_iteration(
                conn, replace(kept, iteration=n, description=f"idea {n}")
            )
        conn.execute("UPDATE runs SET status = 'completed'")
    first.close()
    second = prepare(mission, run_tag="T2")
    try:
        (earlier,) = memory.earlier_runs(second.journal, second.run)
    finally:
        second.close()
    assert len(earlier.kept) == memory.SCAN_CAP and earlier.kept[0].iteration == 3
    assert earlier.kept[0].gain is None and earlier.kept[1].gain == 0
    assert len("\n".join(memory.digest_lines([earlier] * 9))) <= memory.DIGEST_CAP

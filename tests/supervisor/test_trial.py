"""`check --try`: the evaluator runs once in a scratch checkout of HEAD, as a run's baseline
would; what would trip a run is named in one line each; nothing is recorded or left behind."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from autoresearch.contracts.sandbox import EvaluatorSpec
from autoresearch.evaluate import EvaluationRecord
from autoresearch.states import EvalFormat, EvalStatus, KeepPolicy
from autoresearch.supervisor.trial import trial_problems
from helpers import Repo, cli, sandbox_text

METRIC = EvaluatorSpec(command="sh b.sh", format=EvalFormat.METRIC, metric="loss")
JSON = EvaluatorSpec(command="python3 e.py", format=EvalFormat.JSON, timeout_seconds=60)
PASSED = EvaluationRecord("x", EvalFormat.JSON, "2026-01-01T00:00:00Z", 5, EvalStatus.PASS,
                          True, 2.0, 0, False, "", "", "log")  # fmt: skip


@pytest.mark.parametrize(
    ("spec", "changes", "problems"),
    [
        (JSON, {}, []),
        (
            JSON,
            {"timed_out": True, "exit_code": None, "status": EvalStatus.ERROR},
            ["the evaluator timed out after 60 s (evaluator.timeout_seconds in sandbox.md)"],
        ),
        (
            JSON,
            {"exit_code": 127, "status": EvalStatus.ERROR, "stderr": "sh: 1: nope: not found\n"},
            ["the evaluator's program was not found (exit 127): sh: 1: nope: not found"],
        ),
        (
            JSON,
            {"exit_code": 1, "status": EvalStatus.ERROR, "stderr": "x\nValueError: bad\n"},
            ["the evaluator exited 1: ValueError: bad"],
        ),
        (
            METRIC,
            {"score": None, "metrics": {"los": 1.0}, "status": EvalStatus.ERROR},
            ["no METRIC line named loss; the METRIC names it printed: los"],
        ),
        # a metric evaluator that fails with its METRIC line is a failing candidate, not broken
        (
            METRIC,
            {"exit_code": 1, "passed": False, "status": EvalStatus.FAIL},
            [
                "the evaluator says the current code does not pass (exit 1): the baseline "
                "would be a failure"
            ],
        ),
        (
            JSON,
            {"score": None},
            ["the evaluator printed no score: a score_improvement run could never keep anything"],
        ),
        (replace(JSON, keep_policy=KeepPolicy.PASS_ONLY), {"score": None}, []),
        # a first evaluator's `{"score": 3}`: the contract's message, then the shape to print
        (
            JSON,
            {
                "parse_error": "Evaluator output must include boolean pass.",
                "score": None,
                "status": EvalStatus.ERROR,
            },
            [
                "the evaluator's output was not understood: Evaluator output must include boolean"
                ' pass. (print one JSON object as the last line, e.g. {"pass": true, "score":'
                " 12.3}; or print METRIC <name>=<value> lines and name one: init --metric, or"
                " sandbox.md's evaluator.format: metric with metric: <name>)"
            ],
        ),
    ],
)
def test_what_would_trip_a_run(
    spec: EvaluatorSpec, changes: dict[str, object], problems: list[str]
) -> None:
    assert trial_problems(spec, replace(PASSED, **changes)) == problems  # type: ignore[arg-type]


def test_files_left_behind_are_named() -> None:
    assert trial_problems(JSON, PASSED, ("out.csv",)) == [
        "the evaluator left files a run's reset would refuse: out.csv; git-ignore them or list "
        "them under worktree.runtime in sandbox.md"
    ]


def _try(repo: Repo) -> tuple[int, dict[str, object]]:
    done = cli("check", "missions/demo", "--try", "--json", cwd=repo.root)
    return done.returncode, json.loads(done.stdout)["try"]


def test_a_good_mission_reads_its_score_and_records_nothing(repo: Repo) -> None:
    repo.mission()
    code, tried = _try(repo)
    assert code == 0 and tried["ok"] is True and tried["problems"] == []
    assert tried["evaluation"]["status"] == "pass" and tried["evaluation"]["score"] == 1
    assert not (repo.root / ".autoresearch/journal.sqlite3").exists()
    assert repo.git("worktree", "list").count("\n") == 0  # the scratch checkout is gone
    assert repo.git("status", "--porcelain") == ""


def test_a_wrong_metric_and_a_stray_file_are_named_and_exit_2(repo: Repo) -> None:
    repo.write("bench.py", "open('out.csv', 'w').write('1')\nprint('METRIC los=3')\n")
    repo.commit("bench")
    repo.mission(sandbox=sandbox_text("python3 bench.py", "metric", "  metric: loss\n"))
    code, tried = _try(repo)
    assert code == 2
    assert tried["problems"] == [
        "no METRIC line named loss; the METRIC names it printed: los",
        "the evaluator left files a run's reset would refuse: out.csv; git-ignore them or list "
        "them under worktree.runtime in sandbox.md",
    ]
    assert not (repo.root / "out.csv").exists()  # it wrote into the scratch checkout only


def test_an_uncommitted_evaluator_next_to_the_mission_is_tried(repo: Repo) -> None:
    # prepare copies the mission folder whole: so does the trial
    repo.mission(sandbox=sandbox_text('python3 "$AUTORESEARCH_MISSION_DIR/e.py"'), commit=False)
    repo.write("missions/demo/e.py", 'print(\'{"pass": true, "score": 7}\')\n')
    code, tried = _try(repo)
    assert (code, tried["problems"]) == (0, [])
    assert tried["evaluation"]["score"] == 7
    text = cli("check", "missions/demo", "--try", cwd=repo.root).stdout
    assert "read:         status pass, pass true, score 7\n" in text


@pytest.mark.parametrize(
    ("screen", "code", "problems", "line"),
    [
        ("python3 scripts/eval.py", 0, [], "screen:       score 1"),
        (
            "exit 3",
            2,
            [
                "evaluator.screen gave no usable score (exit 3): every candidate would be "
                "discarded with `screen failed: …`"
            ],
            "screen:       exit 3",
        ),
    ],
    ids=["reads", "crashes"],
)
def test_the_screen_is_tried_after_the_evaluator(
    repo: Repo, screen: str, code: int, problems: list[str], line: str
) -> None:
    repo.mission(sandbox=sandbox_text(extra=f"  screen:\n    command: {screen}\n"))
    assert _try(repo)[0] == code and _try(repo)[1]["problems"] == problems
    assert f"{line}\n" in cli("check", "missions/demo", "--try", cwd=repo.root).stdout
    checked = cli("check", "missions/demo", cwd=repo.root)  # no "not a known key" warning
    assert "evaluator.screen" not in checked.stdout + checked.stderr

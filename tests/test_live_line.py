"""The live line of `autoresearch run`: why a discard, descriptions cut to the terminal, what runs."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from autoresearch.cli.loop_cmds import LoopDoor
from autoresearch.cli.progress import Columns, ProgressPrinter, Ticking, decision_text
from autoresearch.contracts.stored_evaluation import StoredEvaluation
from autoresearch.evaluate import EvaluationRecord
from autoresearch.journal.views import decision_label, evaluation_text
from autoresearch.noise import Interval
from autoresearch.states import DecisionKind, Direction, EvalStatus, RunStatus
from autoresearch.supervisor.estimates import Headline
from autoresearch.supervisor.step import StepResult
from helpers import Repo, cli, sandbox_text

CMD_AGENT = f"cmd:{sys.executable} {Path(__file__).parent / 'agents/fakes/cmd_agent.py'}"
LONG = "tighten the inner loop of the tokenizer so that every batch " * 3
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def evaluation(
    score: float, status: EvalStatus = EvalStatus.PASS, timed_out: bool = False
) -> EvaluationRecord:
    return EvaluationRecord("python eval.py", "json", "2026-01-01T00:00:00Z", 10, status,
                            status == EvalStatus.PASS, score, 0, timed_out, "", "", "eval.log")  # fmt: skip


@pytest.mark.parametrize(
    ("decision", "evaluated", "reason", "expected"),
    [
        ("discard", (EvalStatus.FAIL, False), "x", "discard (fail)"),
        ("discard", (EvalStatus.ERROR, True), "x", "discard (timeout)"),
        ("discard", (EvalStatus.ERROR, False), "x", "discard (error)"),
        ("discard", (EvalStatus.PASS, False), "x", "discard"),  # not better
        # never measured: the pinned reason
        ("discard", None, "replay conflict", "discard (replay conflict)"),
        ("discard", None, "harness changed", "discard (harness changed)"),
        ("discard", None, "duplicate of iteration 1", "discard (duplicate of iteration 1)"),
        ("discard", None, None, "discard"),
        ("keep", (EvalStatus.PASS, False), "x", "keep"),
        ("noop", None, "candidate made no change", "noop"),
        ("ambiguous", (EvalStatus.PASS, False), "x", "ambiguous"),
    ],
)
def test_decision_text(
    decision: str, evaluated: tuple[EvalStatus, bool] | None, reason: str | None, expected: str
) -> None:
    record = evaluation(1.0, *evaluated) if evaluated else None
    assert decision_text(DecisionKind(decision), record, reason) == expected


@pytest.mark.parametrize(
    ("decision", "status", "timed_out", "expected"),
    [
        (DecisionKind.DISCARD, EvalStatus.FAIL, False, "fail"),
        (DecisionKind.DISCARD, EvalStatus.ERROR, True, "timeout"),
        (DecisionKind.DISCARD, EvalStatus.ERROR, False, "error"),
        (DecisionKind.DISCARD, EvalStatus.PASS, False, None),
        (DecisionKind.AMBIGUOUS, EvalStatus.PASS, False, None),
        (DecisionKind.KEEP, EvalStatus.PASS, False, None),
        (DecisionKind.INTERRUPTED, EvalStatus.ERROR, False, "error"),
    ],
)
def test_one_label_rule_for_a_steps_record_and_the_journals(
    decision: DecisionKind, status: EvalStatus, timed_out: bool, expected: str | None
) -> None:
    """The live line's word is the core's (views.decision_label), the same for the record a
    step returns and the one the journal stores (what status reads)."""
    record = evaluation(1.0, status, timed_out)
    stored = StoredEvaluation.from_dict(record.to_dict())
    assert decision_label(record, decision, "x") == decision_label(stored, decision, "x")
    assert decision_label(record, decision, "x") == expected


def run(repo: Repo, plan: str, **env: str) -> list[str]:
    repo.mission(sandbox=sandbox_text(extra="  timeout_seconds: 5\n"))
    iterations = str(len(plan.split(",")))
    done = cli("run", "missions/demo", "--agent", CMD_AGENT, "--max-iterations", iterations,
               cwd=repo.root, env={"FAKE_PLAN": plan, "FAKE_DESCRIPTION": LONG, "COLUMNS": "100",
                                   **env})  # fmt: skip
    assert done.returncode == 0, done.stderr
    return ANSI.sub("", done.stderr).replace("\r", "\n").splitlines()


def test_a_discard_says_why_and_descriptions_fit_the_terminal(repo: Repo) -> None:
    lines = run(repo, "improve,eval:fail,eval:hang,evalcrash,worse")
    rows = {int(line.split()[0]): line for line in lines if re.match(r"\s+\d+\s", line)}
    assert [rows[i].split()[1] for i in range(1, 6)] == ["keep", *["discard"] * 4]
    assert "discard (fail)" in rows[2] and "discard (timeout)" in rows[3]
    assert "discard (error)" in rows[4]
    assert "(" not in rows[5].split("best")[0]  # measured and worse: nothing to explain
    for row in rows.values():  # no terminal: no width to fit, a bounded description
        assert row.endswith("…") and LONG[:120] not in row and LONG[:100] in row, row


def test_the_spinner_says_whether_the_agent_or_the_evaluator_runs(repo: Repo) -> None:
    # FORCE_COLOR makes rich treat the pipe as a terminal: the spinner is drawn
    lines = run(repo, "improve", FORCE_COLOR="1")
    assert any("iteration 1: agent cmd running…" in line for line in lines)
    assert any("iteration 1: evaluator running…" in line for line in lines)
    (row,) = [line for line in lines if re.match(r"\s+1\s+keep", line)]
    assert len(row) == 100 and row.endswith("…")  # cut to the terminal's width


def test_a_continued_run_names_its_baseline_not_its_best(repo: Repo) -> None:
    # the header once printed the last kept score as the baseline of a resumed run
    lines = run(repo, "improve")
    (base,) = [line for line in lines if line.strip().startswith("baseline ")]
    run_id = json.loads(cli("status", "--json", cwd=repo.root).stdout)["runs"][0]["run_id"]
    done = cli("continue", run_id, "--max-iterations", "+1", "--agent", CMD_AGENT,
               cwd=repo.root, env={"FAKE_PLAN": "worse"})  # fmt: skip
    assert done.returncode == 0, done.stderr
    later = ANSI.sub("", done.stderr).splitlines()
    assert [line for line in later if line.strip().startswith("baseline ")] == [base]
    (best,) = [line.split()[-1] for line in later if line.strip().startswith("best so far ")]
    status = cli("status", "--json", cwd=repo.root).stdout
    assert best != base.split()[1] and best in status


def printed(capsys: pytest.CaptureFixture[str]) -> str:
    """What the printer wrote to stderr, its elapsed seconds (the one timing) as `N.Ns`."""
    return re.sub(r" +\d+\.\ds  ", " N.Ns  ", ANSI.sub("", capsys.readouterr().err))


def test_the_header_and_a_row_print_the_estimates_intervals(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # a resumed noisy run: its baseline and best rest on readings that vary (the CLI's door
    # hands the printer the run's headline)
    base, best = Interval(0.1, 0.05, 0.15, 3), Interval(10.3, 10.0, 10.6, 5)
    printer = LoopDoor(as_json=False).progress(Direction.HIGHER, Headline(0.1, base, 10.3, best))
    assert isinstance(printer, ProgressPrinter)
    printer.header("r1", "cmd:python agent.py --fast", "/tmp/wt", lanes=2)
    kept = Interval(11.25, 11.0, 11.5, 4)
    printer.step_recorded(
        StepResult("r1", 3, DecisionKind.KEEP, "better", True, [], evaluation(11.4),
                   RunStatus.RUNNING, None, "abc", 11.25, description="tune the lr",
                   estimate=Interval(11.25, 11.0, 11.5, 4), last_kept_interval=kept),
        None,
    )  # fmt: skip
    printer.step_recorded(
        StepResult("r1", 4, DecisionKind.DISCARD, "worse", False, [], evaluation(9.0),
                   RunStatus.RUNNING, None, "abc", 11.25, description="a worse lr"),
        None,
    )  # fmt: skip
    printer.step_recorded(
        StepResult("r1", 5, DecisionKind.DISCARD, "failed", False, [],
                   evaluation(1.0, EvalStatus.FAIL), RunStatus.RUNNING, None, "abc", 11.25,
                   description="broke it"),
        None,
    )  # fmt: skip
    printer.close()
    assert printed(capsys) == (
        "run r1  agent cmd:python agent.py --fast  lanes 2\n"
        "    worktree /tmp/wt\n"
        "    baseline 0.100 ± 0.050 (n=3) (higher is better)\n"
        "    best so far 10.30 ± 0.30 (n=5)\n"
        "    3  keep              11.25 ± 0.25 (n=4)  best 11.25 ± 0.25 (n=4) N.Ns  tune the lr\n"
        # the score column grew to the interval of row 3 and stays there: rows stay aligned
        "    4  discard                            9  best 11.25 ± 0.25 (n=4) N.Ns  a worse lr\n"
        "    5  discard (fail)                     1  best 11.25 ± 0.25 (n=4) N.Ns  broke it\n"
    )


def test_a_new_runs_header_has_its_baseline_and_no_best(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # no best of its own: the baseline (and its interval) is the best so far
    printer = ProgressPrinter(Direction.LOWER, 2.5, None, Interval(2.5, 2.0, 3.0, 3), None)
    printer.header("r2", "claude", "/tmp/wt2")
    printer.step_recorded(
        StepResult("r2", 1, DecisionKind.DISCARD, "worse", False, [], evaluation(3.5),
                   RunStatus.RUNNING, None, None, None, description="x"),
        None,
    )  # fmt: skip
    assert printed(capsys) == (
        "run r2  agent claude\n"
        "    worktree /tmp/wt2\n"
        "    baseline 2.50 ± 0.50 (n=3) (lower is better)\n"
        "    1  discard                  3.5  best 2.50 ± 0.50 (n=3) N.Ns  x\n"
    )


@pytest.mark.parametrize(
    ("data", "cell"),
    [
        ({"status": "pass", "pass": True, "score": 1.0}, "pass"),
        ({"status": "fail", "pass": False}, "fail"),
        ({"status": "error", "exit_code": 1}, "error"),
        # a timeout is recorded as status error; status's cell says what happened
        ({"status": "error", "exit_code": None, "timed_out": True}, "timeout"),
    ],
)
def test_the_evaluation_cell_names_a_timeout(data: dict[str, object], cell: str) -> None:
    stored = StoredEvaluation.from_dict(data)
    assert evaluation_text(stored, DecisionKind.DISCARD, "x") == cell


def test_columns_grow_to_the_widest_cell_and_never_shrink() -> None:
    columns = Columns()
    assert (columns.decision, columns.score, columns.best) == (17, 10, 10)
    columns.fit(decision="discard (replay conflict)", score="103 ± 4.1 (n=5)", best="n/a")
    assert (columns.decision, columns.score, columns.best) == (25, 15, 10)
    columns.fit(decision="keep", score="9", best="99.5 ± 0.25 (n=12)")
    assert (columns.decision, columns.score, columns.best) == (25, 15, 18)


def test_the_spinner_text_counts_the_seconds() -> None:
    clock = iter([100.0, 100.4, 163.0])
    ticking = Ticking("iteration 3: agent claude running…", now=lambda: next(clock))
    assert ticking.__rich__() == "iteration 3: agent claude running… 0s"
    assert ticking.__rich__() == "iteration 3: agent claude running… 63s"


# Texts an agent or an evaluator may hand the live line: control codes, tabs, wide and
# combining characters, emoji and markup-like text, and descriptions past the log width.
AWKWARD = [
    "plain",
    "tab\tin\tit",
    "\ttab first, then a\ttab after 日本",
    "cr\rbel\x07bs\x08vt\x0bff\x0c gone",
    "\x1b[31mescape kept\x1b[0m",
    "wide 日本語 and 👍 emoji, e\u0301 combined",
    ":smile: [bold]not markup[/bold]",
    "x" * 119,
    "x" * 121,
    "日本" * 70,
    "tab\t" * 40,
    "a\x07" * 130,
]


@pytest.mark.parametrize("text", AWKWARD)
def test_where_no_terminal_reads_the_plain_console_writes_what_rich_would(text: str) -> None:
    """Into a pipe or a log file the live line is written without rich: byte for byte what
    rich's Console wrote there (the header, a row with its description cut, a note, a
    spinner drawing nothing)."""
    from io import StringIO

    from rich.console import Console

    from autoresearch.cli.progress import PlainConsole

    def lines(console: object) -> None:
        printer = ProgressPrinter(Direction.HIGHER, 1.0, None)
        printer.console = console  # type: ignore[assignment]
        printer.header("r1", f"cmd:{text}", f"/tmp/{text}")
        printer.session_started(1)
        printer.step_recorded(
            StepResult("r1", 1, DecisionKind.KEEP, "better", True, [], evaluation(2.0),
                       RunStatus.RUNNING, None, "abc", 2.0, description=text),
            None,
        )  # fmt: skip
        printer.note(text)
        printer.close()

    by_rich, plain = StringIO(), StringIO()
    lines(Console(file=by_rich, force_terminal=False, highlight=False, soft_wrap=True, emoji=False))
    lines(PlainConsole(lambda: None, stream=plain))
    assert plain.getvalue() == by_rich.getvalue()


@pytest.mark.parametrize(
    ("environ", "isatty", "terminal"),
    [
        ({}, True, True),
        ({}, False, False),
        ({"TTY_COMPATIBLE": "0"}, True, False),
        ({"TTY_COMPATIBLE": "1"}, False, True),
        ({"FORCE_COLOR": "1"}, False, True),
        ({"FORCE_COLOR": ""}, True, False),  # set but empty: rich draws nothing
        ({"TTY_COMPATIBLE": "0", "FORCE_COLOR": "1"}, True, False),
        ({"TTY_COMPATIBLE": "yes"}, False, False),  # neither 0 nor 1: the next rule
    ],
)
def test_rich_draws_where_rich_takes_stderr_for_a_terminal(
    environ: dict[str, str], isatty: bool, terminal: bool
) -> None:
    from rich.console import Console

    from autoresearch.cli.progress import wants_terminal

    class Stream:
        def isatty(self) -> bool:
            return isatty

        def write(self, text: str) -> int:
            return len(text)

    assert wants_terminal(environ, isatty) == terminal
    # and rich agrees (its own rule, read from the same environment)
    console = Console(file=Stream(), _environ=environ)  # type: ignore[arg-type]
    assert console.is_terminal == terminal

"""A journal whose pages are whole but whose values are not – a run's status, an iteration's
decision, a JSON column, hand-edited with sqlite3 – is damaged: found when it is opened (enum
columns, journal/domains.py) or read (every decoded value, journal/records.py), refused in one
line and never written; `autoresearch doctor` names the table, row, column and what was
expected, and exits 1; a backup holding such a value is not restored."""

from __future__ import annotations

import hashlib
import json
import pickle
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from enum import StrEnum
from pathlib import Path

import pytest

from autoresearch.contracts.agent_record import AgentRecord
from autoresearch.contracts.frozen import FrozenMission
from autoresearch.errors import JournalError
from autoresearch.journal import (
    domains,
    integrity,
    iteration_records,
    jobs,
    lanes,
    records,
    runs,
    seals,
    sessions,
)
from autoresearch.journal.db import Journal
from autoresearch.states import RunStatus
from helpers import cli


def _codecs() -> list[records.Codec]:
    return [
        value
        for module in (runs, iteration_records, sessions, jobs, lanes)
        for value in vars(module).values()
        if isinstance(value, records.Codec)
    ]


def test_every_codec_names_its_table_and_key_and_checks_its_enums(tmp_path: Path) -> None:
    """The table and key a codec names (in its messages) are the schema's; every enum field it
    decodes is a domain the scan at open checks too."""
    registered = {(d.table, d.column): d.values for d in domains.DOMAINS}
    codecs = _codecs()
    assert len({c.table for c in codecs}) == len(codecs) == 6  # one codec a table
    path = _fresh_journal(tmp_path)
    with _db(path) as conn:
        for codec in codecs:
            info = conn.execute(f"PRAGMA table_info({codec.table})").fetchall()
            key = tuple(str(r[1]) for r in sorted((r for r in info if r[5]), key=lambda r: r[5]))
            assert codec.table and codec.keys == key, (codec.table, codec.keys, key)
            for name, enum in codec.enums.items():
                assert registered.get((codec.table, name)) is enum, (codec.table, name)


@contextmanager
def _db(path: Path) -> Iterator[sqlite3.Connection]:
    """A raw connection, as `sqlite3` on the command line: committed and closed after (an
    open one would leave its writes in the WAL for the next opener to move). It keeps the
    seals as autoresearch's own connection does: what these tests damage is a value, not
    the history (a rewritten history: tests/faults/test_journal_tamper.py)."""
    conn = sqlite3.connect(path, isolation_level=None)
    key, made = seals.load_key(integrity.seal_key(path))
    seals.register(conn, key)
    if seals.tables_present(conn):
        if made:  # a copy of the demo: sealed anew, as Journal.open would
            seals.seal_all(conn)
        seals.install_triggers(conn)
    try:
        yield conn
    finally:
        conn.close()


def _fresh_journal(tmp_path: Path) -> Path:
    path = tmp_path / ".autoresearch" / "journal.sqlite3"
    path.parent.mkdir()
    Journal.open(path).close()
    return path


def _filler(kind: str, column: str) -> object:
    if column.endswith("_json"):
        return "{}"
    return 1 if "INT" in kind.upper() or "REAL" in kind.upper() else "x"


def _insert_valid_row(path: Path, table: str) -> None:
    """One row in `table` with every required column filled and every enum column valid."""
    valid = {d.column: next(iter(d.values)).value for d in domains.DOMAINS if d.table == table}
    with _db(path) as conn:
        info = conn.execute(f"PRAGMA table_info({table})").fetchall()
        cols = {
            str(name): valid.get(str(name), _filler(str(kind), str(name)))
            for _, name, kind, notnull, default, pk in info
            if (notnull and default is None) or pk or str(name) in valid
        }
        marks = ", ".join("?" for _ in cols)
        conn.execute(
            f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({marks})", list(cols.values())
        )


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize(
    "domain", domains.DOMAINS, ids=[f"{d.table}.{d.column}" for d in domains.DOMAINS]
)
@pytest.mark.parametrize("bad", ["bogus", 7])
def test_a_value_outside_its_domain_is_refused_at_open(
    tmp_path: Path, domain: domains.Domain, bad: object
) -> None:
    path = _fresh_journal(tmp_path)
    _insert_valid_row(path, domain.table)
    Journal.open(path).close()  # whole: every value is a member
    with _db(path) as conn:
        conn.execute(f"UPDATE {domain.table} SET {domain.column} = ?", (bad,))
    before = _sha(path)
    with pytest.raises(JournalError) as refused:
        Journal.open(path)
    message = refused.value.message
    assert f"journal {path} is damaged (table {domain.table}, row " in message
    assert f"{domain.column} is {str(bad)!r}, expected {domains.one_of(domain.values)}" in message
    assert "nothing was written" in message and "\n" not in message
    assert _sha(path) == before


class Colour(StrEnum):
    RED = "red"


@pytest.mark.parametrize(
    ("found", "shown"),
    [
        ([], ""),
        (
            [domains.BadValue("runs", "run_id=r", "status", "x" * 100, "one of a")],
            "table runs, row run_id=r: status is '" + "x" * 56 + "..., expected one of a",
        ),
        (
            [domains.BadValue("", "", "decision", "kepp", domains.one_of(Colour))] * 5,
            "; ".join(["decision is 'kepp', expected one of red"] * 3) + " (and 2 more)",
        ),
    ],
)
def test_bad_values_in_one_line(found: list[domains.BadValue], shown: str) -> None:
    assert domains.describe_all(found) == shown


@pytest.mark.parametrize(
    ("table", "column", "value", "read", "expected"),
    [
        ("iterations", "decision", "kepp", "iteration", "one of baseline, keep, discard"),
        # an agent's session is decoded at its first read (issue 36): refused there
        ("iterations", "agent_json", "{bad", "iteration.agent", "valid JSON of its record"),
        ("runs", "loop_json", '{"agents": 3}', "run.loop", "valid JSON of its record"),
        # so is a run's frozen evaluator (`status` reads its direction alone)
        ("runs", "evaluator_json", "{bad", "run.evaluator", "valid JSON of its record"),
        ("runs", "evaluator_json", '{"command": "x", "format": "json", "direction": "up"}',
         "run.direction", "'up' is not a valid Direction"),
        ("runs", "evaluator_json", '{"command": "x", "format": "json", "direction": "up"}',
         "run.evaluator", "'up' is not a valid Direction"),
        ("runs", "evaluator_json", '{"command": "x", "format": "yaml"}',
         "run.evaluator", "'yaml' is not a valid EvalFormat"),
        ("runs", "phase", "half", "run", "one of preparing, ready"),
        ("iterations", "keep_policy", "pass-only", "iteration",
         "one of score_improvement, pass_only"),
    ],
)  # fmt: skip
def test_a_value_damaged_while_open_is_refused_when_read(
    tmp_path: Path, table: str, column: str, value: str, read: str, expected: str
) -> None:
    """The scan at open cannot see an edit made afterwards: the codec refuses the same way."""
    path = _fresh_journal(tmp_path)
    _insert_valid_row(path, "runs")
    with _db(path) as conn:
        conn.execute(
            "UPDATE runs SET evaluator_json = ?, sandbox_json = ?",
            (json.dumps({"command": "x", "format": "json"}), json.dumps({"mission": "m"})),
        )
        conn.execute("UPDATE runs SET loop_json = NULL")
        conn.execute(
            "INSERT INTO iterations (run_id, iteration, kind, state, keep_policy, created_at, "
            "updated_at) VALUES ('x', 1, 'iteration', 'applied', 'score_improvement', "
            "'t', 't')"
        )
    with Journal.open(path) as journal:
        assert iteration_records.get_iteration(journal, "x", 1) is not None
        with _db(path) as other:
            other.execute(f"UPDATE {table} SET {column} = ?", (value,))
        with pytest.raises(JournalError) as refused:
            if read.startswith("run"):
                found: object = runs.get_run(journal, "x")
            else:
                found = iteration_records.get_iteration(journal, "x", 1)
            if "." in read:
                getattr(found, read.partition(".")[2])
    message = refused.value.message
    # named as the scan at open names it: the table, the row's key, the column
    row = "run_id=x" if read.startswith("run") else "run_id=x, iteration=1"
    start = f"a row of the journal is damaged (table {table}, row {row}: {column} is "
    assert message.startswith(start), message
    assert expected in message and "nothing was written" in message and "\n" not in message


def _run_with_mission(tmp_path: Path, frozen: str) -> Path:
    """A journal with one run whose frozen mission (sandbox_json) is `frozen`."""
    path = _fresh_journal(tmp_path)
    _insert_valid_row(path, "runs")
    with _db(path) as conn:
        conn.execute(
            "UPDATE runs SET evaluator_json = ?, sandbox_json = ?, loop_json = NULL",
            (json.dumps({"command": "x", "format": "json"}), frozen),
        )
    return path


@pytest.mark.parametrize(
    ("frozen", "field", "expected"),
    [
        ('{"links": 3}', "sandbox", "expected valid JSON of its record (expected an array"),
        ('{"noise": 3}', "noise", "expected valid JSON of its record (expected an object"),
        ("{bad", "noise_policy", "expected valid JSON of its record (Expecting"),
    ],
)
def test_a_frozen_mission_is_decoded_at_its_first_read(
    tmp_path: Path, frozen: str, field: str, expected: str
) -> None:
    """A run reads without its frozen mission's contracts (`status` lists runs without them:
    issue 36); a damaged mission is refused at its first read, as a damaged run was."""
    path = _run_with_mission(tmp_path, frozen)
    with Journal.open(path) as journal:
        run = runs.get_run(journal, "x")
    assert run is not None and run.direction == "higher"
    with pytest.raises(JournalError) as refused:
        getattr(run, field)
    start = f"a row of the journal is damaged (table runs, row run_id=x: sandbox_json is {frozen!r}"
    message = refused.value.message
    assert message.startswith(start) and expected in message, message
    assert "nothing was written" in message and "\n" not in message


def test_a_run_read_lazily_is_the_run_it_always_was(tmp_path: Path) -> None:
    """Decoded at first read, a run record still compares, copies, pickles and writes back
    whole, its mission as FrozenMission.from_dict makes it."""
    mission = {"links": ["data"], "noise": {"mode": "auto"}, "relative_dir": "m"}
    path = _run_with_mission(tmp_path, json.dumps(mission))
    with Journal.open(path) as journal:
        first, second = runs.get_run(journal, "x"), runs.get_run(journal, "x")
        assert first is not None and second is not None
        assert first.noise == FrozenMission.from_dict(mission).noise  # read before the rest
        assert first == second and pickle.loads(pickle.dumps(second)) == first
        assert first.sandbox == FrozenMission.from_dict(mission)
        moved = replace(second, run_id="y", status=RunStatus.FAILED)
        with journal.tx() as conn:
            runs.insert_run(conn, moved)
        again = runs.get_run(journal, "y")
    assert again == moved and again.sandbox.links == ("data",)


def test_an_iteration_read_lazily_is_the_iteration_it_always_was(tmp_path: Path) -> None:
    """Its agent session decoded at first read, an iteration still compares, pickles and
    writes back whole, its session as AgentRecord.from_dict makes it."""
    session = {"agent": "offline", "end_reason": "done", "duration_ms": 5, "lane": 2}
    path = _run_with_mission(tmp_path, json.dumps({"relative_dir": "m"}))
    with _db(path) as conn:
        conn.execute(
            "INSERT INTO iterations (run_id, iteration, kind, state, keep_policy, created_at, "
            "updated_at, agent_json) VALUES ('x', 1, 'iteration', 'applied', "
            "'score_improvement', 't', 't', ?)",
            (json.dumps(session),),
        )
    with Journal.open(path) as journal:
        first, second = (
            iteration_records.get_iteration(journal, "x", 1),
            iteration_records.get_iteration(journal, "x", 1),
        )
        assert first is not None and second is not None
        assert first == second and pickle.loads(pickle.dumps(second)) == first
        assert first.agent == AgentRecord.from_dict(session)
        with journal.tx() as conn:
            iteration_records.update_iteration(conn, replace(second, description="again"))
        again = iteration_records.get_iteration(journal, "x", 1)
    assert again is not None and again.agent == first.agent and again.description == "again"


def test_a_session_runs_checks_are_decoded_at_their_first_read(tmp_path: Path) -> None:
    """A hook reads session runs without their checks' contract (issue 36): a damaged value
    is refused at the first read of the checks, named as the codec names it."""
    path = _fresh_journal(tmp_path)
    _insert_valid_row(path, "session_runs")
    with _db(path) as conn:
        conn.execute("UPDATE session_runs SET checks_json = '{bad'")
        (run_id,) = conn.execute("SELECT run_id FROM session_runs").fetchone()
    with Journal.open(path) as journal:
        run = sessions.get_run(journal, run_id)
    assert run is not None and run.run_id == run_id
    with pytest.raises(JournalError) as refused:
        _ = run.checks
    message = refused.value.message
    assert f"table session_runs, row run_id={run_id}: checks_json is '{{bad'" in message


# --- the CLI, on a real finished demo ---------------------------------------------------------


def journal_of(repo: Path) -> Path:
    return repo / ".autoresearch/journal.sqlite3"


def edit(path: Path, sql: str) -> None:
    with _db(path) as conn:
        assert conn.execute(sql).rowcount >= 1, sql


def run_id_of(repo: Path) -> str:
    with _db(journal_of(repo)) as conn:
        return str(conn.execute("SELECT run_id FROM runs").fetchone()[0])


def one_line_refusal(done, *needles: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert done.stderr.startswith("autoresearch: "), done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    for needle in needles:
        assert needle in done.stderr, done.stderr


def doctor(repo: Path) -> tuple[int, dict]:
    done = cli("--repo", str(repo), "doctor", "--json", cwd=repo)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout)


@pytest.mark.parametrize(
    ("sql", "needles"),
    [
        ("UPDATE iterations SET decision = 'kepp' WHERE iteration = 1",
         ["table iterations, row run_id=", ", iteration=1: decision is 'kepp', expected one of "]),
        ("UPDATE runs SET status = 'runnin'",
         ["table runs, row run_id=", ": status is 'runnin', expected one of running, stopped"]),
        ("UPDATE evaluations SET status = 'passed' WHERE iteration = 2",
         ["table evaluations, row id=", ": status is 'passed', expected one of pass, fail"]),
    ],
)  # fmt: skip
def test_status_and_doctor_on_a_bad_enum_value(demo: Path, sql: str, needles: list[str]) -> None:
    journal = journal_of(demo)
    run_id = run_id_of(demo)
    edit(journal, sql)
    before = _sha(journal)
    for args in (["status"], ["status", "--json"], ["status", run_id]):
        one_line_refusal(cli("--repo", str(demo), *args, cwd=demo), "is damaged (", *needles)
    code, report = doctor(demo)
    assert code == 1 and not report["healthy"], report
    found = [f for f in report["findings"] if f["check"] == "journal"]
    assert found[0]["severity"] == "error" and all(n in found[0]["message"] for n in needles)
    assert "--restore" in found[0]["fix"]
    assert _sha(journal) == before  # nothing was written
    # the backups were taken before the edit: the way back, and the run reads whole again
    assert cli("--repo", str(demo), "doctor", "--restore", cwd=demo).returncode == 0
    listed = cli("--repo", str(demo), "status", "--json", cwd=demo)
    assert listed.returncode == 0, listed.stderr
    assert doctor(demo)[0] in (0, 1)  # the copy's worktree registration names the original


def test_doctor_names_a_json_value_that_does_not_parse(demo: Path) -> None:
    edit(journal_of(demo), "UPDATE runs SET evaluator_json = '{bad'")
    one_line_refusal(
        cli("--repo", str(demo), "status", cwd=demo), "evaluator_json is '{bad', expected valid"
    )
    code, report = doctor(demo)
    found = next(f for f in report["findings"] if f["check"] == "journal")
    assert code == 1 and found["severity"] == "error", report
    assert "is damaged (table runs, row run_id=" in found["message"]
    assert "evaluator_json is '{bad', expected valid JSON (" in found["message"]


def test_a_backup_with_a_bad_value_is_not_restored(demo: Path) -> None:
    newest = demo / ".autoresearch/backups/journal.1.sqlite3"
    outside = integrity.outside(journal_of(demo)).parent / "backups/journal.1.sqlite3"
    for damaged in (d for d in (journal_of(demo), newest, outside) if d.exists()):
        edit(damaged, "UPDATE iterations SET decision = 'kepp' WHERE iteration = 1")
    code, report = doctor(demo)
    assert code == 1
    journal = next(f for f in report["findings"] if f["check"] == "journal")
    assert "from journal.2.sqlite3" in journal["fix"], journal
    unusable = [
        f for f in report["findings"] if f["check"] == "backups" and "journal.1" in f["message"]
    ]
    assert unusable[0]["severity"] == "warning" and "decision is 'kepp'" in unusable[0]["message"]
    done = cli("--repo", str(demo), "doctor", "--restore", "--json", cwd=demo)
    assert json.loads(done.stdout)["restored"]["restored_from"].endswith("journal.2.sqlite3")
    listed = cli("--repo", str(demo), "status", "--json", cwd=demo)
    assert listed.returncode == 0, listed.stderr


def test_sql_over_a_json_value_that_does_not_parse_is_damage(tmp_path: Path) -> None:
    """The run's spending is summed by SQLite's json functions: a bad value there is the same
    damaged-journal refusal, not "not a valid SQLite database"."""
    path = _fresh_journal(tmp_path)
    _insert_valid_row(path, "iterations")
    with _db(path) as conn:
        conn.execute("UPDATE iterations SET run_id = 'x', state = 'applied', agent_json = '{bad'")
    with Journal.open(path) as journal, pytest.raises(JournalError) as refused:
        runs.spend(journal, "x")
    message = refused.value.message
    assert message.startswith(f"journal {path} is damaged (a JSON value does not parse: ")
    assert "`autoresearch doctor` names it" in message and "not a valid SQLite" not in message


# --- a run's and an iteration's keep policy, an evaluation's purpose, a child's role ---------


@pytest.mark.parametrize(
    ("sql", "needles"),
    [
        ("UPDATE runs SET keep_policy = 'pass-only'",
         ["table runs, row run_id=", ": keep_policy is 'pass-only', expected one of "
          "score_improvement, pass_only"]),
        ("UPDATE iterations SET keep_policy = 'pass-only' WHERE iteration = 1",
         ["table iterations, row run_id=", ", iteration=1: keep_policy is 'pass-only', "
          "expected one of score_improvement, pass_only"]),
        ("UPDATE evaluations SET purpose = 'rebaseline' WHERE iteration = 1",
         ["table evaluations, row id=", ": purpose is 'rebaseline', expected one of baseline, "
          "iteration, certify"]),
        ("INSERT INTO children (pgid, owner, role, marker, started_at) "
         "VALUES (7, 'r', 'agnet', 'm', 't')",
         ["table children, row owner=r, pgid=7: role is 'agnet', expected one of agent, "
          "evaluator, certify, checks, harness"]),
    ],
)  # fmt: skip
def test_a_bad_policy_purpose_or_role_is_damage(demo: Path, sql: str, needles: list[str]) -> None:
    """These columns were free text: a hand-edited value was read as it was (a keep policy
    that is neither made every candidate a score_improvement one). An iteration's copy of the
    policy (what it was decided under, in its ledger line) is the run's, so the same set."""
    journal = journal_of(demo)
    edit(journal, sql)
    before = _sha(journal)
    one_line_refusal(cli("--repo", str(demo), "status", cwd=demo), "is damaged (", *needles)
    code, report = doctor(demo)
    assert code == 1 and not report["healthy"], report
    found = [f for f in report["findings"] if f["check"] == "journal"]
    assert found[0]["severity"] == "error" and all(n in found[0]["message"] for n in needles)
    assert _sha(journal) == before  # nothing was written


def test_a_child_role_damaged_while_open_is_refused_when_read(tmp_path: Path) -> None:
    """The registry's rows are decoded like the other stores': a role edited after the scan at
    open is the one-line damage refusal, not a crash in the reaper."""
    from autoresearch.journal import children
    from autoresearch.states import ChildRole

    path = _fresh_journal(tmp_path)
    with Journal.open(path) as journal:
        with journal.tx() as conn:
            children.add_child(conn, "r", 7, ChildRole.AGENT, "m")
        assert children.children(journal, "r") == [children.Child(7, ChildRole.AGENT, "m")]
        with _db(path) as other:
            other.execute("UPDATE children SET role = 'agnet'")
        with pytest.raises(JournalError) as refused:
            children.children(journal, "r")
    message = refused.value.message
    assert message.startswith("a row of the journal is damaged (role is 'agnet', expected one of ")
    assert "nothing was written" in message and "\n" not in message


def test_a_keep_policy_no_version_wrote_is_refused_when_read(tmp_path: Path) -> None:
    """The run's column and its frozen evaluator both hold the policy: either one damaged is
    refused when the run is read."""
    path = _fresh_journal(tmp_path)
    _insert_valid_row(path, "runs")
    evaluator = {"command": "x", "format": "json", "keep_policy": "score_improvement"}
    with _db(path) as conn:
        conn.execute(
            "UPDATE runs SET run_id = 'x', keep_policy = 'pass_only', evaluator_json = ?, "
            "sandbox_json = ?, loop_json = NULL",
            (json.dumps(evaluator), json.dumps({"mission": "m"})),
        )
    with Journal.open(path) as journal:
        assert runs.get_run(journal, "x") is not None
        whole = json.dumps(evaluator)
        for column, policy, frozen, expected in [
            ("evaluator_json", "pass_only", json.dumps({**evaluator, "keep_policy": "always"}),
             "'always' is not a valid KeepPolicy"),
            ("keep_policy", "always", whole, "one of score_improvement, pass_only"),
        ]:  # fmt: skip
            with _db(path) as other:
                other.execute(
                    "UPDATE runs SET keep_policy = ?, evaluator_json = ?", (policy, frozen)
                )
            with pytest.raises(JournalError) as refused:
                found = runs.get_run(journal, "x")
                assert found is not None and found.evaluator  # decoded at its first read
            message = refused.value.message
            assert message.startswith("a row of the journal is damaged ("), message
            assert f"{column} is " in message and expected in message and "\n" not in message


def test_a_verdict_damaged_while_open_is_refused_by_the_failure_streak(tmp_path: Path) -> None:
    """The Stop hook's failure streak reads the segment's latest verdicts on their own (not
    as records); they were plain strings, so a verdict edited after the scan at open was
    counted as a success that ended the streak. It is the one-line damage refusal."""
    from autoresearch.states import Verdict

    path = _fresh_journal(tmp_path)
    _insert_valid_row(path, "sessions")
    _insert_valid_row(path, "session_runs")
    with _db(path) as conn:
        conn.execute("UPDATE session_runs SET status = 'crash', segment = 1, session_id = 1")
    with Journal.open(path) as journal:
        assert sessions.latest_statuses(journal, 1, 1, 21) == (Verdict.CRASH,)
        with _db(path) as other:
            other.execute("UPDATE session_runs SET status = 'crashed'")
        with pytest.raises(JournalError) as refused:
            sessions.latest_statuses(journal, 1, 1, 21)
    message = refused.value.message
    assert message.startswith(
        "a row of the journal is damaged (table session_runs, row run_id=1: status is "
        "'crashed', expected one of keep, discard, crash, checks_failed)"
    ), message
    assert "nothing was written" in message and "\n" not in message


# --- a run's frozen evaluator, decoded at its first read ---------------------------------------

# What `status` reads of it (its direction) is whole; the rest is not ('yaml' is no format).
EVALUATOR_DAMAGED_BEYOND_ITS_DIRECTION = json.dumps(
    {"command": "x", "format": "yaml", "direction": "lower"}
)


def damaged_evaluator(journal: Path, run_id: str | None = None) -> None:
    with _db(journal) as conn:
        where = "" if run_id is None else " WHERE run_id = ?"
        conn.execute(
            f"UPDATE runs SET evaluator_json = ?{where}",
            (EVALUATOR_DAMAGED_BEYOND_ITS_DIRECTION, *(() if run_id is None else (run_id,))),
        )


def stopped_run(mission_dir: Path, tag: str) -> tuple[Path, str]:
    from autoresearch.supervisor.prepare import prepare

    with prepare(mission_dir, run_tag=tag) as h:
        root, run_id = h.repo.repo_root, h.run_id
    assert cli("stop", run_id, cwd=root).returncode == 0
    return root, run_id


def test_doctor_names_an_evaluator_damaged_beyond_what_status_reads(demo: Path) -> None:
    """`status` listing runs decodes a run's direction alone, so it lists this run; `doctor`,
    where every refusal sends the user, decodes every run whole (review11b: it had called
    such a journal whole)."""
    damaged_evaluator(journal_of(demo))
    assert cli("--repo", str(demo), "status", cwd=demo).returncode == 0
    code, report = doctor(demo)
    found = next(f for f in report["findings"] if f["check"] == "journal")
    assert code == 1 and found["severity"] == "error", report
    assert "evaluator_json is " in found["message"], found


def test_continue_refuses_a_damaged_evaluator_before_it_reopens_the_run(
    mission_dir: Path,
) -> None:
    """It had reopened the run (status running, its stop cleared), then refused with
    "nothing was written" (review11b)."""
    root, run_id = stopped_run(mission_dir, "A")
    journal = journal_of(root)
    damaged_evaluator(journal)
    with _db(journal) as conn:
        before = conn.execute("SELECT status, stop_reason, completed_at FROM runs").fetchone()
    done = cli("continue", run_id, "--max-iterations", "5", cwd=root)
    one_line_refusal(done, "evaluator_json is ", "nothing was written")
    with _db(journal) as conn:
        assert conn.execute("SELECT status, stop_reason, completed_at FROM runs").fetchone() == (
            before
        )


def test_clean_refuses_a_damaged_run_before_it_cleans_any(mission_dir: Path) -> None:
    """`clean A B`, B damaged: A had been cleaned before B was refused (review11b)."""
    root, first = stopped_run(mission_dir, "A")
    _, second = stopped_run(mission_dir, "B")
    damaged_evaluator(journal_of(root), second)
    refs = ["git", "-C", str(root), "for-each-ref", "--format=%(refname)"]
    before = subprocess.run(refs, capture_output=True, text=True, check=True).stdout
    one_line_refusal(cli("clean", first, second, cwd=root), "evaluator_json is ")
    assert subprocess.run(refs, capture_output=True, text=True, check=True).stdout == before
    assert (root / ".autoresearch/worktrees").joinpath(first).is_dir()


def test_stop_refuses_a_damaged_run_without_keeping_its_driver_lock(mission_dir: Path) -> None:
    """The MCP server's `stop` tool calls this in its own long-lived process: a refusal after
    the driver lock was taken left the run looking driven until the server ended."""
    from autoresearch.paths import RepoPaths
    from autoresearch.supervisor import lifecycle
    from autoresearch.supervisor.prepare import prepare
    from autoresearch.supervisor.run_read import driver_alive

    with prepare(mission_dir, run_tag="A") as h:  # running, no driver: `stop` finalizes it
        root, run_id = h.repo.repo_root, h.run_id
    damaged_evaluator(journal_of(root))
    with pytest.raises(JournalError, match="evaluator_json is "):
        lifecycle.stop(root, run_id, "why")
    assert not driver_alive(RepoPaths(root), run_id)


def test_a_frozen_mission_of_another_shape_is_refused_in_one_line(mission_dir: Path) -> None:
    """JSON that parses but is no object (`[1]`) made the frozen mission's decoding fail with
    an AttributeError: an internal error, exit 3, after `continue` had reopened the run."""
    root, run_id = stopped_run(mission_dir, "A")
    edit(journal_of(root), "UPDATE runs SET sandbox_json = '[1]'")
    one_line_refusal(cli("continue", run_id, cwd=root), "sandbox_json is '[1]'")

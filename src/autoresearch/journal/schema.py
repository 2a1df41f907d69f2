"""The journal schema as an ordered list of named migrations. Never edit a shipped one."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from autoresearch.journal import seals


def _run_script(conn: sqlite3.Connection, script: str) -> None:
    """Execute DDL statement by statement: executescript would commit our transaction."""
    lines = [line for line in script.splitlines() if not line.strip().startswith("--")]
    for statement in "\n".join(lines).split(";"):
        if statement.strip():
            conn.execute(statement)


def _0001_supervisor(conn: sqlite3.Connection) -> None:
    _run_script(
        conn,
        """
        CREATE TABLE runs (
            run_id TEXT PRIMARY KEY,
            run_tag TEXT NOT NULL,
            mission_slug TEXT NOT NULL,
            source_mission_dir TEXT NOT NULL,
            mission_dir TEXT NOT NULL,
            mission_file TEXT NOT NULL,
            sandbox_file TEXT NOT NULL,
            repo_root TEXT NOT NULL,
            worktree_path TEXT NOT NULL,
            branch_name TEXT NOT NULL,
            baseline_commit TEXT,
            last_kept_commit TEXT,
            last_kept_score REAL,
            latest_candidate_commit TEXT,
            evaluator_json TEXT NOT NULL,
            keep_policy TEXT NOT NULL,
            sandbox_json TEXT NOT NULL,
            status TEXT NOT NULL,
            stop_reason TEXT,
            phase TEXT NOT NULL,
            iteration INTEGER NOT NULL DEFAULT 0,
            loop_json TEXT,
            stop_requested TEXT,
            views_iteration INTEGER NOT NULL DEFAULT -1,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            completed_at TEXT
        );
        CREATE INDEX runs_status ON runs (status);

        CREATE TABLE iterations (
            run_id TEXT NOT NULL REFERENCES runs (run_id),
            iteration INTEGER NOT NULL,
            kind TEXT NOT NULL,
            state TEXT NOT NULL,
            candidate_status TEXT,
            base_commit TEXT,
            candidate_commit TEXT,
            description TEXT NOT NULL DEFAULT '',
            artifact_notes_json TEXT NOT NULL DEFAULT '[]',
            artifact_sha256 TEXT,
            decision TEXT,
            decision_reason TEXT,
            decision_notes_json TEXT NOT NULL DEFAULT '[]',
            kept_commit TEXT,
            keep_policy TEXT NOT NULL,
            evaluator_json TEXT,
            agent_json TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (run_id, iteration)
        );

        CREATE TABLE evaluations (
            id INTEGER PRIMARY KEY,
            run_id TEXT NOT NULL REFERENCES runs (run_id),
            iteration INTEGER NOT NULL,
            purpose TEXT NOT NULL,
            status TEXT NOT NULL,
            pass INTEGER,
            score REAL,
            exit_code INTEGER,
            timed_out INTEGER NOT NULL,
            duration_ms INTEGER NOT NULL,
            log_file TEXT,
            record_json TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        CREATE INDEX evaluations_iteration ON evaluations (run_id, iteration);

        -- Process groups a driver started and has not yet reaped: a crashed driver's
        -- children are found here and stopped by the next driver.
        CREATE TABLE children (
            pgid INTEGER NOT NULL,
            owner TEXT NOT NULL,
            role TEXT NOT NULL,
            marker TEXT NOT NULL,
            started_at TEXT NOT NULL,
            PRIMARY KEY (owner, pgid)
        );
        """,
    )


def _0002_experiment_sessions(conn: sqlite3.Connection) -> None:
    # experiments.md "Storage". A run with no status and no abandoned time is pending; the
    # active session of a branch is its newest unclosed row.
    _run_script(
        conn,
        """
        CREATE TABLE sessions (
            session_id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            goal TEXT NOT NULL DEFAULT '',
            metric TEXT NOT NULL,
            unit TEXT NOT NULL DEFAULT '',
            direction TEXT NOT NULL,
            command TEXT NOT NULL,
            branch TEXT NOT NULL,
            directory TEXT NOT NULL,
            own_worktree INTEGER NOT NULL DEFAULT 0,
            baseline_commit TEXT NOT NULL,
            kept_commit TEXT NOT NULL,
            segment INTEGER NOT NULL DEFAULT 1,
            max_iterations INTEGER,
            secondary_json TEXT NOT NULL DEFAULT '[]',
            scope_json TEXT NOT NULL DEFAULT '[]',
            off_limits_json TEXT NOT NULL DEFAULT '[]',
            constraints_json TEXT NOT NULL DEFAULT '[]',
            notes TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            closed_at TEXT
        );
        CREATE INDEX sessions_branch ON sessions (branch, closed_at);

        CREATE TABLE session_runs (
            run_id INTEGER PRIMARY KEY,
            session_id INTEGER NOT NULL REFERENCES sessions (session_id),
            number INTEGER NOT NULL,
            segment INTEGER NOT NULL,
            command TEXT NOT NULL,
            base_commit TEXT NOT NULL,
            started_at TEXT NOT NULL,
            completed_at TEXT,
            duration_ms INTEGER,
            exit_code INTEGER,
            timed_out INTEGER NOT NULL DEFAULT 0,
            error TEXT,
            pgid INTEGER,
            parsed_primary REAL,
            parsed_metrics_json TEXT NOT NULL DEFAULT '{}',
            parsed_asi_json TEXT NOT NULL DEFAULT '{}',
            checks_json TEXT,
            log_path TEXT,
            tail TEXT NOT NULL DEFAULT '',
            status TEXT,
            description TEXT,
            metric REAL,
            metrics_json TEXT,
            asi_json TEXT,
            commit_sha TEXT,
            patch_path TEXT,
            confidence REAL,
            modified_paths_json TEXT,
            deviations_json TEXT,
            justification TEXT,
            flagged INTEGER NOT NULL DEFAULT 0,
            flag_reason TEXT,
            logged_at TEXT,
            abandoned_at TEXT,
            UNIQUE (session_id, number)
        );
        CREATE INDEX session_runs_segment ON session_runs (session_id, segment);
        """,
    )


def _0003_run_stop_note(conn: sqlite3.Connection) -> None:
    # The operator's `stop --reason` text, kept apart so that stop_reason stays the exact
    # contract string (`operator stop`).
    conn.execute("ALTER TABLE runs ADD COLUMN stop_note TEXT")


def _0004_unfinished_index(conn: sqlite3.Connection) -> None:
    # Recovery looks for unfinished iterations before every step: a partial index keeps that
    # lookup independent of the run's length.
    conn.execute(
        "CREATE INDEX iterations_unfinished ON iterations (run_id) WHERE state != 'applied'"
    )


def _i15_jobs(conn: sqlite3.Connection) -> None:
    # worker.md: delegation jobs. `seq` orders the queue (first come, first served); the
    # *_json columns hold the evidence the runner recorded; runner_pid and agent_pgid, with
    # `marker` in their environments, let a later process tell a dead job from a running one.
    _run_script(
        conn,
        """
        CREATE TABLE jobs (
            job_id TEXT PRIMARY KEY,
            seq INTEGER NOT NULL UNIQUE,
            state TEXT NOT NULL,
            spec_json TEXT NOT NULL,
            marker TEXT NOT NULL,
            workdir TEXT NOT NULL,
            worktree_path TEXT,
            branch TEXT,
            base_commit TEXT,
            runner_pid INTEGER,
            agent_pgid INTEGER,
            deadline REAL,
            cancel_requested_at TEXT,
            executor_json TEXT,
            checks_json TEXT,
            evidence_json TEXT,
            result_state TEXT NOT NULL DEFAULT 'none',
            result_commit TEXT,
            patch_path TEXT,
            error TEXT,
            created_at TEXT NOT NULL,
            started_at TEXT,
            finished_at TEXT,
            updated_at TEXT NOT NULL
        );
        CREATE INDEX jobs_state ON jobs (state, seq);
        """,
    )


def _i13_readings(conn: sqlite3.Connection) -> None:
    # trust.md: every reading is its own row, tied to the commit it measured and its role in
    # the decision (baseline, candidate, incumbent, confirm), so any policy can be replayed.
    conn.execute("ALTER TABLE evaluations ADD COLUMN role TEXT")
    conn.execute("ALTER TABLE evaluations ADD COLUMN commit_sha TEXT")
    conn.execute("CREATE INDEX evaluations_commit ON evaluations (run_id, commit_sha)")


def _i18_hooks(conn: sqlite3.Connection) -> None:
    # The host hooks' counters (issue 18), one row per session segment, so that a restarted
    # host continues the count: resumed turns, the newest run number logged when the hook last
    # resumed, the completed-but-unlogged run it last asked to log, the limit notice.
    _run_script(
        conn,
        """
        CREATE TABLE session_hooks (
            session_id INTEGER NOT NULL REFERENCES sessions (session_id),
            segment INTEGER NOT NULL,
            resumed_turns INTEGER NOT NULL DEFAULT 0,
            last_logged_run INTEGER NOT NULL DEFAULT 0,
            last_pending_run INTEGER,
            notice TEXT,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (session_id, segment)
        );
        """,
    )


def _i12_run_cleaned(conn: sqlite3.Connection) -> None:
    # `autoresearch clean` removed the run's worktree and branch; journal and logs stay.
    conn.execute("ALTER TABLE runs ADD COLUMN cleaned_at TEXT")


def _i14_lanes(conn: sqlite3.Connection) -> None:
    # `run --lanes K` (issue 14): which lane's session an iteration judged (0: a run without
    # lanes), and what each lane is doing now, written by the one driver for status and MCP.
    conn.execute("ALTER TABLE iterations ADD COLUMN lane INTEGER NOT NULL DEFAULT 0")
    _run_script(
        conn,
        """
        CREATE TABLE run_lanes (
            run_id TEXT NOT NULL REFERENCES runs (run_id),
            lane INTEGER NOT NULL,
            state TEXT NOT NULL,
            session INTEGER NOT NULL DEFAULT 0,
            base_commit TEXT,
            detail TEXT,
            last_iteration INTEGER,
            last_decision TEXT,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (run_id, lane)
        );
        """,
    )


def _i13_session_readings(conn: sqlite3.Connection) -> None:
    # `exp run --repeats N`: every reading of a repeated run (its value is their mean), so
    # that status and log can say whether an improvement is significant.
    conn.execute("ALTER TABLE session_runs ADD COLUMN readings_json TEXT")


def _i34_session_reference(conn: sqlite3.Connection) -> None:
    # `exp run --repeats N` pairs each reading of the candidate with one of the kept commit
    # taken next to it (#34): which commit that was, and its readings in the same order.
    conn.execute("ALTER TABLE session_runs ADD COLUMN reference_commit TEXT")
    conn.execute("ALTER TABLE session_runs ADD COLUMN reference_readings_json TEXT")


def _i11_journal_identity(conn: sqlite3.Connection) -> None:
    # Which journal this is (issue 11): one row, written at first open (journal/integrity.py),
    # matched against the marker file beside the journal so a swapped one is refused.
    _run_script(
        conn,
        """
        CREATE TABLE journal_identity (
            journal_id TEXT PRIMARY KEY,
            repo_root TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        """,
    )


def _i11_session_inflight(conn: sqlite3.Connection) -> None:
    # An agent session of a run that has started and not yet returned (issue 11): a driver
    # killed mid-session leaves the row, and resume treats the session as interrupted, whatever
    # its artifact says.
    _run_script(
        conn,
        """
        CREATE TABLE session_inflight (
            run_id TEXT PRIMARY KEY REFERENCES runs (run_id),
            iteration INTEGER NOT NULL,
            base_commit TEXT NOT NULL,
            started_at TEXT NOT NULL
        );
        """,
    )


def _i11_lane_inflight(conn: sqlite3.Connection) -> None:
    # The same marker per lane of `run --lanes K` (issue 11): K sessions may be in flight when
    # the whole tree is killed, and each is an interrupted session on resume.
    _run_script(
        conn,
        """
        CREATE TABLE lane_inflight (
            run_id TEXT NOT NULL REFERENCES runs (run_id),
            lane INTEGER NOT NULL,
            session INTEGER NOT NULL,
            base_commit TEXT NOT NULL,
            started_at TEXT NOT NULL,
            PRIMARY KEY (run_id, lane)
        );
        """,
    )


def _seal_decisions(conn: sqlite3.Connection) -> None:
    """The seals of decided iterations and of each run's kept state (journal/seals.py), made
    for what the journal holds now: the connection has the seal function."""
    _run_script(
        conn,
        """
        CREATE TABLE seal_key (key_id TEXT NOT NULL);
        CREATE TABLE run_seals (run_id TEXT PRIMARY KEY, seal TEXT NOT NULL);
        CREATE TABLE decision_seals (
            run_id TEXT NOT NULL,
            iteration INTEGER NOT NULL,
            seal TEXT NOT NULL,
            PRIMARY KEY (run_id, iteration)
        );
        """,
    )
    seals.seal_all(conn)


def _i33_candidate_tree(conn: sqlite3.Connection) -> None:
    # Novelty (issue 33): the tree id of each iteration's candidate, so that a candidate whose
    # tree an earlier iteration's evaluator measured is found by one indexed query and never
    # measured again. Rows recorded before this column (and a baseline, recorded by prepare)
    # are filled in by the next step; the partial index finds them without a scan.
    conn.execute("ALTER TABLE iterations ADD COLUMN candidate_tree TEXT")
    conn.execute("CREATE INDEX iterations_tree ON iterations (run_id, candidate_tree)")
    conn.execute(
        "CREATE INDEX iterations_tree_unknown ON iterations (run_id) "
        "WHERE candidate_tree IS NULL AND evaluator_json IS NOT NULL"
    )


def _i33_search_archive(conn: sqlite3.Connection) -> None:
    # The frontier strategy (issue 33): its archive of elites (an evicted one keeps its row,
    # so the lineage stays readable), how far the archive has read the iterations, and the
    # parent each session starts from (recorded before the session: a resume reuses it).
    _run_script(
        conn,
        """
        CREATE TABLE search_elites (
            run_id TEXT NOT NULL,
            commit_sha TEXT NOT NULL,
            score REAL,
            parent TEXT,
            lineage TEXT NOT NULL,
            entered INTEGER NOT NULL,
            evicted INTEGER,
            PRIMARY KEY (run_id, commit_sha)
        );
        CREATE TABLE search_progress (
            run_id TEXT PRIMARY KEY,
            through INTEGER NOT NULL
        );
        CREATE TABLE search_parents (
            run_id TEXT NOT NULL,
            iteration INTEGER NOT NULL,
            lane INTEGER NOT NULL DEFAULT 0,
            parent TEXT NOT NULL,
            PRIMARY KEY (run_id, iteration)
        );
        CREATE INDEX search_parents_parent ON search_parents (run_id, parent);
        """,
    )


MIGRATIONS: list[tuple[str, Callable[[sqlite3.Connection], None]]] = [
    ("0001_supervisor", _0001_supervisor),
    ("0002_experiment_sessions", _0002_experiment_sessions),
    ("0003_run_stop_note", _0003_run_stop_note),
    ("0004_unfinished_index", _0004_unfinished_index),
    ("i15_jobs", _i15_jobs),
    ("i13_readings", _i13_readings),
    ("i18_hooks", _i18_hooks),
    ("i12_run_cleaned", _i12_run_cleaned),
    ("i14_lanes", _i14_lanes),
    ("i13_session_readings", _i13_session_readings),
    ("i11_journal_identity", _i11_journal_identity),
    ("i11_session_inflight", _i11_session_inflight),
    ("i11_lane_inflight", _i11_lane_inflight),
    ("seal_decisions", _seal_decisions),
    ("i33_candidate_tree", _i33_candidate_tree),
    ("i33_search_archive", _i33_search_archive),
    ("i34_session_reference", _i34_session_reference),
]

"""In-agent experiment sessions (experiments.md): the core API both front doors call.

The CLI (`autoresearch exp …`) and the MCP server are thin wrappers over these functions;
parameters and results are frozen dataclasses whose `to_dict()` is JSON-ready.
"""

from __future__ import annotations

from autoresearch.experiments.logger import LogReport, NotesReport, annotate_runs, log_experiment
from autoresearch.experiments.notes import NotesResult, update_notes
from autoresearch.experiments.params import InitParams, LogParams, RunNote, RunParams
from autoresearch.experiments.report import resume_message
from autoresearch.experiments.runner import RunReport, run_experiment
from autoresearch.experiments.session import (
    CloseResult,
    InitResult,
    ReopenResult,
    close_session,
    init_session,
    reopen_session,
)
from autoresearch.experiments.status import (
    SessionList,
    SessionSummary,
    StatusReport,
    list_sessions,
    session_status,
)

__all__ = [
    "CloseResult",
    "InitParams",
    "InitResult",
    "LogParams",
    "LogReport",
    "NotesReport",
    "NotesResult",
    "ReopenResult",
    "RunNote",
    "RunParams",
    "RunReport",
    "SessionList",
    "SessionSummary",
    "StatusReport",
    "annotate_runs",
    "close_session",
    "init_session",
    "list_sessions",
    "log_experiment",
    "reopen_session",
    "resume_message",
    "run_experiment",
    "session_status",
    "update_notes",
]

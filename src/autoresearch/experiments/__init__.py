"""In-agent experiment sessions (experiments.md): the core API both front doors call.

The CLI (`autoresearch exp …`) and the MCP server are thin wrappers over these functions;
parameters and results are frozen dataclasses whose `to_dict()` is JSON-ready.
"""

from __future__ import annotations

from autoresearch.experiments.logger import LogReport, log_experiment
from autoresearch.experiments.notes import NotesResult, update_notes
from autoresearch.experiments.params import InitParams, LogParams, RunNote, RunParams
from autoresearch.experiments.report import resume_message
from autoresearch.experiments.runner import RunReport, run_experiment
from autoresearch.experiments.session import CloseResult, InitResult, close_session, init_session
from autoresearch.experiments.status import StatusReport, session_status

__all__ = [
    "CloseResult",
    "InitParams",
    "InitResult",
    "LogParams",
    "LogReport",
    "NotesResult",
    "RunNote",
    "RunParams",
    "RunReport",
    "StatusReport",
    "close_session",
    "init_session",
    "log_experiment",
    "resume_message",
    "run_experiment",
    "session_status",
    "update_notes",
]

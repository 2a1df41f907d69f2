"""In-agent experiment sessions (experiments.md): the core API both front doors call.

The CLI (`autoresearch exp …`) and the MCP server are thin wrappers over these functions;
parameters and results are frozen dataclasses whose `to_dict()` is JSON-ready.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from autoresearch.experiments.logger import LogReport as LogReport
    from autoresearch.experiments.logger import NotesReport as NotesReport
    from autoresearch.experiments.logger import annotate_runs as annotate_runs
    from autoresearch.experiments.logger import log_experiment as log_experiment
    from autoresearch.experiments.notes import NotesResult as NotesResult
    from autoresearch.experiments.notes import update_notes as update_notes
    from autoresearch.experiments.params import InitParams as InitParams
    from autoresearch.experiments.params import LogParams as LogParams
    from autoresearch.experiments.params import RunNote as RunNote
    from autoresearch.experiments.params import RunParams as RunParams
    from autoresearch.experiments.report import resume_message as resume_message
    from autoresearch.experiments.runner import RunReport as RunReport
    from autoresearch.experiments.runner import run_experiment as run_experiment
    from autoresearch.experiments.session import CloseResult as CloseResult
    from autoresearch.experiments.session import InitResult as InitResult
    from autoresearch.experiments.session import ReopenResult as ReopenResult
    from autoresearch.experiments.session import close_session as close_session
    from autoresearch.experiments.session import init_session as init_session
    from autoresearch.experiments.session import reopen_session as reopen_session
    from autoresearch.experiments.status import SessionList as SessionList
    from autoresearch.experiments.status import SessionSummary as SessionSummary
    from autoresearch.experiments.status import StatusReport as StatusReport
    from autoresearch.experiments.status import list_sessions as list_sessions
    from autoresearch.experiments.status import session_status as session_status

# Each name's module, imported on first use (PEP 562): a hook that needs one session view
# does not import the runner, the evaluator and the logger with it (issue 36).
_WHERE: dict[str, str] = {
    "LogReport": "autoresearch.experiments.logger",
    "NotesReport": "autoresearch.experiments.logger",
    "annotate_runs": "autoresearch.experiments.logger",
    "log_experiment": "autoresearch.experiments.logger",
    "NotesResult": "autoresearch.experiments.notes",
    "update_notes": "autoresearch.experiments.notes",
    "InitParams": "autoresearch.experiments.params",
    "LogParams": "autoresearch.experiments.params",
    "RunNote": "autoresearch.experiments.params",
    "RunParams": "autoresearch.experiments.params",
    "resume_message": "autoresearch.experiments.report",
    "RunReport": "autoresearch.experiments.runner",
    "run_experiment": "autoresearch.experiments.runner",
    "CloseResult": "autoresearch.experiments.session",
    "InitResult": "autoresearch.experiments.session",
    "ReopenResult": "autoresearch.experiments.session",
    "close_session": "autoresearch.experiments.session",
    "init_session": "autoresearch.experiments.session",
    "reopen_session": "autoresearch.experiments.session",
    "SessionList": "autoresearch.experiments.status",
    "SessionSummary": "autoresearch.experiments.status",
    "StatusReport": "autoresearch.experiments.status",
    "list_sessions": "autoresearch.experiments.status",
    "session_status": "autoresearch.experiments.status",
}


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


def __getattr__(name: str) -> object:
    try:
        module = _WHERE[name]
    except KeyError:
        raise AttributeError(f"autoresearch.experiments has no {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value

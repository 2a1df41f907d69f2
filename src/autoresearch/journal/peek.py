"""A glance at the journal that decides nothing: is a session open on this branch?

A Stop hook runs at the end of every turn of every agent in a repository, and most of them
have no experiment session: answering those needs only this question, not the journal's open
(its integrity scan and the seal check of every decided iteration) nor its record types
(issue 36). What the glance cannot vouch for (a damaged, tampered or older journal) never
turns into "yes": it answers "no" only when the sessions table plainly says so, and "unsure"
otherwise, so the caller opens the journal in full and refuses what it must.

Without a verified open, "no session" may come from a journal rewritten behind the tool's
back; that answer only lets the agent stop, the same as the refusal of such a journal does.
"""

from __future__ import annotations

import sqlite3
from enum import Enum
from pathlib import Path

# Well under a hook's budget: a journal locked this long is one the full open waits on.
PEEK_TIMEOUT_SECONDS = 1.0


class Glance(Enum):
    """What the sessions table says of a branch, as far as a glance can tell."""

    NONE_OPEN = "none open"
    UNSURE = "unsure"  # an open session, or a journal the glance cannot read: open it in full


def open_session_on(journal: Path, branch: str | None) -> Glance:
    """Whether the journal at `journal` holds an open session bound to `branch` (None: a
    detached HEAD, which no session is bound to). Writes nothing, never creates the file."""
    if branch is None or not journal.is_file():
        # nothing to find here; a journal that is gone but named by its marker is no
        # session either (its refusal, like this answer, lets the agent stop)
        return Glance.NONE_OPEN
    try:
        uri = journal.absolute().as_uri() + "?mode=ro"
        conn = sqlite3.connect(uri, uri=True, timeout=PEEK_TIMEOUT_SECONDS)
        try:
            row = conn.execute(
                "SELECT 1 FROM sessions WHERE branch = ? AND closed_at IS NULL LIMIT 1",
                (branch,),
            ).fetchone()
        finally:
            conn.close()
    except sqlite3.Error:  # no sessions table yet, a damaged file, a busy journal: unsure
        return Glance.UNSURE
    return Glance.UNSURE if row is not None else Glance.NONE_OPEN

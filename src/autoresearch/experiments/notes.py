"""Session notes: a living playbook, plus ideas as `- <idea>` lines under `## Ideas`.

`add_idea` and `ideas` are pure; `update_notes` reads and writes the notes in one
transaction, so two agents appending at once both keep their idea.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from autoresearch.errors import ContractError
from autoresearch.experiments.verbs import Door
from autoresearch.journal import sessions
from autoresearch.jsonshape import json_shape

IDEAS_HEADING = "## Ideas"
_HEADING = re.compile(r"^#{1,6}\s")
_IDEAS = re.compile(r"^##\s+Ideas\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class NotesResult:
    session_id: int
    notes: str
    ideas: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)


def add_idea(notes: str, idea: str) -> str:
    """Add `- idea` at the end of the `## Ideas` section, creating the heading when missing."""
    item = f"- {' '.join(idea.split())}"
    lines = notes.rstrip("\n").split("\n") if notes.strip() else []
    start = next((i for i, line in enumerate(lines) if _IDEAS.match(line)), None)
    if start is None:
        prefix = [*lines, ""] if lines else []
        return "\n".join([*prefix, IDEAS_HEADING, item]) + "\n"
    end = next((i for i in range(start + 1, len(lines)) if _HEADING.match(lines[i])), len(lines))
    insert_at = end
    while insert_at > start + 1 and not lines[insert_at - 1].strip():
        insert_at -= 1
    lines[insert_at:insert_at] = [item]
    return "\n".join(lines) + "\n"


def ideas(notes: str) -> tuple[str, ...]:
    """The `- ` items of the `## Ideas` section."""
    found: list[str] = []
    inside = False
    for line in notes.split("\n"):
        if _HEADING.match(line):
            inside = bool(_IDEAS.match(line))
            continue
        if inside and line.lstrip().startswith(("- ", "* ")):
            found.append(line.lstrip()[2:].strip())
    return tuple(found)


def replace_body(current: str, body: str) -> str:
    """The new body, with every idea of the current notes that it does not list carried over:
    replacing the playbook never loses the ideas."""
    text = body
    kept = set(ideas(body))
    for idea in ideas(current):
        if idea not in kept:
            text = add_idea(text, idea)
            kept.add(idea)
    return text


def update_notes(
    start: Path,
    body: str | None = None,
    append_idea: str | None = None,
    door: Door = Door.CLI,
) -> NotesResult:
    """Replace the notes with `body` (ideas survive) and/or append an idea."""
    from autoresearch.experiments.context import open_context

    if body is None and (append_idea is None or not append_idea.strip()):
        raise ContractError("notes: give a body to replace the notes, or an idea to append")
    with open_context(start, door=door) as ctx:
        session = ctx.bound_session()
        with ctx.journal.tx() as conn:
            current = sessions.get_session(conn, session.session_id)
            before = current.notes if current else ""
            text = replace_body(before, body) if body is not None else before
            if append_idea is not None and append_idea.strip():
                text = add_idea(text, append_idea)
            sessions.update_session(conn, session.session_id, notes=text)
    return NotesResult(session.session_id, text, ideas(text))

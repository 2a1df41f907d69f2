"""The documentation users read, for the tests that hold it to the code: README.md and the
pages of docs/ – not docs/incoming/ (notes waiting to be folded into the pages) and not the
command reference, which is generated from `--help` itself (tools/command_reference.py)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
GENERATED = DOCS / "reference" / "commands.md"


def pages() -> list[Path]:
    """README.md, then every written page of docs/."""
    written = [
        path
        for path in sorted(DOCS.rglob("*.md"))
        if path != GENERATED and path.relative_to(DOCS).parts[0] != "incoming"
    ]
    return [README, *written]


def page(name: str) -> str:
    """The text of docs/`name`."""
    return (DOCS / name).read_text()


def section(text: str, heading: str) -> str:
    """From `heading` (a whole line, e.g. "## Phase 1: the harness") to the next heading of its
    level or higher (a `#` line inside a code block is no heading)."""
    level = len(heading.split(" ", 1)[0])
    lines = text.splitlines(keepends=True)
    start = lines.index(f"{heading}\n")
    taken, fenced = [lines[start]], False
    for line in lines[start + 1 :]:
        fenced ^= line.startswith("```")
        marks = len(line) - len(line.lstrip("#"))
        if not fenced and 0 < marks <= level and line[marks : marks + 1] == " ":
            break
        taken.append(line)
    return "".join(taken)

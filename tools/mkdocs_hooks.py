"""MkDocs hooks (mkdocs.yml `hooks:`): the pages render on the site as they do on GitHub.

GitHub's tables need a `|` inside a table's code span escaped (`\\|`) and show it bare;
Python-Markdown's tables already keep a code span's `|` in its cell and would show the
backslash. So on a table row, inside code spans, `\\|` becomes `|` before the page is rendered.
"""

from __future__ import annotations

import re

_CODE_SPAN = re.compile(r"`[^`\n]+`")


def _bare_pipes(row: str) -> str:
    return _CODE_SPAN.sub(lambda span: span.group(0).replace("\\|", "|"), row)


def on_page_markdown(markdown: str, **_: object) -> str:
    """The page's Markdown with the escaped pipes of its tables' code spans made bare."""
    lines, fenced = [], False
    for line in markdown.split("\n"):
        fenced ^= line.startswith("```")
        lines.append(_bare_pipes(line) if not fenced and line.startswith("|") else line)
    return "\n".join(lines)

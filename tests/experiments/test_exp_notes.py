"""Notes: `- idea` lines under `## Ideas` (pure)."""

from __future__ import annotations

import pytest

from autoresearch.experiments.notes import add_idea, ideas


@pytest.mark.parametrize(
    ("notes", "idea", "expected"),
    [
        ("", "try a cache", "## Ideas\n- try a cache\n"),
        (
            "# Objective\nfaster\n",
            "try a cache",
            "# Objective\nfaster\n\n## Ideas\n- try a cache\n",
        ),
        ("## Ideas\n- one\n", "two", "## Ideas\n- one\n- two\n"),
        (
            "## Ideas\n- one\n\n## Dead ends\n- x\n",
            "two",
            "## Ideas\n- one\n- two\n\n## Dead ends\n- x\n",
        ),
        ("## Ideas\n\n# Next\n", "first", "## Ideas\n- first\n\n# Next\n"),
        ("## ideas\n- a\n", "  spaced\n  idea ", "## ideas\n- a\n- spaced idea\n"),
        ("### Ideas later\n- not here\n", "x", "### Ideas later\n- not here\n\n## Ideas\n- x\n"),
    ],
)
def test_add_idea(notes: str, idea: str, expected: str) -> None:
    assert add_idea(notes, idea) == expected


def test_ideas_are_the_items_of_the_ideas_section_only() -> None:
    notes = "# Goal\n- not an idea\n## Ideas\n- a\n* b\ntext\n## Dead ends\n- c\n"
    assert ideas(notes) == ("a", "b")
    assert ideas("") == ()

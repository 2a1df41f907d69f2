"""Notes: `- idea` lines under `## Ideas` (pure)."""

from __future__ import annotations

import pytest

from autoresearch.experiments.notes import add_idea, ideas, replace_body


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


@pytest.mark.parametrize(
    ("current", "body", "expected"),
    [
        (
            "## Ideas\n- a\n- b\n",
            "# Playbook\nfaster\n",
            "# Playbook\nfaster\n\n## Ideas\n- a\n- b\n",
        ),
        ("## Ideas\n- a\n", "## Ideas\n- a\n- c\n", "## Ideas\n- a\n- c\n"),
        ("old\n", "new\n", "new\n"),
    ],
)
def test_a_new_body_keeps_the_ideas(current: str, body: str, expected: str) -> None:
    assert replace_body(current, body) == expected


def test_exp_notes_body_keeps_the_ideas_end_to_end(tmp_path: object) -> None:
    from pathlib import Path

    from exp_helpers import exp_repo, init

    from autoresearch.experiments.notes import update_notes

    repo = exp_repo(Path(str(tmp_path)) / "r")
    init(repo.root)
    update_notes(repo.root, append_idea="try a cache")
    result = update_notes(repo.root, body="# Playbook\nwhat worked: nothing yet\n")
    assert result.ideas == ("try a cache",)
    assert result.notes.startswith("# Playbook\n")

"""The note that says which tune values a candidate tried (contracts/tune.tried_note) and its
decoding for a run's history (tried_values, what `PastIteration.tried` holds): the offline
agent reads the field and never parses its notes. The note's text is the one every journal
already holds, so an existing run's history still reads."""

from __future__ import annotations

import pytest

from autoresearch.contracts.tune import tried_note, tried_values

# as the offline agent wrote it before tried_note existed (agents/offline.py, 37280b3)
OLD = 'offline-agent: {"LR": 0.0123456789, "MOMENTUM": 0.9, "N": 64.0}'


def test_the_note_is_the_text_journals_hold_and_reads_back_exactly() -> None:
    values = {"N": 64.0, "MOMENTUM": 0.9, "LR": 0.0123456789}
    assert tried_note(values) == OLD
    assert tried_values((OLD,)) == values
    odd = {"X": 1e-300, "Y": 0.1 + 0.2, "Z": -123456.789}
    assert tried_values(("a note", tried_note(odd))) == odd  # floats round-trip bit for bit


@pytest.mark.parametrize(
    ("notes", "tried"),
    [
        ((), None),
        (("a note of another agent",), None),
        (("offline-agent: not json",), None),
        (("offline-agent: [1, 2]",), None),  # not an object: ignored, never a crash
        (('offline-agent: {"A": "x"}',), None),  # not numbers
        (('offline-agent: {"A": 1}', 'offline-agent: {"A": 2}'), {"A": 1.0}),  # the first
        (("offline-agent: not json", 'offline-agent: {"A": 2}'), None),  # the first decides
    ],
)
def test_what_a_candidates_notes_say_it_tried(
    notes: tuple[str, ...], tried: dict[str, float] | None
) -> None:
    assert tried_values(notes) == tried

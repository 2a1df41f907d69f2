"""One slug rule for mission slugs and session branches; only the session door folds accents."""

from __future__ import annotations

import pytest

from autoresearch.contracts.sandbox import mission_slug
from autoresearch.experiments.params import slugify


@pytest.mark.parametrize(
    ("text", "mission", "session"),
    [
        ("missions/demo", "missions-demo", "missions-demo"),
        ("Missions/My Demo Mission", "missions-my-demo-mission", "missions-my-demo-mission"),
        ("Café", "caf", "cafe"),  # the mission contract spells the rule out: no folding
        ("--a__b--", "a-b", "a-b"),
        ("x" * 47 + "-yz", "x" * 47, "x" * 47),
        ("???", "mission", "session"),
    ],
)
def test_one_rule_two_fallbacks(text: str, mission: str, session: str) -> None:
    assert mission_slug(text, "root") == mission
    assert slugify(text) == session

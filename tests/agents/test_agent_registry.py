"""The refusal of an unknown agent lists the installed back-ends, and says when autoresearch's
own are missing (its package metadata is older than the code)."""

from __future__ import annotations

import pytest

from autoresearch.agents import HINT_NONE_OWN, OWN_DISTRIBUTION, unknown_agent
from autoresearch.plugins import AGENTS, Plugin


def plugin(name: str, distribution: str = OWN_DISTRIBUTION) -> Plugin:
    return Plugin(AGENTS, name, f"somewhere.{name}:BACKEND", distribution)


@pytest.mark.parametrize(
    ("known", "message"),
    [
        ((plugin("codex"), plugin("offline")),
         "unknown agent 'gpt': use codex, offline or cmd:<shell command>"),
        ((plugin("codex"), plugin("mine", "my-agent")),
         "unknown agent 'gpt': use codex, mine or cmd:<shell command>"),
        ((plugin("mine", "my-agent"),),
         "unknown agent 'gpt': use mine or cmd:<shell command>" + HINT_NONE_OWN),
        ((), "unknown agent 'gpt': use cmd:<shell command>" + HINT_NONE_OWN),
    ],
)  # fmt: skip
def test_an_unknown_agent_is_refused_with_the_installed_ones(
    known: tuple[Plugin, ...], message: str
) -> None:
    assert str(unknown_agent("gpt", {p.name: p for p in known})) == message

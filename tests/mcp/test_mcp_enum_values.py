"""The MCP tools' closed parameters offer exactly the values the core accepts. The SDK publishes
a `Literal` inline in the tool's input schema (an enum type would become a `$ref`, a change
every host sees), so the values are written there once more: this table holds them to the
core's enums and names, and the CLI's `job tail --log` to the same names."""

from __future__ import annotations

import typing
from collections.abc import Callable
from enum import StrEnum
from typing import Any

import click
import pytest

from autoresearch.cli.job_cmds import job
from autoresearch.mcp.job_tools import JobTools, VerificationPolicy
from autoresearch.mcp.session_tools import Tools as ExperimentTools
from autoresearch.states import Direction, Isolation, TaskKind, Verdict
from autoresearch.worker.jobs import LOG_NAMES


def _literal(owner: Callable[..., Any] | type, parameter: str) -> tuple[str, ...]:
    hint = typing.get_type_hints(owner, include_extras=True)[parameter]
    while typing.get_origin(hint) is not typing.Literal:
        hint = next(a for a in typing.get_args(hint) if a is not type(None))
    return typing.get_args(hint)


@pytest.mark.parametrize(
    ("owner", "parameter", "values"),
    [
        (JobTools.job_start, "isolation", tuple(Isolation)),
        (VerificationPolicy, "task_kind", tuple(TaskKind)),
        (JobTools.job_tail, "log", LOG_NAMES),
        (ExperimentTools.init_experiment, "direction", tuple(Direction)),
        (ExperimentTools.log_experiment, "status", tuple(Verdict)),
    ],
)
def test_a_tool_offers_the_values_the_core_accepts(
    owner: Callable[..., Any] | type, parameter: str, values: tuple[str | StrEnum, ...]
) -> None:
    assert _literal(owner, parameter) == tuple(str(v) for v in values)


def test_job_tail_offers_the_job_logs() -> None:
    tail = job.commands["tail"]
    log = next(p for p in tail.params if p.name == "log")
    assert isinstance(log.type, click.Choice)
    assert tuple(log.type.choices) == LOG_NAMES

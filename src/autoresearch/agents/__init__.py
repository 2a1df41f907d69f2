"""Agent back-ends behind one interface (`agents.base.Agent`), chosen by an `--agent` spec: the
name of an installed back-end or `cmd:<shell command>`.

A back-end is an entry point of the group `autoresearch.agents` naming a `base.Backend`; the
built-ins register the same way in pyproject.toml, so a new one is its module and one line
there. Naming the back-ends reads package metadata only, and `importlib.metadata` itself is
imported only then: starting the CLI reads nothing, and a back-end's module is imported when a
run uses it (one that fails to import is a one-line ContractError naming it).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from autoresearch.agents.base import Agent, Backend
from autoresearch.agents.base import AgentConfig as AgentConfig
from autoresearch.errors import ContractError

if TYPE_CHECKING:
    from autoresearch.plugins import Plugin

COMMAND_PREFIX = "cmd:"
COMMAND_FORM = "cmd:<shell command>"
MSG_UNKNOWN = "unknown agent {spec!r}: use {choices}"
# the distribution whose back-ends are the built-ins (pyproject.toml's [project] name), and its
# name before the rename, which an environment installed before it still registers them under
OWN_DISTRIBUTION = "autoresearch-loop"
OWN_DISTRIBUTIONS = (OWN_DISTRIBUTION, "autoresearch")
HINT_NONE_OWN = (
    " (autoresearch's own back-ends are not registered: its package metadata is out of date; "
    "reinstall it, e.g. pip install -e .)"
)


def installed() -> dict[str, Plugin]:
    """The installed back-ends by name, not imported, in name order (packaging keeps no
    order of its own: one stable list for help and messages, built-ins and plugins alike)."""
    from autoresearch import plugins

    return dict(sorted(plugins.discover(plugins.AGENTS).items()))


def spec_choices(separator: str = ", ", last: str = " or ") -> str:
    """The specs a user may give: `aider, claude, codex, offline or cmd:<shell command>`."""
    return choices_text(list(installed()), separator, last)


def choices_text(names: Sequence[str], separator: str = ", ", last: str = " or ") -> str:
    """`names` and the command form, as a user may write them."""
    return f"{separator.join(names)}{last}{COMMAND_FORM}" if names else COMMAND_FORM


def is_command(spec: str) -> bool:
    """Whether `spec` is the `cmd:<shell command>` form (a command after the prefix)."""
    return spec.startswith(COMMAND_PREFIX) and bool(spec.removeprefix(COMMAND_PREFIX).strip())


def validate_spec(spec: str) -> str:
    """The spec, stripped, when it names an installed back-end or a command (nothing is
    imported); else a ContractError listing the installed ones."""
    spec = spec.strip()
    if is_command(spec) or spec in installed():
        return spec
    raise unknown_agent(spec, installed())


def unknown_agent(spec: str, known: Mapping[str, Plugin]) -> ContractError:
    """The refusal of a spec that is none of `known` (the installed back-ends): it lists them,
    and says so when autoresearch's own are missing (metadata older than the code)."""
    own = any(plugin.distribution in OWN_DISTRIBUTIONS for plugin in known.values())
    message = MSG_UNKNOWN.format(spec=spec, choices=choices_text(list(known)))
    return ContractError(message + ("" if own else HINT_NONE_OWN))


def backend(name: str) -> Backend:
    """The installed back-end `name`, imported now; one that fails to import, or names no
    Backend, is a one-line ContractError naming it."""
    from autoresearch import plugins

    known = installed()
    plugin = known.get(name)
    if plugin is None:
        raise unknown_agent(name, known)
    loaded = plugins.load(plugin)
    if not isinstance(loaded, Backend):
        raise ContractError(
            f"plugin {plugin.name!r} ({plugin.origin}) is no agent back-end (an "
            f"autoresearch.agents.base.Backend): it names a value of type {type(loaded).__name__}"
        )
    return loaded


def require_installed(spec: str) -> None:
    """Refuse, before anything is prepared, an agent that cannot start: a back-end that fails
    to import, or whose program is not on PATH (a session that cannot start would only record
    failures)."""
    if is_command(spec):
        return
    program = backend(spec).executable
    if program is None:
        return
    path = os.environ.get("PATH", "")
    if shutil.which(program, path=path) is None:
        raise ContractError(
            f"agent {spec} is not installed: no {program!r} executable on PATH ({path})"
        )


def make_agent(config: AgentConfig) -> Agent:
    """Build the back-end for a config (its spec checked again: a journal may be older)."""
    spec = validate_spec(config.spec)
    if is_command(spec):
        from autoresearch.agents.command import command_agent

        command = spec.removeprefix(COMMAND_PREFIX).strip()
        agent: Agent = command_agent(command, config.args, config.model)
    else:
        agent = backend(spec).make(replace(config, spec=spec))
    return _as_member(agent, config.member)


def _as_member(agent: Agent, member: str | None) -> Agent:
    """The agent with its sessions recording `member` as their agent (a portfolio's member
    name; the back-ends that run a program are the only ones a portfolio mixes models of)."""
    from autoresearch.agents.external import ExternalAgent

    if member is None or not isinstance(agent, ExternalAgent):
        return agent
    return replace(agent, name=member)

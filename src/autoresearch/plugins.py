"""Extension by entry point: agent back-ends, keep policies and trackers are found through
`importlib.metadata` entry points, the built-in ones registered the same way in pyproject.toml.

A plugin is one entry point in a group; its name is what a user writes (`--agent NAME`, a
sandbox.md `keep_policy: NAME`). Discovery reads metadata only (cheap, nothing imported); a
plugin is imported when it is used, and one that fails to import is named in one line – its
name, where it points and the distribution that installed it – never a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import metadata

from autoresearch.errors import ContractError

AGENTS = "autoresearch.agents"
POLICIES = "autoresearch.policies"
TRACKERS = "autoresearch.trackers"


@dataclass(frozen=True)
class Plugin:
    """One entry point of a group, not yet imported."""

    group: str
    name: str
    target: str  # module:attribute, as the entry point names it
    distribution: str | None

    @property
    def origin(self) -> str:
        """Where the plugin comes from, for messages."""
        where = f" from {self.distribution}" if self.distribution else ""
        return f"{self.target}{where}"


def discover(group: str) -> dict[str, Plugin]:
    """Every plugin of `group` by name; when two distributions register one name, the first
    found wins (importlib's order) – a later one cannot silently replace a built-in."""
    found: dict[str, Plugin] = {}
    for point in metadata.entry_points(group=group):
        dist = point.dist.name if point.dist is not None else None
        found.setdefault(point.name, Plugin(group, point.name, point.value, dist))
    return found


def load(plugin: Plugin) -> object:
    """Import a plugin's object; a plugin that cannot be imported is a one-line ContractError."""
    points = metadata.entry_points(group=plugin.group, name=plugin.name)
    point = next((p for p in points if p.value == plugin.target), None)
    if point is None:
        raise ContractError(f"plugin {plugin.name!r} ({plugin.origin}) is no longer installed")
    try:
        return point.load()
    except Exception as exc:  # any import-time failure of foreign code is named, not raised
        detail = " ".join(f"{type(exc).__name__}: {exc}".split())
        raise ContractError(
            f"plugin {plugin.name!r} ({plugin.origin}) failed to load: {detail}"
        ) from exc

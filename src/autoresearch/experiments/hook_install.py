"""`exp hooks install --claude|--codex` / `uninstall`: our entries in the host's hook file.

Claude Code: `.claude/settings.local.json` – the local project settings, not the shared
`settings.json`: the entries name this machine's interpreter. Codex: `.codex/hooks.json` of the
project (codex 0.171.0 reads it in a trusted project, once its hooks are trusted). Both files
are kept out of git (info/exclude), so no `keep` commits them and no `discard` (`reset --hard`,
`clean -fd`) removes or reverts them in the middle of a session; a Codex hooks file that git
already tracks is refused, since our entries would then be committed or reset with the work.

Both hosts read the same shape (`hooks.<Event>` = matcher groups of command handlers) and speak
the same Stop / SessionStart protocol, so one merge serves both. Install merges one matcher
group per event (Stop; SessionStart with matcher `compact`) next to
whatever hooks the user has; run again, it replaces its own groups (a new interpreter path,
say) instead of adding copies. Uninstall removes exactly the groups whose every handler is
ours (recognised by the command), and then only the containers that this removal left empty.
A file that is not a JSON object is refused, never rewritten.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from autoresearch import git
from autoresearch.errors import ContractError
from autoresearch.experiments.hooks import HOOK_TIMEOUT_SECONDS, SOURCE_COMPACT, HookEvent
from autoresearch.fsutil import atomic_write_text, dump_json
from autoresearch.jsonshape import json_shape
from autoresearch.repo_state import write_excludes

SETTINGS = Path(".claude") / "settings.local.json"
CODEX_HOOKS = Path(".codex") / "hooks.json"
Events = tuple[tuple[str, HookEvent, str | None], ...]
# Claude Code's event names and our matcher for each (None: the event takes no matcher)
CLAUDE_EVENTS: Events = (
    ("Stop", HookEvent.STOP, None),
    ("SessionStart", HookEvent.SESSION_START, SOURCE_COMPACT),
)
# Codex 0.171.0 has the same two events, matchers and answers (SessionStart fires with
# source `compact` after its auto-compaction).
CODEX_EVENTS: Events = CLAUDE_EVENTS
ALL_EVENTS: Events = CLAUDE_EVENTS


class Host(StrEnum):
    CLAUDE = "claude"
    CODEX = "codex"


HOST_FILES = {Host.CLAUDE: SETTINGS, Host.CODEX: CODEX_HOOKS}
HOST_EVENTS = {Host.CLAUDE: CLAUDE_EVENTS, Host.CODEX: CODEX_EVENTS}
CODEX_TRUST_NOTE = (
    "codex runs project hooks only in a trusted project (`codex exec --trust` once, or the "
    "TUI's prompt) and once the hooks are trusted (`/hooks` in the TUI; unattended: "
    "`codex exec --dangerously-bypass-hook-trust`)"
)
_OURS = re.compile(r"(^|\s)-m autoresearch exp hook (stop|session-start)$")


@dataclass(frozen=True)
class HooksResult:
    path: str
    changed: bool
    events: tuple[str, ...]
    message: str

    def to_dict(self) -> dict[str, object]:
        return json_shape(self)


def hook_command(event: HookEvent, python: str | None = None) -> str:
    """The command Claude Code runs: this interpreter, so no PATH lookup can miss it."""
    return f"{shlex.quote(python or sys.executable)} -m autoresearch exp hook {event}"


def is_ours(handler: Any) -> bool:
    return (
        isinstance(handler, dict)
        and handler.get("type") == "command"
        and isinstance(handler.get("command"), str)
        and _OURS.search(handler["command"]) is not None
    )


def _our_group(group: Any) -> bool:
    handlers = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(handlers, list) and bool(handlers) and all(is_ours(h) for h in handlers)


def merged(
    settings: dict[str, Any], python: str | None = None, events: Events = CLAUDE_EVENTS
) -> dict[str, Any]:
    """Pure: `settings` with our groups in place (the user's entries untouched, in order)."""
    out = dict(settings)
    hooks = out.get("hooks", {})
    if not isinstance(hooks, dict):
        raise ContractError("the settings' `hooks` is not a JSON object; fix it by hand first")
    hooks = dict(hooks)
    for name, event, matcher in events:
        groups = hooks.get(name, [])
        if not isinstance(groups, list):
            raise ContractError(f"the settings' hooks.{name} is not a list; fix it by hand first")
        group: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
        handler = {"type": "command", "command": hook_command(event, python)}
        group["hooks"] = [{**handler, "timeout": HOOK_TIMEOUT_SECONDS}]
        hooks[name] = [g for g in groups if not _our_group(g)] + [group]
    out["hooks"] = hooks
    return out


def removed(settings: dict[str, Any]) -> dict[str, Any]:
    """Pure: `settings` without our groups, and without containers only they filled."""
    out = dict(settings)
    hooks = out.get("hooks")
    if not isinstance(hooks, dict):
        return out
    hooks = dict(hooks)
    for name, _event, _matcher in ALL_EVENTS:  # every event we ever install, on any host
        groups = hooks.get(name)
        if not isinstance(groups, list):
            continue
        kept = [g for g in groups if not _our_group(g)]
        if len(kept) == len(groups):
            continue
        if kept:
            hooks[name] = kept
        else:
            del hooks[name]
    if hooks:
        out["hooks"] = hooks
    else:
        del out["hooks"]
    return out


def settings_path(start: Path, host: Host = Host.CLAUDE) -> Path:
    """The host's hook file in the checkout around `start` (the host's project)."""
    top = git.toplevel(start if start.is_dir() else start.parent)
    if top is None:
        raise ContractError(f"not inside a git repository: {start}")
    return top / HOST_FILES[host]


def _read(path: Path) -> dict[str, Any] | None:
    if not path.exists():
        return None
    try:
        value = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (ValueError, UnicodeDecodeError) as exc:
        raise ContractError(f"{path} is not valid JSON ({exc}); left as it is") from exc
    if not isinstance(value, dict):
        raise ContractError(f"{path} is not a JSON object; left as it is")
    return value


def install(start: Path, host: Host) -> HooksResult:
    path = settings_path(start, host)
    top, rel = path.parent.parent, HOST_FILES[host].as_posix()
    if host is Host.CODEX and git.is_tracked(top, rel):
        raise ContractError(
            f"{path} is tracked by git: a keep would commit our entries and a discard reset "
            "them; untrack it first (git rm --cached) or add the hook by hand"
        )
    before = _read(path)
    events = HOST_EVENTS[host]
    after = merged(before or {}, events=events)
    names = tuple(name for name, _e, _m in events)
    note = f"; {CODEX_TRUST_NOTE}" if host is Host.CODEX else ""
    if after == before:
        return HooksResult(
            str(path), False, names, f"the hooks are already installed in {path}{note}"
        )
    write_excludes(top, [f"/{rel}"])
    atomic_write_text(path, dump_json(after), keep_mode=True)
    message = f"installed the Stop and SessionStart (compact) hooks in {path}{note}"
    return HooksResult(str(path), True, names, message)


def uninstall(start: Path, host: Host) -> HooksResult:
    path = settings_path(start, host)
    before = _read(path)
    if before is None:
        return HooksResult(str(path), False, (), f"no {path}: nothing to remove")
    after = removed(before)
    if after == before:
        return HooksResult(str(path), False, (), f"no autoresearch hooks in {path}")
    if after:
        atomic_write_text(path, dump_json(after), keep_mode=True)
    else:  # only our entries were there: leave no empty file behind
        path.unlink()
        if not any(path.parent.iterdir()):
            path.parent.rmdir()
    events = tuple(
        name for name, _e, _m in ALL_EVENTS if before.get("hooks", {}).get(name) is not None
    )
    return HooksResult(str(path), True, events, f"removed the autoresearch hooks from {path}")


def install_claude(start: Path) -> HooksResult:
    return install(start, Host.CLAUDE)


def uninstall_claude(start: Path) -> HooksResult:
    return uninstall(start, Host.CLAUDE)

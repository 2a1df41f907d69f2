"""Path sandbox: every path a job names must lie inside its allowed roots.

A path is accepted only when it is inside a root twice over: lexically (after `..` is folded,
without touching the disk) and physically (the realpath of its nearest existing ancestor, with
the rest appended, is inside the root's realpath) – so neither `..` nor a symlink, dangling or
not, leads out. NUL bytes, line breaks and percent-encoded sequences (`%2e%2e%2f`) are refused
outright: a caller that sends them is confused or hostile, and no real file name needs them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from autoresearch.errors import ContractError

CODE = "autoresearch_path_outside_sandbox"
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_FORBIDDEN = ("\0", "\n", "\r")


@dataclass(frozen=True)
class Root:
    """An allowed root as given (absolute, normalised) and as it really is on disk."""

    lexical: str
    real: str

    @classmethod
    def of(cls, path: str | Path) -> Root:
        lexical = os.path.normpath(os.path.abspath(path))
        return cls(lexical, os.path.realpath(lexical))


def check_text(path: str) -> None:
    """Refuse path strings no honest caller sends."""
    if not path:
        raise ContractError(f"{CODE}: empty path")
    if any(c in path for c in _FORBIDDEN):
        raise ContractError(f"{CODE}: control character in path {path!r}")
    if _PERCENT.search(path):
        raise ContractError(f"{CODE}: percent-encoded sequence in path {path!r}")


def resolve(path: str, roots: Sequence[Root], base: str) -> str:
    """The absolute, normalised form of `path` (relative to `base`) if inside a root."""
    check_text(path)
    candidate = os.path.normpath(os.path.join(base, path))
    lexical_ok = any(_within(candidate, r.lexical) or _within(candidate, r.real) for r in roots)
    real = real_path(candidate)
    if not lexical_ok or not any(_within(real, r.real) for r in roots):
        raise ContractError(f"{CODE}: {path!r} resolves outside the allowed directories")
    return candidate


def real_path(candidate: str) -> str:
    """The realpath of the nearest existing ancestor of `candidate`, the rest appended."""
    head, rest = candidate, ""
    while not os.path.lexists(head):
        parent = os.path.dirname(head)
        if parent == head:
            break
        name = os.path.basename(head)
        head, rest = parent, (os.path.join(name, rest) if rest else name)
    resolved = os.path.realpath(head)
    return os.path.normpath(os.path.join(resolved, rest)) if rest else resolved


def is_within(path: str, roots: Sequence[str]) -> bool:
    """True when the absolute `path` is one of `roots` or below one (no disk access)."""
    return any(_within(path, root) for root in roots)


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)

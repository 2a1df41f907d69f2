"""A candidate's facts read from git's loose objects, without a git process (issue 36).

Every step asked one `git cat-file` process (2-10 ms) what the artifact's names resolve to.
A session's fresh commit, its parents and the kept commit are almost always loose objects
(`objects/ab/cdef…`: a zlib stream `commit <size>\\0tree …\\nparent …`), a format git has not
changed since its first year. This module answers only when the answer is certain: every
name a full lowercase SHA-1 of a loose commit, HEAD a symbolic ref to a loose branch ref (or
detached), and nothing that makes git read other objects than the ones named – no replace
refs, no grafts, no shallow boundary, no other object format. Anything else (a short name, a
packed object, a tag, an unusual repository) is "unsure" (None) and git.py asks git, so no
check depends on this module being right where it is unsure.
"""

from __future__ import annotations

import hashlib
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from autoresearch import git_files
from autoresearch.fsutil import FileRefused, read_regular

_SHA1 = re.compile(rb"[0-9a-f]{40}")
_SHA1_TEXT = re.compile(r"[0-9a-f]{40}")
_MAX_OBJECT = 1 << 16  # a commit's header lines come first; a larger commit: ask git
_SMALL = 4096
# settings that make git read objects other than the named ones, or name them otherwise
_UNPLAIN_CONFIG = (b"objectformat", b"replace", b"grafts")


@dataclass(frozen=True)
class LooseCommit:
    """A commit's tree and parents, as its loose object records them."""

    tree: str
    parents: tuple[str, ...]


@dataclass(frozen=True)
class ReadFacts:
    """What `git cat-file` would answer for a candidate (see git.CandidateFacts); `lineage`
    is the first parents up to the kept commit, or as far as they are loose."""

    base: str
    commit: str | None
    head: str
    tree: str | None
    kept_tree: str | None
    lineage: tuple[str, ...]


def candidate_facts(
    worktree: Path, base: str, commit: str, kept: str, walk: int
) -> ReadFacts | None:
    """The facts of a candidate in `worktree` (its top folder) read from loose objects, or
    None when unsure. `commit` "" (no candidate commit) has no commit, tree nor lineage."""
    common = plain_common(worktree)
    if not base or common is None:
        return None  # no base names nothing: git says so
    head = head_commit(worktree, common)
    if head is None:
        return None
    read: dict[str, LooseCommit] = {}
    for name in {base, commit, kept, head} - {""}:
        parsed = loose_commit(common, name)
        if parsed is None:
            return None
        read[name] = parsed
    tree = read[commit].tree if commit else None
    kept_tree = read[kept].tree if kept else None
    if not all(_loose(common, name) for name in (tree, kept_tree) if name):
        return None  # git would say the tree is missing, or finds it packed
    lineage = first_parents(common, read[commit], kept, walk) if commit else ()
    return ReadFacts(base, commit or None, head, tree, kept_tree, lineage)


def peeled(worktree: Path, queries: Sequence[tuple[str, str]]) -> list[str | None] | None:
    """Each name (a full SHA-1 of a commit, or HEAD) peeled to the commit (kind "commit") or
    to its tree ("tree") from loose objects, as `git cat-file` would; None when unsure of any."""
    common = plain_common(worktree)
    if common is None:
        return None
    found: list[str | None] = []
    for name, kind in queries:
        object_id = head_commit(worktree, common) if name == "HEAD" else name
        read = loose_commit(common, object_id) if object_id else None
        if read is None or kind not in ("commit", "tree"):
            return None
        if kind == "tree" and not _loose(common, read.tree):
            return None
        found.append(object_id if kind == "commit" else read.tree)
    return found


def plain_common(worktree: Path) -> Path | None:
    """The common git folder of the worktree whose top folder is `worktree`, when its objects
    are plain (`objects_plain`); None when unsure."""
    found = git_files.dirs(worktree)
    return found[1] if found is not None and objects_plain(found[1]) else None


def first_parents(common: Path, start: LooseCommit, kept: str, walk: int) -> tuple[str, ...]:
    """The first parents of the commit read as `start`, nearest first: up to `kept`, at most
    `walk`, and no further than they are loose (a shorter walk only sends `descends_from` to
    git)."""
    lineage: list[str] = []
    current: LooseCommit | None = start
    while current is not None and current.parents and len(lineage) < walk:
        parent = current.parents[0]
        lineage.append(parent)
        if parent == kept:
            break
        current = loose_commit(common, parent)
    return tuple(lineage)


def loose_commit(common: Path, object_id: str) -> LooseCommit | None:
    """The commit `object_id` from its loose object in the repository whose common git folder
    is `common`; None when unsure (not a full SHA-1, not loose, not a commit, malformed)."""
    if not _SHA1_TEXT.fullmatch(object_id):
        return None
    try:
        raw = read_regular(common / "objects" / object_id[:2] / object_id[2:], _MAX_OBJECT)
        inflate = zlib.decompressobj()
        data = inflate.decompress(raw, _MAX_OBJECT)
    except (OSError, FileRefused, zlib.error):
        return None
    # git reads a loose object only whole and true to its name (else "corrupt"/"hash
    # mismatch", or a packed copy): an agent may write a file there that names other parents
    if not inflate.eof or inflate.unused_data or hashlib.sha1(data).hexdigest() != object_id:
        return None
    header, nul, body = data.partition(b"\0")
    if not nul or header != b"commit %d" % len(body):
        return None  # another type, or larger than read: git knows
    return _parse_commit(body)


def _parse_commit(body: bytes) -> LooseCommit | None:
    lines = body.split(b"\n", 64)
    if not lines[0].startswith(b"tree ") or not _SHA1.fullmatch(lines[0][5:]):
        return None
    parents = []
    for line in lines[1:]:
        if not line.startswith(b"parent "):
            break
        if not _SHA1.fullmatch(line[7:]):
            return None
        parents.append(line[7:].decode())
    return LooseCommit(lines[0][5:].decode(), tuple(parents))


def head_commit(worktree: Path, common: Path) -> str | None:
    """The commit id HEAD names in `worktree`: detached, or through a loose branch ref; None
    when unsure (a packed or symbolic branch ref, an unborn branch, another ref store)."""
    read = git_files.head_ref(worktree)
    if not read.known:
        return None
    own = git_files.git_dir(worktree)
    if read.ref is None:
        return _object_id_in(own / "HEAD") if own is not None else None
    if not read.ref.startswith("refs/heads/") or ".." in read.ref:
        return None
    return _object_id_in(common / read.ref)


def objects_plain(common: Path) -> bool:
    """No replace ref, graft, shallow boundary or other object format in the repository: git
    reads a named commit from its own object, as this module does. A folder we may not read
    (an agent can make one) is unsure, never an error."""
    try:
        return _objects_plain(common)
    except OSError:
        return False


def _objects_plain(common: Path) -> bool:
    if (common / "info" / "grafts").exists() or (common / "shallow").exists():
        return False
    replace = common / "refs" / "replace"
    if replace.exists() and any(replace.iterdir()):
        return False
    for name, limit in (("packed-refs", 1 << 24), ("config", 1 << 20)):
        text = _read(common / name, limit)
        if text is None and (common / name).exists():
            return False
        if text is not None and (b"refs/replace/" in text or _unplain(text)):
            return False
    return True


def _unplain(config: bytes) -> bool:
    lowered = config.lower()
    return any(word in lowered for word in _UNPLAIN_CONFIG)


def _loose(common: Path, object_id: str) -> bool:
    try:
        return (common / "objects" / object_id[:2] / object_id[2:]).is_file()
    except OSError:
        return False


def _object_id_in(path: Path) -> str | None:
    text = _read(path, _SMALL)
    if text is None or text.count(b"\n") != 1 or not text.endswith(b"\n"):
        return None
    line = text.strip()
    return line.decode() if _SHA1.fullmatch(line) else None


def _read(path: Path, limit: int) -> bytes | None:
    try:
        return read_regular(path, limit)
    except (OSError, FileRefused):
        return None

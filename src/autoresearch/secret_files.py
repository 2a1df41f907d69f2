"""Likely secrets among files about to be committed: by name, and by what they contain.

Pure apart from reading the candidate files (regular files only, at most `MAX_SCAN_BYTES`).
A name hit: `.env` and its variants (not `.env.example` / `.sample` / `.template` / `.dist`),
private keys and key stores (`*.pem`, `*.key`, `*.p12`, `*.pfx`, `*.jks`, `*.keystore`,
`id_rsa`, `id_ed25519`, …, never a `.pub`), credential files (`.netrc`, `.pypirc`,
`.npmrc`, `credentials*`, `.htpasswd`). A content hit: a key shape the redactor masks
everywhere (`sk-…`, `ghp_…`, `AKIA…`, …), a PEM private key block, or an assignment to a
secret-named variable (`OPENAI_API_KEY=…`, `password: …`) with a literal value (token
characters with a digit, at least `redact.MIN_SECRET_LENGTH` long; code such as
`os.environ[…]` or `$VAR` is not a value).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path, PurePosixPath

from autoresearch.redact import BUILTIN_PATTERNS, MIN_SECRET_LENGTH, is_secret_name

MAX_SCAN_BYTES = 1 << 20
_NAME_PATTERNS = (
    ".env", ".env.*", "*.env", "*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore",
    "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_rsa_*", "id_ed25519_*", ".netrc",
    ".pypirc", ".npmrc", "credentials", "credentials.*", ".htpasswd",
)  # fmt: skip
_HARMLESS_SUFFIXES = (".example", ".sample", ".template", ".dist", ".pub")
_SHAPES = re.compile("|".join(f"(?:{p})" for p in BUILTIN_PATTERNS))
_PRIVATE_KEY = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")
# NAME=value, NAME: value, "name": "value" at a line's start or after { or , (JSON)
_ASSIGNMENT = re.compile(
    r"""(?:^|[{,])\s*(?:export\s+)?["']?([A-Za-z_][A-Za-z0-9_.-]*)["']?\s*[:=]\s*["']?([^"'\s#,}]+)""",
    re.MULTILINE,
)

_TOKEN = re.compile(r"[A-Za-z0-9_\-+/=~]+")


@dataclass(frozen=True)
class SecretHit:
    path: str
    why: str

    def __str__(self) -> str:
        return f"{self.path} ({self.why})"


def by_name(path: str) -> str | None:
    """Why a file's name says it holds a secret, or None."""
    name = PurePosixPath(path).name.lower()
    if name.endswith(_HARMLESS_SUFFIXES):
        return None
    return "a secrets file by its name" if any(fnmatch(name, p) for p in _NAME_PATTERNS) else None


def by_content(text: str) -> str | None:
    """Why a file's text looks like it holds a secret, or None."""
    if _PRIVATE_KEY.search(text):
        return "a private key"
    if _SHAPES.search(text):
        return "an API key or token"
    for match in _ASSIGNMENT.finditer(text):
        name, value = match.group(1), match.group(2)
        if is_secret_name(name.upper().replace("-", "_").replace(".", "_")) and _literal(value):
            return f"a value for {name}"
    return None


def _literal(value: str) -> bool:
    """A secret-like literal, not code (`os.environ[…]`, `$VAR`, `get_token()`): token
    characters only, long enough, with a digit in it."""
    return (
        len(value) >= MIN_SECRET_LENGTH
        and _TOKEN.fullmatch(value) is not None
        and any(c.isdigit() for c in value)
    )


def likely_secrets(root: Path, paths: Iterable[str]) -> list[SecretHit]:
    """The files among `paths` (relative to `root`) that look like they hold secrets."""
    hits = []
    for rel in paths:
        why = by_name(rel) or _scan(root / rel)
        if why:
            hits.append(SecretHit(rel, why))
    return hits


def _scan(path: Path) -> str | None:
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_SCAN_BYTES:
            return None
        return by_content(path.read_bytes().decode("utf-8", "replace"))
    except OSError:
        return None

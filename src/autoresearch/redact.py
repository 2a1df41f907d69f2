"""The one redaction of secrets in everything autoresearch writes for people to read or share.

What is masked (each occurrence becomes `[REDACTED]`):
* the value of every environment variable whose name marks a secret (`*_API_KEY`, `*_TOKEN`,
  `*_SECRET`, `*_PASSWORD`, `*_CREDENTIALS`, `*_KEY`, … anywhere in the name – see
  `SECRET_NAME`), when the value is at least `MIN_SECRET_LENGTH` characters long (shorter values
  such as `1` or `true` are flags, and masking them would mangle ordinary text);
* the value a secret-named variable is given in the text itself (`NAME=value`, `NAME: value`,
  `"name": "value"`), in this environment or not, when it is a token of `MIN_SECRET_LENGTH`
  characters or more with a digit in it (so code such as `token = get_token()` stays);
* well-known key shapes wherever they appear: `sk-…` (OpenAI, Anthropic), `Bearer …`, GitHub
  (`ghp_…`, `github_pat_…`), Slack (`xox?-…`), AWS access key ids (`AKIA…`);
* the user's own regular expressions, one per line (blank lines and lines starting with `#`
  are ignored), from the environment variable `AUTORESEARCH_REDACT` and from the user's file
  `$XDG_CONFIG_HOME/autoresearch/redact.txt` (default `~/.config/autoresearch/redact.txt`). One
  per user, not per repository: the edges (an MCP reply, a CLI line) do not all know one.

API (pure apart from `current`, which reads the environment and the user's file):
* `current() -> Redactor` – the redactor for this process (rebuilt when either changes);
* `Redactor.text(str) -> str` and `Redactor.value(obj) -> obj` (strings inside dicts, lists and
  tuples, keys included; numbers and None untouched), for JSON-like data before it is dumped;
* `redact(text)` and `redact_value(obj)`, the one-call forms;
* `build(environ, user_patterns) -> Redactor` for tests and for a caller with its own
  environment (a child process's).

Raw logs are not redacted (they must stay faithful for debugging); they are private instead
(`autoresearch.private`). Redaction is applied at the edge, on the way out: the ledger and
result views, `status` and summaries, MCP results, reports, the worker's outputs.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

from autoresearch.errors import ContractError

MASK = "[REDACTED]"
ENV_REDACT = "AUTORESEARCH_REDACT"
REDACT_FILE = "redact.txt"
MIN_SECRET_LENGTH = 8
# Short texts a redactor remembers masked (JSON keys, paths, commands, decisions): bounded, so
# a long run's memory stays flat (at most ~1 MB a redactor).
MEMO_TEXT = 200
MEMO_ENTRIES = 4096

# A name segment (between underscores, or the whole name) that says "this value is a secret".
SECRET_NAME = re.compile(
    r"(?:^|_)(?:API_?KEY|APIKEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)(?:_|$)|_KEY$",
    re.IGNORECASE,
)

# Key shapes that are secrets wherever they appear, even with no variable to match.
BUILTIN_PATTERNS: tuple[str, ...] = (
    r"\bsk-[A-Za-z0-9][A-Za-z0-9_\-]{15,}",
    r"\bgh[pousr]_[A-Za-z0-9]{20,}",
    r"\bgithub_pat_[A-Za-z0-9_]{20,}",
    r"\bxox[abposr]-[A-Za-z0-9\-]{10,}",
    r"\bAKIA[0-9A-Z]{16}\b",
)
# The characters of a token (RFC 6750's b64token): what Bearer and an assigned secret may hold.
_TOKEN_CHARS = r"A-Za-z0-9._~+/=\-"
# `Bearer <token>`: the scheme word stays, so a reader still sees what was there.
_SCHEME = "Bearer"
_BEARER = re.compile(rf"\b({_SCHEME})(\s+)[{_TOKEN_CHARS}]{{{MIN_SECRET_LENGTH},}}", re.IGNORECASE)
# The word alone, matched as `_BEARER` matches it: a text without it (most) has no Bearer token,
# and a literal is found in a fraction of the time the whole pattern takes to fail everywhere.
_SCHEME_WORD = re.compile(_SCHEME, re.IGNORECASE)
# A secret-named variable given a value in the text itself (`AWS_SECRET_ACCESS_KEY=…` of a
# `.env` an agent printed, `"api_key": "…"`), whether or not this process has that variable.
# The value is a token (the Bearer charset) with a digit in it, not followed by `(` or `[`:
# code such as `api_key = os.environ[…]`, `token = get_token()` or `password = self.password`
# stays readable in diffs and reports.
_ASSIGNED = re.compile(
    r"""\b(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?P<sep>["']?[ \t]*[=:][ \t]*["']?)"""
    rf"(?P<value>[{_TOKEN_CHARS}]{{{MIN_SECRET_LENGTH},}})(?![{_TOKEN_CHARS}(\[])"
)


_TOKEN = re.compile(rf"[{_TOKEN_CHARS}]{{{MIN_SECRET_LENGTH},}}")


def _is_assigned_secret(name: str, value: str) -> bool:
    """Whether `value`, given to the variable or key `name`, is masked: the rule `_ASSIGNED`
    applies in text, and `Redactor.value` to a key of JSON-like data and its value alike."""
    return is_secret_name(name) and bool(_TOKEN.fullmatch(value)) and any(map(str.isdigit, value))


def _assigned(m: re.Match[str]) -> str:
    if _is_assigned_secret(m.group("name"), m.group("value")):
        return f"{m.group('name')}{m.group('sep')}{MASK}"
    return m.group(0)


def _assigned_in_lines(text: str) -> str:
    """`_ASSIGNED` applied to `text`, line by line and only where a line holds `=` or `:`. The
    same text: no match crosses a line (a name, a separator and a value hold no newline) nor
    lacks a separator, and `status RUN`'s thousand table rows have none (the whole text at
    once cost it ~2.5 ms, a regex stopping at every word)."""
    if "=" not in text and ":" not in text:
        return text
    lines = text.split("\n")
    for at, line in enumerate(lines):
        if "=" in line or ":" in line:
            lines[at] = _ASSIGNED.sub(_assigned, line)
    return "\n".join(lines)


def is_secret_name(name: str) -> bool:
    """Whether an environment variable's name marks its value as a secret (a short name is
    remembered: the keys of a status's thousand rows are a dozen names, each asked per row;
    a long one, which may be some data's text, is not kept)."""
    if len(name) > _NAME_REMEMBERED:
        return bool(SECRET_NAME.search(name))
    return _short_secret_name(name)


_NAME_REMEMBERED = 64


@lru_cache(maxsize=1024)
def _short_secret_name(name: str) -> bool:
    return bool(SECRET_NAME.search(name))


def secret_values(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The values to mask: secret-named variables' values long enough to be secrets."""
    found = {
        value.strip()
        for name, value in environ.items()
        if is_secret_name(name) and len(value.strip()) >= MIN_SECRET_LENGTH
    }
    # Longest first, so a value that contains another is masked whole.
    return tuple(sorted(found, key=lambda v: (-len(v), v)))


def parse_patterns(text: str, source: str) -> tuple[str, ...]:
    """User patterns, one regular expression per line; a bad one is a ContractError.

    The message names the source and the line, never the pattern: it may hold the secret.
    """
    patterns: list[str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            re.compile(line)
        except re.error as exc:
            raise ContractError(
                f"{source}: line {number} is not a valid regular expression ({exc.msg})"
            ) from None
        patterns.append(line)
    return tuple(patterns)


class Redactor:
    """Masks known secret values and secret-shaped text; immutable and cheap to apply.

    A plain class: every command that shows text imports it (`status`, a hook), and a frozen
    dataclass compiles its generated methods at import (~0.6 ms). Its two settings are set
    here once; nothing compares or copies a redactor, and its repr never shows the secrets."""

    def __init__(
        self, values: tuple[str, ...] = (), patterns: tuple[str, ...] = BUILTIN_PATTERNS
    ) -> None:
        self.values = values
        self.patterns = patterns

    @cached_property
    def _combined(self) -> re.Pattern[str] | None:
        parts = [re.escape(v) for v in self.values] + [f"(?:{p})" for p in self.patterns]
        return re.compile("|".join(parts)) if parts else None

    @cached_property
    def _memo(self) -> dict[str, str]:
        return {}

    def text(self, text: str) -> str:
        """`text` with every secret replaced by MASK."""
        if not text:
            return text
        # the views of every step repeat the same keys and paths: each is masked once
        memo = self._memo
        found = memo.get(text)
        if found is None:
            found = self._masked(text)
            if len(text) <= MEMO_TEXT and len(memo) < MEMO_ENTRIES:
                memo[text] = found
        return found

    def _masked(self, text: str) -> str:
        if self._combined is not None:
            text = self._combined.sub(MASK, text)
        if _SCHEME_WORD.search(text):
            text = _BEARER.sub(lambda m: f"{m.group(1)}{m.group(2)}{MASK}", text)
        return _assigned_in_lines(text)

    def value(self, value: Any) -> Any:
        """A JSON-like value with every string in it (keys too) redacted; a new object."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return self._mapping(value)
        if isinstance(value, list):
            return [self.value(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self.value(v) for v in value)
        return value

    def _mapping(self, value: dict[Any, Any]) -> dict[Any, Any]:
        """`value` masked: a string given to a secret-named key whole, else key and value each."""
        masked: dict[Any, Any] = {}
        text = self.text
        for key, item in value.items():
            if not isinstance(key, str):
                masked[key] = self.value(item)
            elif isinstance(item, str):
                masked[text(key)] = MASK if _is_assigned_secret(key, item) else text(item)
            else:
                masked[text(key)] = self.value(item)
        return masked


def build(environ: Mapping[str, str], user_patterns: Iterable[str] = ()) -> Redactor:
    """The redactor for one environment and the user's patterns (pure)."""
    return Redactor(secret_values(environ), (*BUILTIN_PATTERNS, *user_patterns))


def user_file(environ: Mapping[str, str]) -> Path:
    """The user's pattern file: `$XDG_CONFIG_HOME/autoresearch/redact.txt`."""
    base = environ.get("XDG_CONFIG_HOME") or str(Path(environ.get("HOME", "~")) / ".config")
    return Path(base).expanduser() / "autoresearch" / REDACT_FILE


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return ""
    except (OSError, UnicodeDecodeError) as exc:
        raise ContractError(f"cannot read {path}: {type(exc).__name__}") from None


def user_patterns(environ: Mapping[str, str]) -> tuple[str, ...]:
    """The user's patterns from `AUTORESEARCH_REDACT` and the user's file."""
    path = user_file(environ)
    return parse_patterns(environ.get(ENV_REDACT, ""), ENV_REDACT) + parse_patterns(
        _read(path), str(path)
    )


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


# The last redactor built, with what it was built from: the environment (`_environment_mark`),
# its user file (the same while the environment is) and that file's stamp. Edges call
# `current()` per write or per reply (a status of 1,000 iterations once per row): rebuilding
# (and recompiling) only when the environment or the file changed keeps that cheap, and so does
# naming the file again only when the environment changed (pathlib's parsing cost a row ~10 µs,
# more than the rest of the look). A plain tuple: a class here costs every start-up.
_last: tuple[object, Path, tuple[int, int] | None, Redactor] | None = None


def _environment_mark() -> object:
    """What tells one state of this process's environment from another, cheaply: CPython's
    os.environ keeps its items encoded in a dict, copied in C; decoding every item (what
    `dict(os.environ)` does) cost a step ~2 ms of CPU over its ~40 redactions (issue 36)."""
    data = getattr(os.environ, "_data", None)
    return dict(data) if isinstance(data, dict) else dict(os.environ)


def current() -> Redactor:
    """The redactor for this process's environment and the user's pattern file."""
    global _last
    mark = _environment_mark()
    last = _last if _last is not None and _last[0] == mark else None
    path = last[1] if last is not None else user_file(os.environ)
    stamp = _stamp(path)
    if last is not None and last[2] == stamp:
        return last[3]
    env = dict(os.environ)
    redactor = build(env, user_patterns(env))
    _last = (mark, path, stamp, redactor)
    return redactor


def redact(text: str) -> str:
    """`text` with this process's secrets masked."""
    return current().text(text)


def redact_value(value: Any) -> Any:
    """A JSON-like value with this process's secrets masked in every string."""
    return current().value(value)

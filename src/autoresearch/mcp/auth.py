"""The bearer token of `autoresearch mcp --transport http`: where it lives, how it is checked,
and the lines that configure a host to send it.

Over HTTP, any local process – and any web page, through DNS rebinding – could otherwise call
the tools, and `init_experiment` sets the command the benchmark runs. The token is made once
(`secrets.token_urlsafe`), kept in a 0600 file (or given in AUTORESEARCH_MCP_TOKEN), printed
only when it is made, and compared in constant time. A refusal says which check failed, never
what was sent. Pure apart from `load_token`; no MCP SDK import, so the CLI can use it freely.
"""

from __future__ import annotations

import hmac
import os
import secrets
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from autoresearch.api import ContractError, atomic_write_text, make_private

ENV_MCP_TOKEN = "AUTORESEARCH_MCP_TOKEN"
TOKEN_FILE_NAME = "mcp-token"
MIN_TOKEN_LENGTH = 32
SERVER_NAME = "autoresearch"


def default_token_file(environ: Mapping[str, str]) -> Path:
    """`$XDG_CONFIG_HOME/autoresearch/mcp-token` (default `~/.config/…`): one token per user,
    so hosts keep working across restarts and repositories."""
    base = environ.get("XDG_CONFIG_HOME") or str(Path(environ.get("HOME", "~")) / ".config")
    return Path(base).expanduser() / "autoresearch" / TOKEN_FILE_NAME


@dataclass(frozen=True)
class Token:
    """The token the server accepts, and where it came from."""

    value: str
    file: Path | None  # None: from the environment variable
    created: bool  # made by this start: the only time its value is printed


def _check(value: str, source: str) -> str:
    value = value.strip()
    if len(value) < MIN_TOKEN_LENGTH or not value.isascii() or not value.isprintable():
        raise ContractError(
            f"{source}: the bearer token must be at least {MIN_TOKEN_LENGTH} printable ASCII "
            "characters"
        )
    if any(c.isspace() for c in value):
        raise ContractError(f"{source}: the bearer token must not contain spaces")
    return value


def load_token(environ: Mapping[str, str], file: Path, renew: bool = False) -> Token:
    """The token from AUTORESEARCH_MCP_TOKEN, else from `file` (made, 0600, when missing or
    when `renew` asks for a new one)."""
    if environ.get(ENV_MCP_TOKEN, "").strip():
        if renew:
            raise ContractError(f"--new-token: the token comes from {ENV_MCP_TOKEN}; unset it")
        return Token(_check(environ[ENV_MCP_TOKEN], ENV_MCP_TOKEN), None, False)
    if not renew:
        try:
            text = file.read_text(encoding="utf-8")
        except FileNotFoundError:
            pass
        except (OSError, UnicodeDecodeError) as exc:
            raise ContractError(
                f"cannot read the token file {file}: {type(exc).__name__}"
            ) from None
        else:
            make_private(file)  # one loosened by hand is tightened again
            return Token(_check(text, str(file)), file, False)
    value = secrets.token_urlsafe(32)
    atomic_write_text(file, value + "\n")
    return Token(value, file, True)


def authorization_failure(values: Sequence[str], token: str) -> str | None:
    """Why a request's Authorization header values do not carry `token`, or None when they do.

    The reason names the check that failed; it never contains what was sent.
    """
    if not values:
        return "no Authorization header"
    if len(values) > 1:
        return "more than one Authorization header"
    scheme, _, credentials = values[0].strip().partition(" ")
    credentials = credentials.strip()
    if scheme.lower() != "bearer" or not credentials:
        return "the Authorization header is not `Bearer <token>`"
    if not hmac.compare_digest(credentials.encode("utf-8", "replace"), token.encode("utf-8")):
        return "wrong bearer token"
    return None


def host_lines(url: str, token: Token) -> list[str]:
    """The commands that make Claude Code and Codex send the token, without printing it."""
    if token.file is None:
        source = f"${ENV_MCP_TOKEN}"
        export = f"(with {ENV_MCP_TOKEN} set in its environment)"
    else:
        source = f"$(cat {shlex.quote(str(token.file))})"
        export = f'export {ENV_MCP_TOKEN}="{source}"'
    return [
        "Claude Code:",
        f"  claude mcp add --transport http {SERVER_NAME} {url} "
        f'--header "Authorization: Bearer {source}"',
        "Codex:",
        f"  {export}",
        f"  codex mcp add {SERVER_NAME} --url {url} --bearer-token-env-var {ENV_MCP_TOKEN}",
    ]


def banner(url: str, token: Token | None) -> list[str]:
    """What the server prints on stderr at start: the URL, the token once, the host lines."""
    lines = [f"autoresearch MCP server: {url} (Ctrl-C stops it)"]
    if token is None:
        lines.append(
            "WARNING: --insecure-no-auth: any local process or web page that reaches this port "
            "can call the tools, including init_experiment (which sets the command to run)"
        )
        return lines
    if token.created:
        lines += [
            f"bearer token (new; kept in {token.file}, readable by you only; shown this once):",
            f"  {token.value}",
        ]
    elif token.file is not None:
        lines.append(f"bearer token: the one in {token.file} (--new-token replaces it)")
    else:
        lines.append(f"bearer token: the value of {ENV_MCP_TOKEN}")
    return lines + host_lines(url, token)


def token_file_from(option: str | None, environ: Mapping[str, str] = os.environ) -> Path:
    return Path(option).expanduser() if option else default_token_file(environ)

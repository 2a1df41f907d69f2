"""`autoresearch mcp --transport http` is authenticated: the real MCP client over real HTTP.

No token or a wrong one is answered 401 with the failed check named and nothing echoed; the
right token reaches the tools; a foreign Host or Origin is refused even with the token; the
token file is 0600 under a permissive umask and the token is printed only when it is made.
"""

from __future__ import annotations

import os
import re
import socket
import stat
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_helpers import TOOL_NAMES, Tools, mcp_repo

from helpers import Repo

pytestmark = pytest.mark.anyio

WRONG = "wrong-token-value-that-must-never-be-echoed-0123"


@dataclass
class Server:
    url: str
    port: int
    log: Path
    proc: subprocess.Popen[bytes]

    def banner(self) -> str:
        return self.log.read_text()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@asynccontextmanager
async def serve(repo: Repo, tmp_path: Path, *args: str, env: dict[str, str] | None = None):
    port = _free_port()
    log = tmp_path / f"server-{port}.log"
    argv = ["--repo", str(repo.root), "mcp", "--transport", "http", "--port", str(port), *args]
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "autoresearch", *argv],
            cwd=tmp_path,
            env={**os.environ, **(env or {})},
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 20
        while True:
            assert proc.poll() is None, log.read_text()
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.05)
        yield Server(f"http://127.0.0.1:{port}/mcp", port, log, proc)
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@asynccontextmanager
async def client(url: str, headers: dict[str, str]) -> AsyncIterator[Tools]:
    http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300))
    async with http, Client(streamable_http_client(url, http_client=http)) as c:
        tools = Tools(c)
        await tools.load()
        yield tools


async def refused(url: str, headers: dict[str, str]) -> httpx2.Response:
    """Connect with the real client; return the HTTP response that refused it."""
    seen: list[httpx2.Response] = []

    async def keep(response: httpx2.Response) -> None:
        await response.aread()
        seen.append(response)

    http = httpx2.AsyncClient(headers=headers, event_hooks={"response": [keep]})
    with pytest.raises(Exception):  # noqa: B017 - the SDK's error type is not the point
        async with http, Client(streamable_http_client(url, http_client=http)):
            pass
    assert seen, "no HTTP response at all"
    return seen[0]


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return mcp_repo(tmp_path / "repo")


async def test_token_flow_over_real_http(repo: Repo, tmp_path: Path, open_umask: None) -> None:
    token_file = tmp_path / "cfg" / "mcp-token"
    async with serve(repo, tmp_path, "--token-file", str(token_file)) as server:
        token = token_file.read_text().strip()
        assert len(token) >= 32
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        assert stat.S_IMODE(token_file.parent.stat().st_mode) == 0o700
        banner = server.banner()
        assert banner.count(token) == 1  # printed once, when it was made
        assert f"claude mcp add --transport http autoresearch {server.url} " in banner
        assert f'--header "Authorization: Bearer $(cat {token_file})"' in banner
        assert (
            f"codex mcp add autoresearch --url {server.url} "
            "--bearer-token-env-var AUTORESEARCH_MCP_TOKEN"
        ) in banner

        # No token, a wrong one, a malformed header: 401, the failed check named, nothing echoed.
        cases = {
            "no Authorization header": {},
            "wrong bearer token": {"Authorization": f"Bearer {WRONG}"},
            "the Authorization header is not `Bearer <token>`": {"Authorization": f"Basic {WRONG}"},
        }
        for reason, headers in cases.items():
            response = await refused(server.url, headers)
            assert response.status_code == 401
            assert response.json() == {"error": "invalid_token", "error_description": reason}
            assert response.headers["www-authenticate"].startswith('Bearer realm="autoresearch"')
            assert WRONG not in response.text + str(response.headers)

        # The right token reaches the tools.
        auth = {"Authorization": f"Bearer {token}"}
        async with client(server.url, auth) as tools:
            assert set(tools.schemas) == TOOL_NAMES
            listed = await tools.ok("run_list")
            assert listed.data["repo_root"] == str(repo.root)

        # DNS rebinding: even with the token, a foreign Origin or Host is refused.
        evil_origin = await refused(server.url, {**auth, "Origin": "http://evil.example"})
        assert evil_origin.status_code == 403
        evil_host = await refused(server.url, {**auth, "Host": f"evil.example:{server.port}"})
        assert evil_host.status_code == 421
        same_origin = {**auth, "Origin": f"http://127.0.0.1:{server.port}"}
        async with client(server.url, same_origin) as tools:
            assert set(tools.schemas) == TOOL_NAMES

    log = server.banner()
    assert "wrong bearer token" in log  # the server says why it refused...
    assert WRONG not in log  # ...and never what was sent

    # A restart keeps the token and does not print it again; --new-token replaces it.
    async with serve(repo, tmp_path, "--token-file", str(token_file)) as again:
        assert token not in again.banner()
        assert "bearer token: the one in" in again.banner()
        async with client(again.url, auth) as tools:
            assert set(tools.schemas) == TOOL_NAMES
    async with serve(repo, tmp_path, "--token-file", str(token_file), "--new-token") as renewed:
        new = token_file.read_text().strip()
        assert new != token and renewed.banner().count(new) == 1
        assert (await refused(renewed.url, auth)).status_code == 401


async def test_token_from_the_environment_and_insecure_no_auth(repo: Repo, tmp_path: Path) -> None:
    token = "an-env-token-of-plenty-length-0123456789"
    env = {"AUTORESEARCH_MCP_TOKEN": token}
    async with serve(repo, tmp_path, env=env) as server:
        assert token not in server.banner()
        assert '--header "Authorization: Bearer $AUTORESEARCH_MCP_TOKEN"' in server.banner()
        assert (await refused(server.url, {})).status_code == 401
        async with client(server.url, {"Authorization": f"Bearer {token}"}) as tools:
            assert set(tools.schemas) == TOOL_NAMES
    async with serve(repo, tmp_path, "--insecure-no-auth") as open_server:
        assert "WARNING: --insecure-no-auth" in open_server.banner()
        async with client(open_server.url, {}) as tools:
            assert set(tools.schemas) == TOOL_NAMES
        # Host and Origin are still checked without a token.
        assert (
            await refused(open_server.url, {"Origin": "http://evil.example"})
        ).status_code == 403


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["--transport", "stdio", "--insecure-no-auth"], {}, "apply to --transport http only"),
        (["--transport", "http", "--insecure-no-auth", "--new-token"], {}, "takes no token"),
        (
            ["--transport", "http"],
            {"AUTORESEARCH_MCP_TOKEN": "short-SECRETISH"},
            "AUTORESEARCH_MCP_TOKEN: the bearer token must be at least 32",
        ),
    ],
)
def test_refusals_are_one_line_without_the_value(
    repo: Repo, args: list[str], env: dict[str, str], message: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "autoresearch", "--repo", str(repo.root), "mcp", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert re.fullmatch(r"autoresearch: [^\n]+\n", done.stderr), done.stderr
    assert message in done.stderr and "SECRETISH" not in done.stderr

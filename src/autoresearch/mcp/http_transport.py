"""The MCP server over streamable HTTP on loopback: bearer token, Host and Origin checked.

The SDK's transport security validates Host and Origin (DNS rebinding) against this server's
own loopback address and port. The token is checked by `BearerGate`, an ASGI wrapper in front
of the SDK's app: the SDK's own bearer backend is built for OAuth resource servers and answers
every failure alike, while a user debugging a host config needs to know which check failed.
"""

from __future__ import annotations

import json
import logging

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

from autoresearch.mcp.auth import authorization_failure

REFUSALS_LOGGER = "autoresearch.mcp.http"
log = logging.getLogger(REFUSALS_LOGGER)


def loopback_security(port: int) -> TransportSecuritySettings:
    """Host and Origin must name this server on loopback: a page that rebinds its own name to
    127.0.0.1 still sends its own Host and Origin, and is refused."""
    names = ("127.0.0.1", "localhost", "[::1]")
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{name}:{port}" for name in names],
        allowed_origins=[f"http://{name}:{port}" for name in names],
    )


class BearerGate:
    """Answers 401 to every HTTP request without the right `Authorization: Bearer` header."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._token = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan: the SDK's session manager starts and stops
            await self.app(scope, receive, send)
            return
        values = [
            value.decode("latin-1")
            for name, value in scope.get("headers", [])
            if name.lower() == b"authorization"
        ]
        reason = authorization_failure(values, self._token)
        if reason is None:
            await self.app(scope, receive, send)
            return
        client = scope.get("client") or ("?", 0)
        log.warning("refused a request from %s:%s: %s", client[0], client[1], reason)
        body = json.dumps({"error": "invalid_token", "error_description": reason}).encode()
        challenge = (
            f'Bearer realm="autoresearch", error="invalid_token", error_description="{reason}"'
        )
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", challenge.encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def http_app(server: MCPServer, host: str, port: int, token: str | None) -> ASGIApp:
    """The ASGI app served at http://HOST:PORT/mcp; `token=None` only with --insecure-no-auth."""
    app: ASGIApp = server.streamable_http_app(host=host, transport_security=loopback_security(port))
    return app if token is None else BearerGate(app, token)


def serve(server: MCPServer, host: str, port: int, token: str | None) -> None:
    """Serve until interrupted."""
    # One plain line per refusal on stderr (the SDK's rich handler wraps lines at 80 columns).
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("autoresearch MCP: %(message)s"))
    refusals = logging.getLogger(REFUSALS_LOGGER)
    refusals.addHandler(handler)
    refusals.setLevel(logging.WARNING)
    refusals.propagate = False
    uvicorn.run(http_app(server, host, port, token), host=host, port=port, log_level="warning")

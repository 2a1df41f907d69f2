"""The docs' MCP host snippets say what headless hosts need (F3 of issue 37): every Codex
`[mcp_servers.autoresearch]` block is valid TOML with `default_tools_approval_mode =
"approve"` (else `codex exec` refuses every destructive tool: "requires approval, but approval
policy is never"), and headless Claude Code is shown with `--allowedTools mcp__autoresearch`."""

from __future__ import annotations

import re
import tomllib

from docs_pages import pages


def _docs() -> str:
    return "\n".join(path.read_text() for path in pages())


def codex_blocks() -> list[dict[str, object]]:
    blocks = re.findall(r"```toml\n(.*?)```", _docs(), re.S)
    tables = [tomllib.loads(b) for b in blocks if "[mcp_servers.autoresearch]" in b]
    return [t["mcp_servers"]["autoresearch"] for t in tables]  # type: ignore[index]


def test_every_codex_server_block_approves_the_tools() -> None:
    blocks = codex_blocks()
    assert len(blocks) >= 2
    for block in blocks:
        assert block["default_tools_approval_mode"] == "approve", block


def test_headless_claude_is_shown_with_the_servers_tools_allowed() -> None:
    text = _docs()
    headless = [line for line in text.splitlines() if line.startswith("claude -p ")]
    assert headless and all("--allowedTools mcp__autoresearch" in line for line in headless)

#!/bin/sh
# Install the pinned agent CLIs (codex, Claude Code) from npm into a cache folder, once.
# Prints the folder holding their executables. Claude Code's native binary comes from its
# per-platform npm package: nothing is fetched from outside the registry.
# Usage: .ci/agents.sh [CACHE_DIR]   (default: ~/.cache/autoresearch-ci/npm)
set -eu
CODEX_VERSION=0.171.0
CLAUDE_CODE_VERSION=2.1.197
cache="${1:-${HOME}/.cache/autoresearch-ci/npm}"
bin="$cache/node_modules/.bin"
installed() {
    "$bin/codex" --version 2>/dev/null | grep -qx "codex-cli $CODEX_VERSION" &&
        "$bin/claude" --version 2>/dev/null | grep -q "^$CLAUDE_CODE_VERSION "
}
if ! installed; then
    command -v npm >/dev/null || { echo "agents.sh: npm is not installed" >&2; exit 1; }
    mkdir -p "$cache"
    echo "installing codex $CODEX_VERSION and Claude Code $CLAUDE_CODE_VERSION into $cache" >&2
    npm install --prefix "$cache" --no-audit --no-fund --no-save --loglevel=error \
        "@openai/codex@$CODEX_VERSION" "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" >&2
    installed || { echo "agents.sh: the installed CLIs do not report the pinned versions" >&2; exit 1; }
fi
echo "$bin"

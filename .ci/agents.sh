#!/bin/sh
# Install the pinned agent CLIs into a cache folder, once: codex and Claude Code from npm,
# aider from PyPI (in its own virtualenv). Prints the folder that links all three.
# Claude Code's native binary comes from its per-platform npm package: nothing is fetched
# from outside the registries.
# Usage: .ci/agents.sh [CACHE_DIR]   (default: ~/.cache/autoresearch-ci)
set -eu
CODEX_VERSION=0.171.0
CLAUDE_CODE_VERSION=2.1.197
AIDER_VERSION=0.86.2
cache="${1:-${HOME}/.cache/autoresearch-ci}"
npm_bin="$cache/npm/node_modules/.bin"
aider_venv="$cache/aider"

npm_installed() {
    "$npm_bin/codex" --version 2>/dev/null | grep -qx "codex-cli $CODEX_VERSION" &&
        "$npm_bin/claude" --version 2>/dev/null | grep -q "^$CLAUDE_CODE_VERSION "
}
aider_installed() {
    "$aider_venv/bin/aider" --version 2>/dev/null | grep -qx "aider $AIDER_VERSION"
}

if ! npm_installed; then
    command -v npm >/dev/null || { echo "agents.sh: npm is not installed" >&2; exit 1; }
    mkdir -p "$cache/npm"
    echo "installing codex $CODEX_VERSION and Claude Code $CLAUDE_CODE_VERSION into $cache/npm" >&2
    npm install --prefix "$cache/npm" --no-audit --no-fund --no-save --loglevel=error \
        "@openai/codex@$CODEX_VERSION" "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" >&2
    npm_installed || { echo "agents.sh: codex/claude do not report the pinned versions" >&2; exit 1; }
fi
if ! aider_installed; then
    echo "installing aider $AIDER_VERSION into $aider_venv (a few minutes)" >&2
    python3 -m venv "$aider_venv" >&2
    "$aider_venv/bin/python" -m pip install --quiet "aider-chat==$AIDER_VERSION" >&2
    aider_installed || { echo "agents.sh: aider does not report $AIDER_VERSION" >&2; exit 1; }
fi
mkdir -p "$cache/bin"
ln -sf "$npm_bin/codex" "$npm_bin/claude" "$aider_venv/bin/aider" "$cache/bin/"
echo "$cache/bin"

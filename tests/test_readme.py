"""Docs that cannot drift: every command and option the README shows exists."""

from __future__ import annotations

import json
import re
from pathlib import Path

import click

from autoresearch.cli import app

README = Path(__file__).resolve().parents[1] / "README.md"
_INVOCATION = re.compile(r"^autoresearch((?: (?:--repo \S+ )?[a-z][a-z-]*)+)(.*)$")


def _command(path: list[str]) -> click.Command | None:
    command: click.Command = app
    for name in path:
        found = _subcommands(command).get(name)
        if found is None:
            return None
        command = found
    return command


def _subcommands(command: click.Command) -> dict[str, click.Command]:
    """A group's commands (those of a LazyGroup imported here); none for a plain command."""
    if not isinstance(command, click.Group):
        return {}
    ctx = click.Context(command)
    found = {name: command.get_command(ctx, name) for name in command.list_commands(ctx)}
    return {name: sub for name, sub in found.items() if sub is not None}


def _options(command: click.Command) -> set[str]:
    opts = {"--help", "-h"}
    for param in command.params:
        opts.update(getattr(param, "opts", []))
        opts.update(getattr(param, "secondary_opts", []))
    return opts


def _code_snippets(text: str) -> list[str]:
    """Lines of fenced code blocks and inline code spans: where commands are shown."""
    snippets = re.findall(r"`([^`\n]+)`", text)
    for block in re.findall(r"```[a-z]*\n(.*?)```", text, re.S):
        snippets.extend(block.splitlines())
    return [s.split("#", 1)[0].strip() for s in snippets]


def invocations() -> list[tuple[list[str], list[str]]]:
    found = []
    for snippet in _code_snippets(README.read_text()):
        match = _INVOCATION.match(snippet)
        if match is None:
            continue
        words = [w for w in match.group(1).split() if w != "--repo"]
        words = [w for w in words if not w.startswith(("/", "."))]
        path: list[str] = []
        for word in words:
            if _command([*path, word]) is None:
                break
            path.append(word)
        flags = re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", match.group(2))
        found.append((path, flags))
    return found


def test_readme_commands_and_options_exist() -> None:
    seen = invocations()
    assert len(seen) > 10
    for path, flags in seen:
        assert path, "README names an autoresearch command that does not exist"
        command = _command(path)
        assert command is not None
        if isinstance(command, click.Group):
            continue
        unknown = set(flags) - _options(command)
        assert not unknown, f"`autoresearch {' '.join(path)}` has no option {sorted(unknown)}"


def test_readme_quickstart_matches_dev_script() -> None:
    text = README.read_text()
    assert "python3 dev.py demo" in text and "python3 dev.py test" in text
    ci = (README.parent / ".ci/run").read_text()
    assert "python3 dev.py test" in ci


def _all_options(command: click.Command) -> set[str]:
    opts = _options(command)
    if isinstance(command, click.Group):
        for sub in _subcommands(command).values():
            opts |= _all_options(sub)
    return opts


def test_every_flag_the_readme_shows_exists() -> None:
    known = _all_options(app)
    foreign = ("codex", "claude", "aider", "git", "pip", "python3", "make", "sh ", "ray ")
    for snippet in _code_snippets(README.read_text()):
        if snippet.startswith(foreign):
            continue
        for flag in re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", snippet):
            assert flag in known, f"README shows {flag!r} ({snippet!r}) but no command has it"


def _bash_blocks(section: str) -> list[str]:
    text = README.read_text()
    start = text.index(section)
    end = text.find("\n## ", start + 1)
    return re.findall(r"```bash\n(.*?)```", text[start : end if end > 0 else None], re.S)


def test_readme_session_walkthrough_runs(tmp_path: Path) -> None:
    """The bash blocks of the sessions section, run as written in a fresh repository."""
    import os
    import subprocess
    import sys

    from helpers import GIT_ENV, make_repo

    repo = make_repo(tmp_path / "project")
    repo.write("tests/test_ok.py", "def test_ok():\n    assert True\n")
    repo.commit("a project with a test")
    harness, loop = _bash_blocks("## Experiment sessions")
    # `python3` and `autoresearch` resolve to this environment, as after `source .venv/bin/activate`
    env = {**os.environ, **GIT_ENV, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    for block in (harness, loop):
        done = subprocess.run(
            ["bash", "-e", "-c", block], cwd=repo.root, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stdout + done.stderr
    status = subprocess.run(
        ["autoresearch", "exp", "status", "--json"], cwd=repo.root, env=env,
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    report = json.loads(status.stdout)
    assert report["counts"]["keep"] == 1
    assert report["baseline"]["run"] == 1 and report["baseline"]["metric"] >= 0


def _cmd_agent_section() -> str:
    text = README.read_text()
    return text.split("**Write a `cmd:` agent.**", 1)[1].split("\n**", 1)[0]


def test_the_cmd_agent_fields_are_the_contracts() -> None:
    from autoresearch.contracts.candidate import placeholder
    from autoresearch.states import ArtifactStatus

    rows = re.findall(r"^\| `([a-z_]+)` \| (.+?) \|", _cmd_agent_section(), re.M)
    assert [name for name, _ in rows] == list(placeholder("x", "t"))
    statuses = re.findall(r'"([a-z]+)"', dict(rows)["status"])
    assert statuses == list(ArtifactStatus)


def test_the_readme_cmd_agent_is_kept(tmp_path: Path) -> None:
    import sys

    from helpers import cli, make_repo

    (script,) = re.findall(r"```python\n(.*?)```", _cmd_agent_section(), re.S)
    repo = make_repo(tmp_path / "repo")
    repo.mission()
    agent = tmp_path / "my_agent.py"
    agent.write_text(script)
    done = cli("run", "missions/demo", "--agent", f"cmd:{sys.executable} {agent}",
               "--max-iterations", "1", "--json", cwd=repo.root)  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["counts"] == {"keep": 1} and summary["best_score"] == 2.0

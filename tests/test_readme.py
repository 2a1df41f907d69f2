"""Docs that cannot drift: every command and option README.md and the pages of docs/ show
exists, and their walkthroughs run as written."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

from autoresearch.cli import app
from docs_pages import README, ROOT, page, pages, section

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


def _shown() -> list[tuple[str, str]]:
    """Every code snippet of the docs, with the page that shows it."""
    return [
        (str(path.relative_to(ROOT)), snippet)
        for path in pages()
        for snippet in _code_snippets(path.read_text())
    ]


def invocations() -> list[tuple[str, list[str], list[str]]]:
    """(page, command path, flags) of each `autoresearch …` line the docs show."""
    found = []
    for where, snippet in _shown():
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
        found.append((where, path, flags))
    return found


def test_docs_commands_and_options_exist() -> None:
    seen = invocations()
    assert len(seen) > 10
    assert {where for where, _, _ in seen} >= {"README.md", "docs/supervisor.md"}
    for where, path, flags in seen:
        assert path, f"{where} names an autoresearch command that does not exist"
        command = _command(path)
        assert command is not None
        if isinstance(command, click.Group):
            continue
        unknown = set(flags) - _options(command)
        assert not unknown, f"{where}: `autoresearch {' '.join(path)}` has no {sorted(unknown)}"


def test_readme_quickstart_matches_dev_script() -> None:
    for text in (README.read_text(), page("getting-started.md")):
        assert "python3 dev.py demo" in text and "python3 dev.py test" in text
    ci = (ROOT / ".ci/run").read_text()
    assert "python3 dev.py test" in ci


def _all_options(command: click.Command) -> set[str]:
    opts = _options(command)
    if isinstance(command, click.Group):
        for sub in _subcommands(command).values():
            opts |= _all_options(sub)
    return opts


def test_every_flag_the_docs_show_exists() -> None:
    known = _all_options(app)
    foreign = (
        "codex", "claude", "aider", "git", "pip", "python3", "make", "sh ", "ray ", "mkdocs",
        "mlflow ",
    )  # fmt: skip
    for where, snippet in _shown():
        if snippet.startswith(foreign):
            continue
        for flag in re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", snippet):
            assert flag in known, f"{where} shows {flag!r} ({snippet!r}) but no command has it"


def _bash_blocks(text: str, heading: str) -> list[str]:
    return re.findall(r"```bash\n(.*?)```", section(text, heading), re.S)


def _shell_env() -> dict[str, str]:
    """`python3` and `autoresearch` resolve to this environment, as after `source
    .venv/bin/activate`."""
    from helpers import GIT_ENV

    return {**os.environ, **GIT_ENV, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}


def _run_as_written(block: str, cwd: Path) -> str:
    done = subprocess.run(
        ["bash", "-e", "-c", block], cwd=cwd, env=_shell_env(), capture_output=True, text=True
    )
    assert done.returncode == 0, block + done.stdout + done.stderr
    return done.stdout


def test_the_session_walkthrough_runs(tmp_path: Path) -> None:
    """The bash blocks of the sessions page's two phases, run as written in a fresh repository."""
    from helpers import make_repo

    repo = make_repo(tmp_path / "project")
    repo.write("tests/test_ok.py", "def test_ok():\n    assert True\n")
    repo.commit("a project with a test")
    sessions = page("experiments.md")
    (harness,) = _bash_blocks(sessions, "## Phase 1: the harness")
    (loop,) = _bash_blocks(sessions, "## Phase 2: the loop")
    for block in (harness, loop):
        _run_as_written(block, repo.root)
    report = json.loads(_run_as_written("autoresearch exp status --json", repo.root))
    assert report["counts"]["keep"] == 1
    assert report["baseline"]["run"] == 1 and report["baseline"]["metric"] >= 0


# the example missions' walkthroughs, run where the text says: in a clone of this repository
EXAMPLE_WALKTHROUGHS = [("README.md", "## An example"), ("docs/getting-started.md", "## Next")]


@pytest.mark.parametrize(("where", "heading"), EXAMPLE_WALKTHROUGHS)
def test_the_example_walkthroughs_run(tmp_path: Path, where: str, heading: str) -> None:
    from helpers import make_repo

    repo = make_repo(tmp_path / "clone")
    shutil.copytree(ROOT / "examples", repo.root / "examples")
    repo.commit("the example missions")
    (block,) = _bash_blocks((ROOT / where).read_text(), heading)
    _run_as_written(block, repo.root)
    (run,) = json.loads(_run_as_written("autoresearch status --json", repo.root))["runs"]
    assert run["status"] == "completed" and run["counts"].get("keep", 0) >= 1, run


def _cmd_agent_section() -> str:
    return section(page("agents.md"), "## Write a `cmd:` agent")


def test_the_cmd_agent_fields_are_the_contracts() -> None:
    from autoresearch.contracts.candidate import placeholder
    from autoresearch.states import ArtifactStatus

    rows = re.findall(r"^\| `([a-z_]+)` \| (.+?) \|", _cmd_agent_section(), re.M)
    assert [name for name, _ in rows] == list(placeholder("x", "t"))
    statuses = re.findall(r'"([a-z]+)"', dict(rows)["status"])
    assert statuses == list(ArtifactStatus)


def test_the_docs_cmd_agent_is_kept(tmp_path: Path) -> None:
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


def _blocks(language: str) -> list[tuple[str, str]]:
    """Every fenced block of `language` in the docs, with its page."""
    return [
        (str(path.relative_to(ROOT)), block)
        for path in pages()
        for block in re.findall(rf"```{language}\n(.*?)```", path.read_text(), re.S)
    ]


def _as_sandbox(block: str) -> str:
    """A whole sandbox.md as written, or a fragment of its frontmatter under a minimal one."""
    if block.startswith("---\n"):
        return block
    return f"---\nevaluator:\n  command: python3 eval.py\n  format: json\n{block}---\nbody\n"


def test_every_sandbox_snippet_of_the_docs_is_a_valid_contract() -> None:
    from autoresearch.contracts.sandbox import parse_sandbox, unknown_keys

    snippets = _blocks("yaml")
    assert len(snippets) >= 5
    for where, block in snippets:
        sandbox = parse_sandbox(_as_sandbox(block))
        assert not unknown_keys(sandbox.frontmatter), (where, unknown_keys(sandbox.frontmatter))


def test_every_json_snippet_of_the_docs_parses() -> None:
    snippets = _blocks("json")
    assert len(snippets) >= 3
    for where, block in snippets:
        try:
            json.loads(block)
        except json.JSONDecodeError as exc:
            raise AssertionError(f"{where}: {exc}\n{block}") from exc


def test_the_readme_shows_the_example_mission_as_it_is() -> None:
    (shown,) = re.findall(r"```yaml\n(.*?)```", section(README.read_text(), "## An example"), re.S)
    assert shown == (ROOT / "examples/sort-comparisons/sandbox.md").read_text()


def test_every_toml_snippet_of_the_docs_parses() -> None:
    import tomllib

    snippets = _blocks("toml")
    assert len(snippets) >= 4
    for where, block in snippets:
        try:
            tomllib.loads(block)
        except tomllib.TOMLDecodeError as exc:
            raise AssertionError(f"{where}: {exc}\n{block}") from exc

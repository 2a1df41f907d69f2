"""An agent back-end is a plugin: a distribution pip installs into a virtual environment,
with no edit of autoresearch, is an `--agent` of `autoresearch run` there; one whose module
fails to import is one line naming it, exit 2, never a traceback.

The distributions are wheels built here (pip installs them offline: building one from a
source folder would need the `wheel` package, which the environment need not have); the
virtual environment sees the test interpreter's packages, autoresearch's included.
"""

from __future__ import annotations

import ast
import base64
import hashlib
import json
import os
import re
import site
import subprocess
import sys
import textwrap
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from docs_pages import page, section
from helpers import GIT_ENV, Repo, make_repo

# Each session adds 1 to value.txt, commits and writes the artifact, as a coding agent would.
SCRIBE = textwrap.dedent(
    '''\
    """A throwaway agent back-end for autoresearch's plugin test."""

    import json
    import subprocess

    from autoresearch.agents.base import AgentResult, Backend


    class Scribe:
        name = "scribe"
        artifact_from_git = False

        def run(self, request, should_cancel, on_spawn):
            path = request.worktree / "value.txt"
            value = float(path.read_text()) + 1
            path.write_text(f"{value:g}\\n")
            git = ["git", "-C", str(request.worktree)]
            subprocess.run([*git, "commit", "-qam", f"raise to {value:g}"], check=True)
            head = subprocess.run(
                [*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True
            ).stdout.strip()
            request.candidate_file.write_text(json.dumps({
                "status": "candidate", "candidate_commit": head,
                "base_commit": request.base_commit, "description": f"raise to {value:g}",
                "notes": [], "created_at": "2026-12-06T00:00:00Z",
            }))
            return AgentResult(agent=self.name, exit_code=0, duration_ms=1)


    BACKEND = Backend(make=lambda config: Scribe())
    '''
)
BROKEN = "raise RuntimeError('the plugin has a bug')\n"
# a back-end that refuses every mission before a run is prepared
PICKY = textwrap.dedent(
    """\
    from autoresearch.agents.base import Backend
    from autoresearch.errors import ContractError


    def refuse(sandbox):
        raise ContractError(f"picky refuses a mission evaluated by {sandbox.evaluator.command}")


    BACKEND = Backend(make=lambda config: None, check_mission=refuse)
    """
)
AGENTS = "autoresearch.agents"


@dataclass(frozen=True)
class Dist:
    """A one-module distribution registering one agent back-end."""

    name: str
    module: str
    source: str
    agent: str  # the entry point's name: what `--agent` takes

    def wheel(self, folder: Path) -> Path:
        """The distribution as a wheel in `folder` (the format pip installs)."""
        info = f"{self.name.replace('-', '_')}-1.0.dist-info"
        files = {
            f"{self.module}.py": self.source,
            f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {self.name}\nVersion: 1.0\n",
            f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
            "Tag: py3-none-any\n",
            f"{info}/entry_points.txt": (f"[{AGENTS}]\n{self.agent} = {self.module}:BACKEND\n"),
        }
        record = [
            f"{path},sha256={_digest(text)},{len(text.encode())}" for path, text in files.items()
        ]
        files[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,"]) + "\n"
        path = folder / f"{self.name.replace('-', '_')}-1.0-py3-none-any.whl"
        with zipfile.ZipFile(path, "w") as archive:
            for name, text in files.items():
                archive.writestr(name, text)
        return path


def _digest(text: str) -> str:
    raw = hashlib.sha256(text.encode()).digest()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def readme_plugin() -> Dist:
    """The docs' example back-end (docs/agents.md) and its pyproject.toml line."""
    text = section(page("agents.md"), "## Add a back-end as a plugin")
    (source,) = re.findall(r"```python\n(.*?)```", text, re.S)
    (toml,) = re.findall(r"```toml\n(.*?)```", text, re.S)
    ((agent, target),) = tomllib.loads(toml)["project"]["entry-points"][AGENTS].items()
    module, attribute = target.split(":")
    assert attribute == "BACKEND"
    return Dist("my-agent", module, source, agent)


PLUGINS = (
    Dist("throwaway-scribe", "throwaway_scribe", SCRIBE, "scribe"),
    Dist("throwaway-broken", "throwaway_broken", BROKEN, "broken"),
    Dist("throwaway-odd", "throwaway_odd", "BACKEND = 42\n", "odd"),
    Dist("throwaway-picky", "throwaway_picky", PICKY, "picky"),
    readme_plugin(),
)


@pytest.fixture(scope="module")
def python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new virtual environment's interpreter with the plugins installed by pip."""
    root = tmp_path_factory.mktemp("plugin-venv")
    venv = root / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", venv],
        check=True,
    )
    interpreter = venv / "bin" / "python"
    purelib = subprocess.run(
        [interpreter, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    # on top of a venv, --system-site-packages sees the base interpreter's packages, not the
    # test's: name the test interpreter's folders (their .pth files too: editable installs)
    parents = "".join(f"site.addsitedir({folder!r}); " for folder in site.getsitepackages())
    Path(purelib, "test-parent.pth").write_text(f"import site; {parents}\n")
    wheels = [dist.wheel(root) for dist in PLUGINS]
    subprocess.run(
        [interpreter, "-m", "pip", "--isolated", "--disable-pip-version-check", "install",
         "-q", "--no-index", "--no-deps", *wheels],
        check=True,
    )  # fmt: skip
    return interpreter


def autoresearch(python: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(
        [python, "-m", "autoresearch", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_an_installed_plugin_runs_as_an_agent(python: Path, tmp_path: Path) -> None:
    repo: Repo = make_repo(tmp_path / "repo")
    repo.mission()
    done = autoresearch(
        python, "run", "missions/demo", "--agent", "scribe", "--run-tag", "T1",
        "--max-iterations", "1", "--json", cwd=repo.root,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert (summary["status"], summary["best_score"]) == ("completed", 2.0)
    status = autoresearch(python, "status", "missions-demo-t1", "--json", cwd=repo.root)
    its = json.loads(status.stdout)["iterations"]
    assert [it["decision"] for it in its] == ["baseline", "keep"]
    assert its[1]["agent"]["agent"] == "scribe"


def test_the_plugins_are_named_by_help_and_by_the_unknown_agent_message(
    python: Path, tmp_path: Path
) -> None:
    agents = (
        "aider, broken, claude, codex, mine, odd, offline, picky, scribe or cmd:<shell command>"
    )
    shown = autoresearch(python, "run", "--help", cwd=tmp_path)
    assert " ".join(agents.replace(", ", " | ").replace(" or ", " | ").split()) in " ".join(
        shown.stdout.split()
    )
    repo = make_repo(tmp_path / "repo")
    repo.mission()
    done = autoresearch(python, "run", "missions/demo", "--agent", "gpt", cwd=repo.root)
    assert (done.returncode, done.stderr) == (
        2, f"autoresearch: unknown agent 'gpt': use {agents}\n",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("agent", "message"),
    [
        ("broken", "plugin 'broken' (throwaway_broken:BACKEND from throwaway-broken) failed to "
                   "load: RuntimeError: the plugin has a bug"),
        ("odd", "plugin 'odd' (throwaway_odd:BACKEND from throwaway-odd) is no agent back-end "
                "(an autoresearch.agents.base.Backend): it names a value of type int"),
        ("picky", "picky refuses a mission evaluated by python3 scripts/eval.py"),
    ],
)  # fmt: skip
def test_a_plugin_that_cannot_load_or_refuses_the_mission_is_one_line(
    python: Path, tmp_path: Path, agent: str, message: str
) -> None:
    repo = make_repo(tmp_path / "repo")
    repo.mission()
    done = autoresearch(python, "run", "missions/demo", "--agent", agent, cwd=repo.root)
    assert (done.returncode, done.stderr) == (2, f"autoresearch: {message}\n")
    assert not (repo.root / ".autoresearch" / "worktrees").exists()  # refused before prepare


def test_starting_the_cli_imports_no_metadata_and_help_no_back_end() -> None:
    """`import autoresearch.cli` reads no package metadata; `run --help` reads it (to name the
    back-ends) but imports none of them: a slow or broken plugin never slows or breaks help."""
    probe = textwrap.dedent(
        """\
        import sys
        import autoresearch.cli
        print("importlib.metadata" in sys.modules)
        autoresearch.cli.app.main(["run", "--help"], standalone_mode=False)
        print(sorted(m for m in sys.modules if m.startswith("autoresearch.agents.")))
        """
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    lines = done.stdout.splitlines()
    imported = set(ast.literal_eval(lines[-1]))
    assert lines[0] == "False" and imported <= {"autoresearch.agents.base"}


def test_the_readme_plugin_loads_and_needs_its_program(python: Path, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    repo.mission()
    done = subprocess.run(
        [python, "-m", "autoresearch", "run", "missions/demo", "--agent", "mine"],
        cwd=repo.root, env={**os.environ, **GIT_ENV, "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (
        2, "autoresearch: agent mine is not installed: no 'mine' executable on PATH (/usr/bin:/bin)\n",
    )  # fmt: skip

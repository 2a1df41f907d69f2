from __future__ import annotations

import atexit
import compileall
import os
import shlex
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import autoresearch
from autoresearch.settings import ENV_REPORT_PLOT
from cpu_times import pytest_runtest_protocol  # noqa: F401 - a hook: each test's CPU, opt-in
from helpers import GIT_ENV, Repo, make_repo


@pytest.fixture(autouse=True)
def _hermetic_env(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[None]:
    if request.node.get_closest_marker("plot"):  # pytest_configure left the plot out
        monkeypatch.delenv(ENV_REPORT_PLOT)
    # Short kill grace keeps timeout tests fast; no user git config leaks in.
    monkeypatch.setenv("AUTORESEARCH_KILL_GRACE_SECONDS", "0.5")
    # and a short wait before a child a kill signal ended is reported (proc.py)
    monkeypatch.setenv("AUTORESEARCH_SIGNAL_SETTLE_SECONDS", "0.5")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    # the journal's records outside the repository (settings.state_home) land here, never in
    # the real user's state directory
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    yield


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return make_repo(tmp_path / "repo")


@pytest.fixture
def mission_dir(repo: Repo) -> Path:
    return repo.mission()


def pytest_configure(config: pytest.Config) -> None:
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    # ...for the children only: while it collects, pytest caches the test modules it rewrites
    # for their asserts (tests/__pycache__), else each xdist worker rewrites ~300 files a run
    # (~5 s of CPU); the tests then run as before, writing no bytecode
    sys.dont_write_bytecode = False
    # module- and session-scoped fixtures run before _hermetic_env: their journals' outside
    # records go to a temp folder too, never to the real user's state directory
    state = tempfile.mkdtemp(prefix="autoresearch-test-state-")
    os.environ["XDG_STATE_HOME"] = state
    atexit.register(shutil.rmtree, state, ignore_errors=True)
    # every report the tests' runs write leaves its plot out (~1 s of CPU each: matplotlib's
    # import and the drawing, ~40 % of a file of CLI runs); the tests marked `plot` draw it,
    # all with one font cache (a fresh HOME would build matplotlib's anew, ~0.15 s each)
    os.environ[ENV_REPORT_PLOT] = "0"
    os.environ.setdefault("MPLCONFIGDIR", os.path.join(state, "matplotlib"))
    if not hasattr(config, "workerinput"):  # once, in the process that starts xdist's workers
        _compile_the_package()
        _tests_python_first_on_path(Path(state))


def _tests_python_first_on_path(scratch: Path) -> None:
    """Put `python3` and `python` first on PATH as this interpreter (the xdist workers and every
    child inherit it), for the thousands of evaluators and fake agents the tests start
    (`python3 scripts/eval.py`). Where PATH found pyenv's shim, a bash script that runs `pyenv
    exec`, each call cost ~65 ms more CPU and 0.1-0.5 s more wall; the interpreter it stood
    for then imported a site-packages' .pth hook (certifi) costing ~30 ms more than this one:
    ~0.11 s of CPU a call against ~0.015 (measured under load). The tests' Python is the one
    they mean: test_readme puts it first on PATH likewise."""
    folder = scratch / "python-bin"
    folder.mkdir()
    for name in ("python3", "python"):
        # the box shows this folder (a PATH entry under /tmp) and the venv the tests run from
        # (confine._own_venv: a clone's .venv under /tmp too); an interpreter it still hid
        # would fall back to the python3 PATH found before, as without this folder
        before = shutil.which(name) or "/usr/bin/python3"
        mine, theirs = shlex.quote(sys.executable), shlex.quote(before)
        script = folder / name
        script.write_text(f'#!/bin/sh\n[ -x {mine} ] && exec {mine} "$@"\nexec {theirs} "$@"\n')
        script.chmod(0o755)
    os.environ["PATH"] = f"{folder}{os.pathsep}{os.environ['PATH']}"


def _compile_the_package() -> None:
    """Compile autoresearch's modules once, before the tests: under PYTHONDONTWRITEBYTECODE no
    `autoresearch` child a test starts writes what it compiles, so without this each compiled
    every module it imports anew (~0.3 s of CPU for `status`, hundreds of children a suite)."""
    compileall.compile_dir(Path(autoresearch.__file__).parent, quiet=2)


def pytest_collection_finish(session: pytest.Session) -> None:
    sys.dont_write_bytecode = True  # a module a test imports from its tmp repository: no cache


@pytest.hookimpl(optionalhook=True)  # an xdist hook, in the process that starts the workers
def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    """Say once how many tests the run selected (`-q` under xdist says it nowhere else)."""
    config: pytest.Config = node.config
    if not config.stash.get(_SELECTION_SAID, False):
        config.stash[_SELECTION_SAID] = True
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        marks = config.option.markexpr
        reporter.write_line(f"{len(ids)} tests selected" + (f" by -m {marks!r}" if marks else ""))


_SELECTION_SAID = pytest.StashKey[bool]()


@pytest.fixture
def open_umask() -> Iterator[None]:
    """umask 000 for this process and every child it starts (file-mode tests), restored after."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark `unit` every test that asks for no fixture of its own (parameters aside) and gets
    none from its module (an autouse one): with no tmp_path, repository or run to build, it
    exercises code, not the machine. `python3 dev.py test --quick` runs only these
    (docs/development.md: how long each selection takes)."""
    unit = pytest.mark.unit
    for item in items:
        params = set(getattr(getattr(item, "callspec", None), "params", {}))
        own = set(getattr(getattr(item, "_fixtureinfo", None), "argnames", ())) - params
        machine = item.get_closest_marker("bench") is not None  # a bench spawns its own runs
        if not own and not machine and set(getattr(item, "fixturenames", ())) - params <= AMBIENT:
            item.add_marker(unit)


# what every test gets: _hermetic_env above and the fixtures it uses
AMBIENT = {"_hermetic_env", "monkeypatch", "request", "tmp_path", "tmp_path_factory"}

"""The lean install: the wheel of the project, installed into a fresh venv beside nothing but
the distributions its core and `report` extra require, runs the demo; the core needs neither MCP
nor Ray; and dev.py's one .venv serves the demo from a dev install and upgrades a demo install
for the tests.

Offline by design: the wheel is built without build isolation (setuptools from the dev extra),
and the fresh venv gets its dependencies as links to the test venv's installed copies, found by
walking the wheel's own Requires-Dist – so a dependency missing from pyproject.toml fails here."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tomllib
import venv
import zipfile
from importlib import metadata
from pathlib import Path
from types import ModuleType

import pytest
from packaging.requirements import Requirement

from docs_pages import pages

ROOT = Path(__file__).resolve().parent.parent
DIST = "autoresearch-loop"
CORE = {"click", "pyyaml", "rich"}
# what the wheel is built from (a copy: an in-place build would leave build/ in the checkout)
SOURCES = ("pyproject.toml", "README.md", "src")


def _dev_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("dev_script", ROOT / "dev.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("stamp", "key", "served"),
    [
        ("dev abc", "report abc", True),     # a dev .venv runs the demo as it is
        ("report abc", "report abc", True),
        ("report abc", "dev abc", False),    # the tests upgrade a demo .venv
        ("dev abc", "dev abc", True),
        ("dev abc", "dev def", False),       # pyproject.toml changed
        ("abc", "report abc", False),        # the stamp of a dev.py before extras
        ("", "report abc", False),
    ],
)  # fmt: skip
def test_an_install_serves_a_task_that_needs_no_larger_extra(
    stamp: str, key: str, served: bool
) -> None:
    assert _dev_script().covers(stamp, key) is served


def test_the_core_requires_only_click_pyyaml_and_rich() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["name"] == DIST
    assert {Requirement(r).name.lower() for r in project["dependencies"]} == CORE
    extras = project["optional-dependencies"]
    assert [Requirement(r).name for r in extras["report"]] == ["matplotlib"]
    for extra in ("mcp", "ray", "worker", "report", "docs", "trackers"):
        assert {Requirement(r).name for r in extras[extra]} <= {
            Requirement(r).name for r in extras["dev"]
        }, f"the dev extra lacks {extra}'s"


@pytest.mark.plot
def test_the_wheel_runs_the_demo_in_a_fresh_venv_with_only_core_and_report(
    tmp_path: Path,
) -> None:
    wheel = _build_wheel(tmp_path)
    python = _fresh_venv(tmp_path / "venv")
    _pip(python, "install", "--no-deps", "--no-index", str(wheel))
    site = Path(
        _output([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"])
    )
    linked = _link_requirements(_wheel_requirements(wheel, "report"), site)
    assert CORE | {"matplotlib"} <= linked and not {"mcp", "ray", "playwright"} & linked
    _pip(python, "check")  # every requirement of every installed distribution is met
    _output([str(python), "-c", _NO_OPTIONAL_IMPORTS])
    demo = tmp_path / "demo"
    done = subprocess.run(
        [str(python.parent / "autoresearch"), "demo", str(demo), "--iterations", "2"],
        capture_output=True, text=True, env=_clean_env(), timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "completed (max iterations reached (2))" in done.stdout
    # the report's plot: matplotlib, from the report extra, works in the lean venv
    assert list(demo.glob(".autoresearch/runs/*/report/progress.png")), done.stdout


# `import autoresearch.cli` with neither MCP nor Ray importable: the core does not need them
_NO_OPTIONAL_IMPORTS = (
    "import importlib.util, autoresearch.cli; "
    "present = [m for m in ('mcp', 'ray') if importlib.util.find_spec(m) is not None]; "
    "assert not present, present"
)


def _build_wheel(tmp_path: Path) -> Path:
    source = tmp_path / "source"
    source.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            skip = shutil.ignore_patterns("__pycache__", "*.egg-info")
            shutil.copytree(ROOT / name, source / name, ignore=skip)
        else:
            shutil.copy2(ROOT / name, source / name)
    out = tmp_path / "wheels"
    _pip(
        Path(sys.executable), "wheel", "--no-deps", "--no-build-isolation", "--no-index",
        "--wheel-dir", str(out), str(source),
    )  # fmt: skip
    (wheel,) = out.glob("autoresearch_loop-*.whl")
    return wheel


def _fresh_venv(path: Path) -> Path:
    """A venv with no pip of its own (the test venv's pip installs into it: no ensurepip)."""
    venv.EnvBuilder(with_pip=False, symlinks=os.name != "nt").create(path)
    return path / ("Scripts" if os.name == "nt" else "bin") / "python"


def _pip(python: Path, *args: str) -> None:
    """This interpreter's pip, acting on `python`'s environment (and in this one's own, as it
    is, for the build: setuptools from the test venv)."""
    if python == Path(sys.executable):
        _output([sys.executable, "-m", "pip", *args], env=dict(os.environ))
    else:
        _output([sys.executable, "-m", "pip", "--python", str(python), *args])


def _output(argv: list[str], env: dict[str, str] | None = None) -> str:
    env = _clean_env() if env is None else env
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, f"{argv}: {done.stdout}{done.stderr}"
    return done.stdout.strip()


def _clean_env() -> dict[str, str]:
    """This environment without a PYTHONPATH that would let the test venv's packages in."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}


def _wheel_requirements(wheel: Path, extra: str) -> list[Requirement]:
    """The wheel's Requires-Dist that apply to its core and `extra`."""
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        lines = archive.read(name).decode().splitlines()
    wanted = [
        Requirement(line.split(":", 1)[1]) for line in lines if line.startswith("Requires-Dist:")
    ]
    return [r for r in wanted if r.marker is None or r.marker.evaluate({"extra": extra})]


def _link_requirements(requirements: list[Requirement], site: Path) -> set[str]:
    """Link into `site` each required distribution, and what it requires in turn, from this
    interpreter's installed copies; the names linked."""
    linked: set[str] = set()
    pending = list(requirements)
    while pending:
        requirement = pending.pop()
        name = requirement.name.lower().replace("_", "-")
        if name in linked:
            continue
        linked.add(name)
        dist = metadata.distribution(requirement.name)
        _link_distribution(dist, site)
        for line in dist.requires or []:
            nested = Requirement(line)
            if nested.marker is None or nested.marker.evaluate({"extra": ""}):
                pending.append(nested)
    return linked


def _link_distribution(dist: metadata.Distribution, site: Path) -> None:
    """Each top-level file and folder the distribution installed (its dist-info too)."""
    tops = {Path(file).parts[0] for file in dist.files or []}
    for top in tops - {"..", "__pycache__"}:
        target = site / top
        if not target.exists():
            target.symlink_to(Path(str(dist.locate_file(top))))


def test_every_readme_install_line_names_this_distribution_and_its_extras() -> None:
    """`pip install` in the docs names the clone (`.`) or the distribution, with extras
    pyproject.toml defines (the old `autoresearch[ray]` named a project that is not ours)."""
    extras = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    )
    docs = "\n".join(path.read_text() for path in pages())
    lines = re.findall(r"pip install '([^']+)'", docs)
    assert lines
    for target in lines:
        name, _, wanted = target.partition("[")
        assert name in (".", DIST), target
        assert set(wanted.rstrip("]").split(",")) <= extras, target

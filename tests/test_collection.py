"""The suite collects the same under every way of starting pytest: `.venv/bin/pytest` puts
only tests/ on sys.path (the rootdir conftest's folder), `python -m pytest` also the current
folder. A test that imports the `tests` package (`from tests.helpers import …`) therefore
collected under one and failed under the other, and would load helpers twice (two module
objects, two states). Tests import their helpers by module name (`from helpers import …`)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def _imports_of_the_tests_package(source: str) -> list[int]:
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        if any(name == "tests" or name.startswith("tests.") for name in names):
            lines.append(node.lineno)
    return lines


def test_the_rule_finds_an_import_of_the_tests_package() -> None:
    assert _imports_of_the_tests_package("from tests.helpers import cli\n") == [1]
    assert _imports_of_the_tests_package("import os\nimport tests.helpers\n") == [2]
    assert _imports_of_the_tests_package("from helpers import cli\nimport testsuite\n") == []


def test_no_test_imports_the_tests_package() -> None:
    found = {
        str(path.relative_to(TESTS)): lines
        for path in sorted(TESTS.rglob("*.py"))
        if (lines := _imports_of_the_tests_package(path.read_text()))
    }
    assert not found, f"import helpers by module name (from helpers import …): {found}"


def test_a_run_says_how_many_tests_it_selected_and_a_bench_is_never_unit(tmp_path: Path) -> None:
    """`dev.py test --quick` (-m unit) prints its selection's size; the bench smoke tests, which
    ask for no fixture but start whole runs, are not in it (tests/conftest.py)."""
    # --basetemp: a pytest of its own would number a new folder under the user's pytest temp and
    # delete the fourth newest there, a whole earlier suite's (~20 s of this test's wall)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "1", "-q", "-p", "no:cacheprovider", "-m", "unit",
         "--basetemp", str(tmp_path / "inner"),
         "tests/test_bench_smoke.py", "tests/test_collection.py::test_the_rule_finds_an_import_of_the_tests_package"],
        cwd=TESTS.parent, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 tests selected by -m 'unit'" in done.stdout.splitlines(), done.stdout

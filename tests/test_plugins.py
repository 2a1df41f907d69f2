"""plugins: entry points found from real distribution metadata on sys.path; a plugin that
fails to import is one line naming it, where it points and who installed it."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from autoresearch import plugins
from autoresearch.errors import ContractError

GROUP = "autoresearch.test-plugins"


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Path]:
    """A folder on sys.path holding one distribution with two entry points of GROUP."""
    dist = tmp_path / "throwaway_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: throwaway-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        f"[{GROUP}]\ngood = throwaway_good:VALUE\nbroken = throwaway_broken:VALUE\n"
    )
    (tmp_path / "throwaway_good.py").write_text("VALUE = 42\n")
    (tmp_path / "throwaway_broken.py").write_text("import no_such_module_anywhere\n")
    sys.path.insert(0, str(tmp_path))
    try:
        yield tmp_path
    finally:
        sys.path.remove(str(tmp_path))
        for name in ("throwaway_good", "throwaway_broken"):
            sys.modules.pop(name, None)


def test_discovery_reads_names_without_importing(site: Path) -> None:
    found = plugins.discover(GROUP)
    assert sorted(found) == ["broken", "good"]
    assert found["good"].target == "throwaway_good:VALUE"
    assert found["good"].distribution == "throwaway-plugin"
    assert "throwaway_broken" not in sys.modules


def test_a_plugin_loads_its_object(site: Path) -> None:
    assert plugins.load(plugins.discover(GROUP)["good"]) == 42


def test_a_plugin_that_fails_to_import_is_one_line(site: Path) -> None:
    with pytest.raises(ContractError) as caught:
        plugins.load(plugins.discover(GROUP)["broken"])
    message = str(caught.value)
    assert "\n" not in message
    assert message == (
        "plugin 'broken' (throwaway_broken:VALUE from throwaway-plugin) failed to load: "
        "ModuleNotFoundError: No module named 'no_such_module_anywhere'"
    )


def test_an_unknown_group_has_no_plugins() -> None:
    assert plugins.discover("autoresearch.no-such-group") == {}

"""The documentation site builds with every link and anchor resolved, its command reference is
what `--help` prints, and the README stays an entry page that points into it."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from docs_pages import DOCS, GENERATED, README, ROOT, pages

MKDOCS = importlib.util.find_spec("mkdocs") is not None and (
    importlib.util.find_spec("material") is not None
)
# under CI the docs extra is installed (it is part of dev): a missing mkdocs is a failure there
needs_mkdocs = pytest.mark.skipif(
    not MKDOCS and os.environ.get("CI") != "true",
    reason="mkdocs-material is not installed (pip install '.[docs]')",
)


def _build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )  # fmt: skip


def _copy_of_the_site(folder: Path) -> Path:
    shutil.copytree(DOCS, folder / "docs")
    (folder / "tools").mkdir()
    shutil.copy(ROOT / "tools/mkdocs_hooks.py", folder / "tools")
    return Path(shutil.copy(ROOT / "mkdocs.yml", folder / "mkdocs.yml"))


@needs_mkdocs
def test_the_site_builds_strictly(tmp_path: Path) -> None:
    done = _build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "site/reference/commands/index.html").exists()
    assert not (tmp_path / "site/incoming").exists()  # notes for the lead are no page
    # a table's `a\|b` (escaped for GitHub) is shown as a|b, as GitHub shows it
    escaped = [
        str(html.relative_to(tmp_path))
        for html in (tmp_path / "site").rglob("*.html")
        if re.search(r"<code>[^<]*\\\|", html.read_text())
    ]
    assert not escaped, escaped
    # a page fetches nothing from elsewhere (Material's default fonts come from Google)
    fetching = [
        str(html.relative_to(tmp_path))
        for html in (tmp_path / "site").rglob("*.html")
        if re.search(r"<(?:script|link|img)[^>]+(?:src|href)=\"(?:https?:)?//", html.read_text())
    ]
    assert not fetching, fetching


@needs_mkdocs
@pytest.mark.parametrize(
    ("link", "complaint"),
    [
        ("[lanes](supervisor.md#no-such-heading)", "no-such-heading"),
        ("[gone](no-such-page.md)", "no-such-page.md"),
    ],
)
def test_a_broken_link_or_anchor_fails_the_build(tmp_path: Path, link: str, complaint: str) -> None:
    config = _copy_of_the_site(tmp_path)
    index = tmp_path / "docs/index.md"
    index.write_text(index.read_text() + f"\nSee {link}.\n")
    done = _build(config, tmp_path / "site")
    assert done.returncode != 0 and complaint in done.stderr, done.stderr


def _command_reference() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "command_reference", ROOT / "tools/command_reference.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_command_reference_is_what_help_prints() -> None:
    reference = _command_reference()
    assert GENERATED.read_text() == reference.render(), (
        f"docs/reference/commands.md differs from --help: run `{reference.REGENERATE}`"
    )


def test_the_command_reference_covers_every_command() -> None:
    titles = re.findall(r"^## (autoresearch.*)$", GENERATED.read_text(), re.M)
    assert {"autoresearch", "autoresearch run", "autoresearch exp log", "autoresearch job start",
            "autoresearch exp hooks install", "autoresearch worker stats"} <= set(titles)  # fmt: skip


def test_the_readme_is_an_entry_page_whose_links_resolve() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= 250
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    local = [link for link in links if "://" not in link]
    assert {"docs/index.md", "docs/reference/commands.md"} <= set(local)
    missing = [link for link in local if not (ROOT / link).exists()]
    assert not missing, f"README links to files that do not exist: {missing}"


_LIST_ITEM = re.compile(r"(\* |- |\d+\. )")


def _lists_glued_to_a_paragraph(text: str) -> list[str]:
    """List items that follow a paragraph's line with no blank line between: GitHub shows a
    list, Python-Markdown (the site) one run-on paragraph with the asterisks in it."""
    glued, fenced, previous, in_list = [], False, "", False
    for line in text.splitlines():
        fenced ^= line.startswith("```")
        item = not fenced and _LIST_ITEM.match(line) is not None
        if item and previous.strip() and not in_list:
            glued.append(line)
        # an item's continuation lines belong to it until a blank line
        in_list = (in_list or item) and bool(line.strip())
        previous = "" if fenced else line
    return glued


def test_every_list_is_set_off_from_its_paragraph() -> None:
    for path in pages()[1:]:  # the site's pages (GitHub shows the README either way)
        glued = _lists_glued_to_a_paragraph(path.read_text())
        assert not glued, f"{path.relative_to(ROOT)}: a blank line before {glued[0]!r}"


@needs_mkdocs
def test_a_note_in_docs_incoming_is_neither_built_nor_checked(tmp_path: Path) -> None:
    """Other engineers hand in notes there for the lead to fold in: they break no build."""
    config = _copy_of_the_site(tmp_path)
    (tmp_path / "docs/incoming").mkdir(exist_ok=True)
    (tmp_path / "docs/incoming/someone.md").write_text("# A note\n\nSee [x](nowhere.md#gone).\n")
    done = _build(config, tmp_path / "site")
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "site/incoming").exists()

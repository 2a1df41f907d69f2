"""One slug rule (`paths.slug`) for mission slugs and session branches; a run keeps the id it
was given, whatever rule made it."""

from __future__ import annotations

import json
import re
import unicodedata

import pytest

from autoresearch.contracts import sandbox
from autoresearch.contracts.sandbox import mission_slug
from autoresearch.experiments.params import session_branch
from autoresearch.paths import slug
from autoresearch.supervisor.prepare import prepare
from helpers import Repo, artifact, cli, git, write_artifact


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("missions/demo", "missions-demo"),  # supervisor.md §1's examples
        ("Missions/My Demo Mission", "missions-my-demo-mission"),
        ("Speed up parser", "speed-up-parser"),
        ("  --Hello,   World!!  ", "hello-world"),
        ("--a__b--", "a-b"),
        ("missions/Café", "missions-caf"),  # supervisor.md §1: every other character is `-`
        ("Ünïcode nämes", "n-code-n-mes"),
        ("ÄÖÜ", "fb"),
        ("Straße 日本", "stra-e"),
        ("ﬁle", "le"),  # no folding of any kind
        ("x" * 60, "x" * 48),
        ("a" * 47 + " b", "a" * 47),  # cut at 48, then no trailing `-`
        ("x" * 47 + "-yz", "x" * 47),
        ("日本", "fb"),
        ("!!!", "fb"),
        ("", "fb"),
    ],
)
def test_slug(text: str, expected: str) -> None:
    assert slug(text, "fb") == expected
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*|fb", expected)


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("x" * 60, 40, "x" * 40),
        ("a" * 39 + " b", 40, "a" * 39),  # the same rule at another length: no trailing `-`
        ("ab", 40, "ab"),
        ("!!!", 40, "fb"),
    ],
)
def test_slug_at_another_length(text: str, limit: int, expected: str) -> None:
    assert slug(text, "fb", limit) == expected


@pytest.mark.parametrize(
    ("text", "mission", "branch"),
    [
        ("missions/demo", "missions-demo", "autoresearch/missions-demo-20261201"),
        ("missions/Café", "missions-caf", "autoresearch/missions-caf-20261201"),
        ("???", "mission", "autoresearch/session-20261201"),
    ],
)
def test_both_halves_use_the_one_rule(text: str, mission: str, branch: str) -> None:
    assert mission_slug(text, "root") == mission
    assert session_branch(text, "20261201", []) == branch
    assert mission_slug(".", "Café Repo") == "caf-repo"


def _legacy_slug(text: str, fallback: str) -> str:
    """A rule some builds used, with accents folded (`Café` → `cafe`)."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    out = re.sub(r"[^a-z0-9]+", "-", folded.lower()).strip("-")
    return out[:48].rstrip("-") or fallback


def test_a_run_made_by_the_old_rule_keeps_its_id_folder_and_branch(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run ids, worktrees and branches are read from the journal, never recomputed from the
    mission folder: an upgrade that changes the slug rule orphans no run."""
    mission_dir = repo.mission("missions/Café")
    with monkeypatch.context() as old_version:
        old_version.setattr(sandbox, "slug", _legacy_slug)
        prepare(mission_dir, run_tag="T1").close()
    run_id = "missions-cafe-t1"
    state = repo.root / ".autoresearch"
    worktree = state / "worktrees" / run_id
    assert (state / "runs" / run_id).is_dir() and worktree.is_dir()
    assert mission_slug("missions/Café", "r") == "missions-caf"  # the rule has changed

    (worktree / "value.txt").write_text("4\n")
    git(worktree, "commit", "-qam", "four")
    candidate = state / "runs" / run_id / "candidate.json"
    base = git(worktree, "rev-parse", "HEAD~1")
    write_artifact(candidate, artifact(candidate_commit=git(worktree, "rev-parse", "HEAD"),
                                       base_commit=base, description="four"))  # fmt: skip
    done = cli("step", run_id, "--json", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["decision"] == "keep"
    listing = json.loads(cli("status", "--json", cwd=repo.root).stdout)
    [row] = listing["runs"]
    assert (row["run_id"], row["mission_slug"]) == (run_id, "missions-cafe")
    assert row["worktree_path"] == str(worktree)
    assert row["branch_name"] == "autoresearch/missions-cafe/t1"
    assert git(worktree, "rev-parse", "--abbrev-ref", "HEAD") == "autoresearch/missions-cafe/t1"
    made = [p.name for p in (state / "runs").iterdir()] + [
        p.name for p in (state / "worktrees").iterdir()
    ]
    assert not [name for name in made if name.startswith("missions-caf-")], made

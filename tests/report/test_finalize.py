"""finalize on real repositories: disjoint keeps become independent branches, overlapping ones
stay together, every branch merges cleanly into the start point, nothing else moves."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from report_helpers import drive

from autoresearch.errors import RefusedError
from autoresearch.paths import slug
from autoresearch.supervisor.prepare import prepare
from autoresearch.supervisor.review import Keep, finalize, group_keeps, topic
from helpers import Repo, cli, git, sandbox_text

SUM = (
    "import json, os\n"
    "total = sum(float(open(n).read()) for n in ('a.txt', 'b.txt', 'c.txt', 'd.txt')"
    " if os.path.exists(n))\n"
    "print(json.dumps({'pass': True, 'score': total}))\n"
)
# a: 1 then 3 (overlap) · b: 2 · c: a discard, then 5 and 6, where 6 also adds d (c+d together)
PLAN = [
    ({"a.txt": "1\n"}, "a to 1"),
    ({"b.txt": "2\n"}, "b to 2"),
    ({"a.txt": "2\n"}, "a to 2"),
    ({"c.txt": "-5\n"}, "c to -5 (worse)"),
    ({"c.txt": "3\n"}, "c to 3"),
    ({"c.txt": "4\n", "d.txt": "1\n"}, "c to 4 and d to 1"),
]
RUN = "missions-sum-t"
PREFIX = f"autoresearch-review/{RUN}"


@pytest.fixture
def summed(repo: Repo) -> Repo:
    repo.write("scripts/sum.py", SUM)
    repo.mission("missions/sum", sandbox=sandbox_text(command="python3 scripts/sum.py"))
    with prepare(repo.root / "missions/sum", run_tag="T") as h:
        results = drive(h, PLAN)
    assert [r.decision for r in results] == ["keep", "keep", "keep", "discard", "keep", "keep"]
    return repo


def _files_at(repo: Repo, ref: str) -> dict[str, str]:
    names = git(repo.root, "ls-tree", "--name-only", ref).split()
    return {n: git(repo.root, "show", f"{ref}:{n}") for n in names if n.endswith(".txt")}


def test_disjoint_keeps_split_overlapping_ones_stay_and_all_merge_cleanly(summed: Repo) -> None:
    root = summed.root
    run_branch = "autoresearch/missions-sum/t"
    before = {ref: git(root, "rev-parse", ref) for ref in ("main", run_branch, "HEAD")}

    result = finalize(root, RUN)

    names = [b.name for b in result.branches]
    assert names == [f"{PREFIX}/1-a-txt", f"{PREFIX}/2-b-txt", f"{PREFIX}/3-c-txt"]
    assert [[k.iteration for k in b.keeps] for b in result.branches] == [[1, 3], [2], [5, 6]]
    assert [b.files for b in result.branches] == [("a.txt",), ("b.txt",), ("c.txt", "d.txt")]
    assert {b.state for b in result.branches} == {"created"}
    # nothing else moved: not the run branch, not the user's branch or checkout
    assert {ref: git(root, "rev-parse", ref) for ref in before} == before
    assert git(root, "status", "--porcelain", "--untracked-files=no") == ""

    start = result.start_commit
    assert start == before["main"]
    final = _files_at(summed, run_branch)
    for branch in result.branches:
        commits = git(root, "rev-list", "--reverse", f"{start}..{branch.name}").split()
        assert len(commits) == len(branch.keeps)  # one commit per kept session
        assert git(root, "rev-parse", f"{commits[0]}^") == start
        changed = git(root, "diff", "--name-only", start, branch.name).split()
        assert changed == list(branch.files)
        assert {f: _files_at(summed, branch.name)[f] for f in branch.files} == {
            f: final[f] for f in branch.files
        }
        # the evidence is in the last commit message only
        last = git(root, "log", "-1", "--format=%B", branch.name)
        assert f"Autoresearch-Run: {RUN}" in last and "autoresearch evidence" in last
        first = git(root, "log", "-1", "--format=%B", commits[0])
        assert (len(commits) == 1) == ("autoresearch evidence" in first)
    evidence_a = git(root, "log", "-1", "--format=%B", names[0])
    assert "Before: 0 (kept state before iteration 1)" in evidence_a
    assert "After: 4 (iteration 3)" in evidence_a
    assert "  iteration 3: 3 -> 4  a to 2" in evidence_a
    assert "Autoresearch-Iterations: 1, 3" in evidence_a

    # every branch merges cleanly into the start point, alone and all together
    scratch = root.parent / "merge"
    git(root, "worktree", "add", "-q", "--detach", str(scratch), start)
    for name in names:
        git(scratch, "merge", "-q", "--no-edit", name)
    assert _files_at(summed, git(scratch, "rev-parse", "HEAD")) == final
    git(scratch, "reset", "-q", "--hard", start)
    git(scratch, "merge", "-q", "--no-edit", *names)  # an octopus: no conflict at all
    assert git(scratch, "diff", run_branch, "HEAD", "--", "a.txt", "b.txt", "c.txt", "d.txt") == ""


def test_dry_run_creates_nothing_and_a_second_finalize_changes_nothing(summed: Repo) -> None:
    root = summed.root
    planned = finalize(root, RUN, dry_run=True)
    assert [b.state for b in planned.branches] == ["planned"] * 3
    assert git(root, "branch", "--list", f"{PREFIX}/*") == ""

    done = cli("finalize", RUN, "--json", cwd=root)
    assert done.returncode == 0, done.stderr
    created = json.loads(done.stdout)
    assert [b["state"] for b in created["branches"]] == ["created"] * 3
    # the same SHAs as planned: the commits are built deterministically
    assert [b["head"] for b in created["branches"]] == [b.head for b in planned.branches]
    again = cli("finalize", RUN, cwd=root)
    assert again.returncode == 0 and again.stdout.count("\n  unchanged ") == 3


def test_single_squashes_every_keep_into_one_branch(summed: Repo) -> None:
    root = summed.root
    (branch,) = finalize(root, RUN, single=True).branches
    assert branch.name == f"{PREFIX}/all" and branch.squash
    start = git(root, "rev-parse", "main")
    assert git(root, "rev-list", "--count", f"{start}..{branch.name}") == "1"
    assert _files_at(summed, branch.name) == _files_at(summed, "autoresearch/missions-sum/t")
    message = git(root, "log", "-1", "--format=%B", branch.name)
    assert message.startswith("autoresearch: 5 kept changes\n\n- a to 1\n- b to 2\n")
    assert "Before: 0 (kept state before iteration 1)\nAfter: 9 (iteration 6)" in message


def test_a_dirty_checkout_is_refused_only_where_it_matters(summed: Repo) -> None:
    root = summed.root
    summed.write("notes.txt", "my own notes\n")  # untracked, touches nothing finalize builds
    summed.write("value.txt", "99\n")  # tracked and modified, but no keep touches it
    assert len(finalize(root, RUN, dry_run=True).branches) == 3
    summed.write("c.txt", "mine\n")  # a file a review branch adds: merging would collide
    done = cli("finalize", RUN, cwd=root)
    assert done.returncode == 2
    assert done.stderr.startswith("autoresearch: autoresearch_finalize_dirty_checkout:c.txt: ")
    assert git(root, "branch", "--list", f"{PREFIX}/*") == ""
    assert (root / "c.txt").read_text() == "mine\n"


def test_an_existing_different_branch_is_never_moved(summed: Repo) -> None:
    root = summed.root
    git(root, "branch", f"{PREFIX}/2-b-txt", "main")
    with pytest.raises(RefusedError, match=f"autoresearch_finalize_branch_exists:{PREFIX}/2-b-txt"):
        finalize(root, RUN)
    # all or nothing: the other branches were not created either
    assert git(root, "branch", "--list", f"{PREFIX}/*").split() == [f"{PREFIX}/2-b-txt"]
    assert git(root, "rev-parse", f"{PREFIX}/2-b-txt") == git(root, "rev-parse", "main")


def test_a_run_that_kept_nothing_is_refused(repo: Repo, mission_dir: Path) -> None:
    with prepare(mission_dir, run_tag="N") as h:
        drive(h, [({"value.txt": "0\n"}, "worse")])
    done = cli("finalize", "missions-demo-n", cwd=repo.root)
    assert (done.returncode, done.stderr) == (
        2,
        "autoresearch: autoresearch_finalize_nothing_kept:missions-demo-n: the run kept no commit\n",
    )


def _keep(n: int, *files: str) -> Keep:
    return Keep(n, "base", f"c{n}", f"keep {n}", None, None, (f"c{n}",), files)


@pytest.mark.parametrize(
    ("keeps", "groups"),
    [
        ([_keep(1, "a"), _keep(2, "b")], [[1], [2]]),
        ([_keep(1, "a"), _keep(2, "a")], [[1, 2]]),
        # 3 touches a and b: it joins the groups of 1 and 2 into one, in run order
        ([_keep(1, "a"), _keep(2, "b"), _keep(3, "a", "b"), _keep(4, "c")], [[1, 2, 3], [4]]),
        ([_keep(1, "x"), _keep(2, "y"), _keep(3, "x")], [[1, 3], [2]]),
        ([], []),
    ],
)
def test_grouping_by_shared_files(keeps: list[Keep], groups: list[list[int]]) -> None:
    assert [[k.iteration for k in g] for g in group_keeps(keeps)] == groups


def test_branch_topics_are_safe_ref_words() -> None:
    assert topic(["src/Parser.py"]) == "src-parser-py"
    assert topic(["weird name ~^:?.txt"]) == "weird-name-txt"
    assert topic([]) == "change"


@pytest.mark.parametrize(
    ("first", "word"),
    [
        ("a" * 39 + "/b.py", "a" * 39),  # cut at 40, then no trailing `-` (paths.slug)
        ("Src/" + "x" * 50, "src-" + "x" * 36),
        ("???", "change"),
        ("Café.py", "caf-py"),  # paths.slug: no folding
    ],
)
def test_a_branch_topic_is_the_one_slug_of_its_first_file(first: str, word: str) -> None:
    assert topic([first, "later.py"]) == word
    assert topic([first]) == slug(first, "change", limit=40)


def test_the_demos_keeps_become_a_branch_that_merges_into_main(tmp_path: Path) -> None:
    demo = tmp_path / "demo"
    done = cli("demo", str(demo), "--iterations", "6", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    run_id = json.loads(cli("status", "--json", cwd=demo).stdout)["runs"][0]["run_id"]
    made = json.loads(cli("finalize", run_id, "--json", cwd=demo).stdout)
    assert len(made["branches"]) == 1  # every keep tunes train.py: they stay together
    (branch,) = made["branches"]
    assert branch["files"] == ["train.py"] and len(branch["iterations"]) >= 2
    git(demo, "merge", "-q", "--no-edit", branch["name"])  # main is the demo's start point
    assert git(demo, "diff", made["run_branch"], "HEAD", "--", "train.py") == ""


def test_the_text_names_each_branch_with_its_keeps_and_files(summed: Repo) -> None:
    root = summed.root
    start = git(root, "rev-parse", "main")[:7]
    head = f"review branches of {RUN}, cut from {start} (the run branch autoresearch/missions-sum/t is unchanged):"
    rows = [
        ("1-a-txt", "iterations 1, 3; files a.txt"),
        ("2-b-txt", "iteration 2; files b.txt"),
        ("3-c-txt", "iterations 5, 6; files c.txt, d.txt"),
    ]

    def text(verb: str) -> list[str]:
        return [head, *(line for name, what in rows
                        for line in (f"  {verb:<12} {PREFIX}/{name}", f"               {what}"))]  # fmt: skip

    done = cli("finalize", RUN, "--dry-run", cwd=root)
    assert (done.returncode, done.stdout) == (0, "\n".join(text("would create")) + "\n")
    done = cli("finalize", RUN, cwd=root)
    review = f"review one: git log -p {start}..{PREFIX}/1-a-txt"
    assert (done.returncode, done.stdout) == (0, "\n".join([*text("created"), review]) + "\n")
    done = cli("finalize", RUN, cwd=root)
    assert (done.returncode, done.stdout) == (0, "\n".join([*text("unchanged"), review]) + "\n")
    done = cli("finalize", RUN, "--single", "--dry-run", cwd=root)
    assert done.stdout.splitlines()[1:] == [
        f"  would create {PREFIX}/all",
        "               squashed 1, 2, 3, 5, 6; files a.txt, b.txt, c.txt, d.txt",
    ]

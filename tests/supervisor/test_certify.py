"""certify end to end through the CLI: interleaved re-measurement, recorded, resumable."""

from __future__ import annotations

import json
import sqlite3
import stat
from pathlib import Path

import pytest
from sup_helpers import submit_and_step
from test_noisy_keeps import NOISY_EVAL

from autoresearch import git as gitlib
from autoresearch.supervisor.prepare import prepare
from helpers import Repo, cli, git, sandbox_text


def certify_rows(repo: Repo) -> list[tuple[str, int]]:
    conn = sqlite3.connect(repo.root / ".autoresearch/journal.sqlite3")
    try:
        return list(
            conn.execute(
                "SELECT commit_sha, iteration FROM evaluations WHERE role = 'certify' ORDER BY id"
            )
        )
    finally:
        conn.close()


def test_certify_reports_the_improvement_with_an_interval_and_resumes(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOISE_STATE", str(tmp_path / "noise-counter"))
    repo.write("scripts/noisy.py", NOISY_EVAL)
    repo.write("value.txt", "0\n")
    mission = repo.mission(sandbox=sandbox_text("python3 scripts/noisy.py", unboxed=True))
    with prepare(mission, run_tag="C") as h:
        run_id, baseline = h.run_id, h.run.baseline_commit
        kept = submit_and_step(h, {"value.txt": "10\n"})
        assert kept.decision == "keep"
    done = cli("certify", run_id, "--repeats", "3", "--json", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["baseline"]["commit"] == baseline
    assert report["final"]["commit"] == kept.candidate_commit
    assert len(report["baseline"]["readings"]) == len(report["final"]["readings"]) == 3
    improvement = report["improvement"]
    assert improvement["low"] < 10 < improvement["high"] and improvement["low"] > 0
    assert report["significant"] is True
    rows = certify_rows(repo)
    # interleaved, in turn: baseline, final, final, baseline …; no iteration of the run
    pair = [baseline, kept.candidate_commit]
    assert [c for c, _ in rows] == [*pair, *pair[::-1], *pair]
    assert {i for _, i in rows} == {-1}

    # resumable: what is recorded counts, only the missing readings are taken
    more = cli("certify", run_id, "--repeats", "4", cwd=repo.root)
    assert more.returncode == 0, more.stderr
    assert len(certify_rows(repo)) == 8
    assert "improvement" in more.stdout and "significant" in more.stdout

    unknown = cli("certify", "nope", cwd=repo.root)
    assert unknown.returncode == 2 and unknown.stderr.startswith("autoresearch:")


SUM_EVAL = (
    "import json\n"
    "total = sum(float(open(f).read()) for f in ('a.txt', 'b.txt'))\n"
    "print(json.dumps({'pass': True, 'score': total}))\n"
)


def test_certify_ablate_says_what_each_kept_change_is_worth(repo: Repo) -> None:
    """Three kept changes; removing each from the final state in turn: two revert cleanly and
    are worth exactly what they added, the first no longer reverts (a later keep rewrote its
    line) and is reported as such, never measured. Resumable and recorded."""
    repo.write("scripts/sum.py", SUM_EVAL)
    repo.write("a.txt", "0\n")
    repo.write("b.txt", "0\n")
    with prepare(repo.mission(sandbox=sandbox_text("python3 scripts/sum.py")), run_tag="A") as h:
        run_id = h.run_id
        first = submit_and_step(h, {"a.txt": "5\n"}, description="a to 5")
        second = submit_and_step(h, {"b.txt": "3\n"}, description="b to 3")
        third = submit_and_step(h, {"a.txt": "6\n"}, description="a to 6")
        assert [r.decision for r in (first, second, third)] == ["keep"] * 3
        certification = h.paths.certification
    done = cli("certify", run_id, "--repeats", "2", "--ablate", "--json", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["improvement"]["mean"] == pytest.approx(9.0)
    by_iteration = {a["iteration"]: a for a in report["ablations"]}
    assert sorted(by_iteration) == [1, 2, 3]
    assert by_iteration[1]["conflict"] is True and by_iteration[1]["worth"] is None
    assert by_iteration[1]["superseded"] is True  # its one line now says 6, not 5
    assert report["ablations_measured"] == 2
    assert by_iteration[1]["readings"] == []
    assert by_iteration[2]["worth"]["mean"] == pytest.approx(3.0)
    assert by_iteration[3]["worth"]["mean"] == pytest.approx(1.0)
    assert by_iteration[2]["significant"] and by_iteration[3]["significant"]
    assert by_iteration[3]["commit"] == third.candidate_commit
    assert by_iteration[3]["parent"] == second.candidate_commit
    # 2 rounds of baseline, final and the two ablated states, interleaved, all recorded
    rows = certify_rows(repo)
    assert len(rows) == 8
    assert [c for c, _ in rows[:4]] == [
        report["baseline"]["commit"], third.candidate_commit,
        by_iteration[2]["without_commit"], by_iteration[3]["without_commit"],
    ]  # fmt: skip
    assert json.loads(certification.read_text())["ablations"] == report["ablations"]

    # resumable: the ablated states are rebuilt with the same SHAs, their readings count
    again = cli("certify", run_id, "--repeats", "3", "--ablate", cwd=repo.root)
    assert again.returncode == 0, again.stderr
    assert len(certify_rows(repo)) == 12
    assert (
        "without iteration 1" in again.stdout and "superseded: later keeps rewrote" in again.stdout
    )
    assert "without iteration 2" in again.stdout and "worth +3" in again.stdout


def test_certify_an_unknown_run_makes_no_journal(repo: Repo) -> None:
    # the same refusal as step's, and like every read path it leaves a repository without
    # a journal as it was
    done = cli("certify", "nope", cwd=repo.root)
    assert (done.returncode, done.stderr) == (2, "autoresearch: unknown run: nope\n")
    assert not (repo.root / ".autoresearch/journal.sqlite3").exists()
    assert cli("step", "nope", cwd=repo.root).stderr == "autoresearch: unknown run: nope\n"


def test_certify_on_the_demo(tmp_path: Path) -> None:
    """The walkthrough of docs/search-and-noise.md: `autoresearch demo`, then `certify --ablate` on its run."""
    demo = tmp_path / "demo"
    assert cli("demo", str(demo), "--iterations", "4", cwd=tmp_path).returncode == 0
    status = json.loads(cli("status", "--json", cwd=demo).stdout)["runs"][0]
    done = cli("certify", status["run_id"], "--repeats", "2", "--ablate", "--json", cwd=demo)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    # the demo's evaluator is deterministic: every reading of a commit agrees
    for label in ("baseline", "final"):
        readings = report[label]["readings"]
        assert len(readings) == 2 and readings[0] == readings[1]
    assert report["improvement"]["mean"] == pytest.approx(
        report["baseline"]["readings"][0] - report["final"]["readings"][0]
    )
    assert report["significant"] is (report["improvement"]["mean"] > 0)
    assert report["ablations"]  # the demo's offline agent (seed 7) keeps within 4 iterations
    for a in report["ablations"]:
        assert a["conflict"] or len(a["readings"]) == 2
        assert not a["superseded"] or a["conflict"]  # superseded: never measured
    measured = sum(1 for a in report["ablations"] if not a["conflict"])
    assert report["ablations_measured"] == measured >= 1
    text = cli("certify", status["run_id"], "--repeats", "2", "--ablate", cwd=demo).stdout
    assert f"ablations: {measured} of {len(report['ablations'])} kept changes measured" in text


def test_finalize_evidence_and_the_report_show_the_certification(tmp_path: Path) -> None:
    demo = tmp_path / "demo"
    assert cli("demo", str(demo), "--iterations", "4", cwd=tmp_path).returncode == 0
    run_id = json.loads(cli("status", "--json", cwd=demo).stdout)["runs"][0]["run_id"]
    before = json.loads(cli("finalize", run_id, "--dry-run", "--json", cwd=demo).stdout)
    assert before["branches"]
    assert cli("certify", run_id, "--repeats", "2", "--ablate", cwd=demo).returncode == 0
    made = json.loads(cli("finalize", run_id, "--json", cwd=demo).stdout)
    (branch,) = made["branches"]
    message = git(demo, "log", "-1", "--format=%B", branch["name"])
    assert "Certification (whole run, baseline -> final): improvement +0.181241" in message
    assert "iteration 4: worth +0.001325" in message
    assert "Certification: none recorded" not in message
    report = cli("report", run_id, "--json", cwd=demo)
    assert report.returncode == 0, report.stderr
    page = Path(json.loads(report.stdout)["report_file"]).read_text()
    assert "certified" in page and "+0.181241" in page


# the sum of every `name = value` line of params.py
PARAMS_EVAL = (
    "import json, re\n"
    "text = open('params.py').read()\n"
    "total = sum(float(v) for v in re.findall(r'^\\w+ = (\\S+)$', text, flags=re.M))\n"
    "print(json.dumps({'pass': True, 'score': total}))\n"
)


@pytest.mark.parametrize(
    ("layout", "removed_by"),
    [
        # one parameter a line, next to each other (the demo's train.py): the reversed diff's
        # context and a three-way merge both see the neighbours' edits; without context, each
        # change is found by its own line
        ("A = 0\nB = 0\nC = 0\n", ["zero-context", "zero-context", "reverse"]),
        # each under its comment: a three-way merge takes a change out, as `git revert` does
        ("# a\nA = 0\n\n# b\nB = 0\n\n# c\nC = 0\n", ["3-way", "3-way", "reverse"]),
    ],
)
def test_certify_ablates_changes_on_neighbouring_lines(
    repo: Repo, layout: str, removed_by: list[str]
) -> None:
    """Kept changes to lines next to each other (a tuning run) each come out of the final state
    alone and are worth exactly what they added; the report says how each was taken out and
    that all were measured."""
    repo.write("scripts/params.py", PARAMS_EVAL)
    repo.write("params.py", layout)
    with prepare(repo.mission(sandbox=sandbox_text("python3 scripts/params.py")), run_tag="P") as h:
        run_id, text = h.run_id, layout
        for name, value in (("A", "1"), ("B", "2"), ("C", "4")):
            text = text.replace(f"{name} = 0", f"{name} = {value}")
            assert submit_and_step(h, {"params.py": text}).decision == "keep"
    done = cli("certify", run_id, "--repeats", "2", "--ablate", "--json", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert [a["removed_by"] for a in report["ablations"]] == removed_by
    assert [a["worth"]["mean"] for a in report["ablations"]] == [1, 2, 4]
    assert report["ablations_measured"] == 3
    shown = cli("certify", run_id, "--repeats", "2", "--ablate", cwd=repo.root).stdout
    assert "ablations: 3 of 3 kept changes measured\n" in shown + "\n"
    assert "does not revert" not in shown


def test_a_deleted_line_is_never_put_back_by_line_number_alone(repo: Repo) -> None:
    """A change that deleted a line, then a later edit of the line next to it: reversed
    without context the deletion is an insertion placed by line number only, which later
    edits may have shifted – refused (None), never a tree nobody wrote."""
    repo.write("params.py", "A = 0\nB = 0\nC = 0\n")
    parent = repo.commit("three")
    repo.write("params.py", "A = 0\nC = 0\n")
    change = repo.commit("B deleted")
    repo.write("params.py", "A = 5\nC = 0\n")
    final = repo.commit("A edited")
    assert gitlib.tree_without(repo.root, final, parent, change) is None
    assert not gitlib.superseded(repo.root, final, parent, change)  # the deletion stays
    # taking out the later edit of a line is found by its content
    taken = gitlib.tree_without(repo.root, final, change, final)
    assert taken is not None and taken[1] is gitlib.Removal.REVERSE


@pytest.mark.parametrize(
    ("patch", "removes"),
    [
        (b"@@ -3 +3 @@\n-a\n+b\n", True),
        (b"@@ -3,2 +3,0 @@\n-a\n-b\n@@ -9 +7 @@\n-c\n+d\n", True),
        (b"@@ -3,0 +4 @@\n+a\n", False),
        (b"@@ -1 +1 @@\n-a\n+b\n@@ -5,0 +6,2 @@\n+c\n+d\n", False),
        (b"GIT binary patch\nliteral 3\n", False),
        (b"", False),
    ],
)
def test_every_hunk_removes(patch: bytes, removes: bool) -> None:
    assert gitlib.every_hunk_removes(patch) is removes


def _interval(mean: float, n: int) -> dict[str, float | int]:
    return {"mean": mean, "low": mean, "high": mean, "n": n, "level": 0.95}


# a certification.json as `certify --ablate` wrote it before the report was typed: superseded,
# conflicting and measured ablations
WRITTEN = {
    "run_id": "r",
    "repeats": 2,
    "direction": "lower",
    "failed_readings": 1,
    "spread": 0.0,
    "baseline": {"commit": "b" * 40, "readings": [0.24, 0.24], "interval": _interval(0.24, 2)},
    "final": {"commit": "f" * 40, "readings": [], "interval": None},
    "improvement": _interval(0.18, 4),
    "significant": True,
    "same_commit": False,
    "baseline_mean": 0.24,
    "ablations": [
        {
            "iteration": 2, "commit": "2" * 40, "parent": "b" * 40, "description": "tune A",
            "without_commit": None, "removed_by": None, "conflict": True, "superseded": True,
            "readings": [], "worth": None, "significant": False, "note": "superseded: …",
        },
        {
            "iteration": 4, "commit": "4" * 40, "parent": "2" * 40, "description": "",
            "without_commit": "e" * 40, "removed_by": "reverse", "conflict": False,
            "superseded": False, "readings": [0.06, 0.06], "worth": _interval(0.0013, 4),
            "significant": True,
        },
    ],
    "ablations_measured": 1,
}  # fmt: skip


@pytest.mark.parametrize(
    "written",
    [WRITTEN, {k: v for k, v in WRITTEN.items() if k not in ("ablations", "ablations_measured")}],
)
def test_a_certification_reads_back_to_the_same_json(written: dict[str, object]) -> None:
    """The typed report serializes to the bytes the dict did: same keys, same order, `note`
    only on an unmeasured ablation, no `ablations` without --ablate."""
    from autoresearch.supervisor.certify import Certification

    found = Certification.from_json(written)
    assert json.dumps(found.to_json(), indent=2) == json.dumps(written, indent=2)
    assert found.ablations_measured == (1 if "ablations" in written else 0)


def test_an_unreadable_certification_is_none(tmp_path: Path) -> None:
    from autoresearch.supervisor.certify import read_certification

    path = tmp_path / "certification.json"
    for text in ("{", "[]", '{"final": {"commit": "f"}}', json.dumps(WRITTEN)):
        path.write_text(text)
        assert read_certification(path, "f" * 40) is None or text == json.dumps(WRITTEN)
    assert read_certification(path, "f" * 40) is not None
    assert read_certification(path, "0" * 40) is None  # of another final commit


def test_certify_scratch_folder_is_private(repo: Repo) -> None:
    """Every folder certify makes under the state folder is the user's alone (its
    scratch/certify folder was made 0755 by a plain mkdir)."""
    with prepare(repo.mission(), run_tag="P") as h:
        run_id = h.run_id
        assert submit_and_step(h, {"value.txt": "3\n"}).decision == "keep"
    done = cli("certify", run_id, "--repeats", "2", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    certify = repo.root / ".autoresearch/scratch" / run_id / "certify"
    assert certify.is_dir()
    assert stat.S_IMODE(certify.stat().st_mode) == 0o700

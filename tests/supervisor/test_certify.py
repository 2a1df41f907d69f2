"""certify end to end through the CLI: interleaved re-measurement, recorded, resumable."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from sup_helpers import submit_and_step
from test_noisy_keeps import NOISY_EVAL

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
    with prepare(repo.mission(sandbox=sandbox_text("python3 scripts/noisy.py")), run_tag="C") as h:
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
    # interleaved: baseline, final, baseline, final …; no iteration of the run
    assert [c for c, _ in rows] == [baseline, kept.candidate_commit] * 3
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
    assert "without iteration 1" in again.stdout and "does not revert cleanly" in again.stdout
    assert "without iteration 2" in again.stdout and "worth +3" in again.stdout


def test_certify_on_the_demo(tmp_path: Path) -> None:
    """The README walkthrough: `autoresearch demo`, then `certify --ablate` on its run."""
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

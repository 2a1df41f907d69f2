"""Sessions that drift cannot fool (#34): `exp run --repeats N` pairs each reading of the
candidate with a reading of the kept commit taken next to it, and status, log and run judge
only from those pairs and show the drift. Real repositories, the real CLI, a real harness
whose level drops by 30 % after its 5th reading (a machine whose load ended)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from exp_helpers import exp_repo

from helpers import Repo, cli, git

# value.txt times the machine's level (1.0 for the first 5 readings of the session, 0.7
# after), plus noise of sd 0.2 drawn from a counter kept outside the repository.
DRIFTING_HARNESS = textwrap.dedent(
    """\
    #!/bin/bash
    n=$(cat "$DRIFT_STATE" 2>/dev/null || echo 0); echo $((n + 1)) > "$DRIFT_STATE"
    python3 -c "import random,sys; n=int(sys.argv[1]); level = 1.0 if n < 5 else 0.7
    print('METRIC ms=%.4f' % (float(open('value.txt').read()) * level
        + random.Random(n).gauss(0, 0.2)))" "$n"
    """
)


@pytest.fixture
def drifting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Repo:
    monkeypatch.setenv("DRIFT_STATE", str(tmp_path / "drift-counter"))
    repo = exp_repo(tmp_path / "repo", value="100")
    repo.write("autoresearch.sh", DRIFTING_HARNESS)
    return repo


def exp(repo: Repo, *args: str) -> Any:
    done = cli("exp", *args, "--json", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_null_change_measured_after_the_machine_sped_up_is_not_an_improvement(
    drifting: Repo,
) -> None:
    exp(drifting, "init", "--name", "drift", "--metric", "ms")  # lower is better
    base = exp(drifting, "run", "--repeats", "3")  # readings 0-2, level 1.0
    assert base["reference_readings"] == [] and base["paired"] is None  # nothing to pair yet
    exp(drifting, "log", "--status", "keep", "-d", "baseline")

    # a null change: the machine speeds up after its first round (readings 3, 4 at 1.0)
    drifting.write("notes.txt", "a comment, nothing faster\n")
    null = exp(drifting, "run", "--repeats", "3")
    assert len(null["readings"]) == 3 and len(null["reference_readings"]) == 3
    assert null["metric"] < 90  # pooled against the baseline it looks like -15 % or more
    assert abs(null["paired"]["mean"]) < 1  # paired with the kept commit: nothing
    assert null["suggested_status"] == "discard"
    exp(drifting, "log", "--status", "discard", "-d", "null")

    # another null change, all at the new level, kept anyway
    drifting.write("notes.txt", "another comment\n")
    again = exp(drifting, "run", "--repeats", "3")
    assert again["suggested_status"] == "discard"
    text = cli("exp", "log", "--status", "keep", "-d", "null, kept anyway", cwd=drifting.root)
    assert text.returncode == 0, text.stderr
    assert "significance: not significant: best − baseline" in text.stdout
    assert "paired, 3 pairs" in text.stdout
    assert "paired:     " in text.stdout and "against the kept commit read alongside" in text.stdout
    assert "%)" not in text.stdout.splitlines()[1]  # no pooled Δ % next to the paired change

    status = exp(drifting, "status")
    sig = status["confidence"]["significance"]
    assert sig["basis"] == "paired" and sig["significant"] is False
    assert sig["low"] < 0 < sig["high"]
    # the drift: the baseline commit read ~100 at run 1 and ~70 next to run 3's candidate
    (drift,) = status["confidence"]["drift"]
    assert drift["label"] == "baseline" and drift["significant"] is True
    assert drift["then_run"] == 1 and drift["now_run"] == 3
    assert drift["then"]["mean"] == pytest.approx(100, abs=1)
    assert drift["now"]["mean"] < 90
    # every run of the history says what its pairs said
    history = {h["run"]: h for h in status["history"]}
    assert history[1]["paired"] is None  # the baseline: nothing to pair with
    assert abs(history[3]["paired"]["mean"]) < 1 and history[3]["reference_commit"]
    shown = cli("exp", "status", cwd=drifting.root).stdout
    assert "drift:       the baseline now reads " in shown
    assert "       paired: " in shown and "read alongside (3 pairs)" in shown
    # the best's pooled −30 % is not shown as its change: its paired one is
    (best,) = [line for line in shown.splitlines() if line.startswith("best kept:")]
    assert "(paired against the baseline: " in best and "%)" not in best
    assert "it read 100" in shown  # rounded to the noise, not 100.0713333333
    (ratio,) = [line for line in shown.splitlines() if line.startswith("confidence:")]
    assert ratio.endswith("; pooled readings: the drift below is in it")


def test_a_real_improvement_is_found_by_its_pairs_through_the_drift(drifting: Repo) -> None:
    exp(drifting, "init", "--name", "drift", "--metric", "ms")
    exp(drifting, "run", "--repeats", "3")
    exp(drifting, "log", "--status", "keep", "-d", "baseline")
    drifting.write("value.txt", "95\n")  # 5 % faster, measured across the machine's change
    better = exp(drifting, "run", "--repeats", "3")
    assert better["paired"]["low"] > 0 and better["suggested_status"] == "keep"
    logged = exp(drifting, "log", "--status", "keep", "-d", "5 % faster")
    assert logged["paired"] == better["paired"]
    sig = exp(drifting, "status")["confidence"]["significance"]
    assert sig["basis"] == "paired" and sig["significant"] is True
    # the paired estimate is the real 5 % of the level it was read at, not the pooled −30 %
    assert 2 < sig["difference"] < 6


def test_a_kept_commit_that_cannot_be_read_apart_leaves_the_run_unpaired(
    drifting: Repo,
) -> None:
    # the harness needs a file git ignores: the scratch checkout of the kept commit lacks it
    drifting.write(".gitignore", "data.txt\n")
    drifting.write("data.txt", "local data\n")
    drifting.write("autoresearch.sh", "cat data.txt > /dev/null || exit 4\n" + DRIFTING_HARNESS)
    exp(drifting, "init", "--name", "drift", "--metric", "ms")
    exp(drifting, "run", "--repeats", "2")
    exp(drifting, "log", "--status", "keep", "-d", "baseline")
    drifting.write("value.txt", "95\n")
    done = exp(drifting, "run", "--repeats", "2")
    assert done["status"] == "pass" and len(done["readings"]) == 2
    assert done["reference_readings"] == [] and done["paired"] is None
    (note,) = [m for m in done["messages"] if m.startswith("not paired with the kept commit")]
    assert "failed to read in its scratch checkout" in note and "reference-1.log" in note
    exp(drifting, "log", "--status", "keep", "-d", "5 % faster")
    sig = exp(drifting, "status")["confidence"]["significance"]
    assert sig["basis"] == "pooled"
    shown = cli("exp", "status", cwd=drifting.root).stdout
    assert "drift not excluded" in shown


def test_closing_a_session_removes_its_reference_checkout(drifting: Repo) -> None:
    """The scratch checkout of the kept commit that paired readings use is a git worktree:
    once the session closes nothing reads it, and it must not stay registered."""
    exp(drifting, "init", "--name", "drift", "--metric", "ms")
    exp(drifting, "run", "--repeats", "2")
    exp(drifting, "log", "--status", "keep", "-d", "baseline")
    drifting.write("notes.txt", "a comment\n")
    paired = exp(drifting, "run", "--repeats", "2")
    assert len(paired["reference_readings"]) == 2
    exp(drifting, "log", "--status", "discard", "-d", "null")

    def worktrees() -> str:
        return git(drifting.root, "worktree", "list", "--porcelain")

    assert "reference" in worktrees()  # the scratch checkout, while the session is open
    done = cli("exp", "off", cwd=drifting.root)
    assert done.returncode == 0, done.stderr
    assert "reference" not in worktrees()
    assert not list((drifting.root / ".autoresearch").rglob("reference"))

"""The machine's level changes INSIDE an iteration or a certification (#34), on a real
repository through prepare, step and certify: an evaluator whose readings switch level at a
reading number the test sets (a counter file, as bench/timed_workload.py's background load)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from sup_helpers import submit_and_step

from autoresearch.supervisor.prepare import prepare
from helpers import Repo, cli, sandbox_text

# readings are 1.5 times slower (a background load) until the reading numbered in LOAD_UNTIL
LOADED_EVAL = textwrap.dedent(
    """\
    import json, os, random
    value = float(open("value.txt").read())
    state = os.environ["NOISE_STATE"]
    n = int(open(state).read()) if os.path.exists(state) else 0
    open(state, "w").write(str(n + 1))
    level = 1.5 if n < int(open(os.environ["LOAD_UNTIL"]).read()) else 1.0
    print(json.dumps({"pass": True, "score": level * (value + random.Random(1000 + n).gauss(0, 1))}))
    """
)
LOWER = "  direction: lower\nnoise:\n  calibration: 10\n"


def test_a_load_that_stops_inside_an_iteration_keeps_no_null_change(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The load stops after the candidate's first reading and the incumbent's first: the
    candidate's next readings are a third faster than every incumbent reading so far. The
    rule before kept the null change on those (C 150, I 150, C 100, C 100); now the readings
    before the change are set aside and the incumbent is read again at the new level."""
    counter, until = tmp_path / "noise-counter", tmp_path / "load-until"
    until.write_text("1000000")
    monkeypatch.setenv("NOISE_STATE", str(counter))
    monkeypatch.setenv("LOAD_UNTIL", str(until))
    repo.write("scripts/eval.py", LOADED_EVAL)
    repo.write("value.txt", "100\n")
    with prepare(repo.mission(sandbox=sandbox_text(extra=LOWER, unboxed=True)), run_tag="L") as h:
        until.write_text(str(int(counter.read_text()) + 2))
        null = submit_and_step(h, {"value.txt": "100.0\n"}, description="null")
        assert null.decision != "keep", null
        real = submit_and_step(h, {"value.txt": "90\n"}, description="a real 10 % gain")
        assert real.decision == "keep", real


# a deterministic evaluator (one reading per candidate) whose readings, once RAMP exists, grow
# by 1 per reading: a steady drift across the certification
RAMP_EVAL = textwrap.dedent(
    """\
    import json, os
    value = float(open("value.txt").read())
    ramp = os.environ["RAMP"]
    n = int(open(ramp).read()) + 1 if os.path.exists(ramp) else 0
    if n:
        open(ramp, "w").write(str(n))
    print(json.dumps({"pass": True, "score": value + n}))
    """
)


def test_certify_reads_in_turn_so_a_steady_drift_cancels(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read baseline then final in every round, each pair's final reading came one step of
    drift later: four identical differences, 9 each, a zero-width interval missing the true
    10. Read in turn (B F, F B, …) the drift adds to two pairs and takes from two."""
    ramp = tmp_path / "ramp"
    monkeypatch.setenv("RAMP", str(ramp))
    repo.write("scripts/eval.py", RAMP_EVAL)
    repo.write("value.txt", "100\n")
    sandbox = sandbox_text(extra="  direction: lower\n", unboxed=True)
    with prepare(repo.mission(sandbox=sandbox), run_tag="R") as h:
        run_id = h.run_id
        assert submit_and_step(h, {"value.txt": "90\n"}).decision == "keep"
    ramp.write_text("0")
    done = cli("certify", run_id, "--repeats", "4", "--json", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    improvement = json.loads(done.stdout)["improvement"]
    assert improvement["mean"] == pytest.approx(10)
    assert improvement["low"] < 10 < improvement["high"]

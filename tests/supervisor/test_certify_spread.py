"""certify's spread comes from within its pairs (#34): a level of the machine that moves
between rounds (a load that ended) is neither noise nor hidden by it."""

from __future__ import annotations

import json
import math
import textwrap
from pathlib import Path

import pytest
from sup_helpers import one_keep

from autoresearch.noise import Spread
from autoresearch.states import Direction
from autoresearch.supervisor.certify import pairs_spread
from helpers import Repo, cli

SQRT2 = math.sqrt(2)


@pytest.mark.parametrize(
    ("base", "final", "spread"),
    [
        # +10 in every pair, the level 50 higher from the third round on: no spread at all
        ([0.0, 0.0, 50.0, 50.0], [10.0, 10.0, 60.0, 60.0], Spread(0.0, 3)),
        # differences 9, 11, 9, 11: their sd 2/√3 is √2 readings' sd, the level aside
        ([0.0, 0.0, 50.0, 50.0], [9.0, 11.0, 59.0, 61.0], Spread(2 / math.sqrt(3) / SQRT2, 3)),
        # the direction only flips the differences' sign
        ([0.0, 0.0, 50.0, 50.0], [11.0, 9.0, 61.0, 59.0], Spread(2 / math.sqrt(3) / SQRT2, 3)),
        # one pair says nothing about spread: each commit's readings pooled, as before pairs
        ([0.0], [10.0], Spread(0.0, 0)),
        ([0.0, 2.0], [10.0], Spread(SQRT2, 1)),
    ],
)
def test_the_spread_is_measured_within_pairs(
    base: list[float], final: list[float], spread: Spread
) -> None:
    found = pairs_spread(Direction.LOWER, base, final)
    assert found.df == spread.df and found.sd == pytest.approx(spread.sd)


# value.txt plus the machine's level (LEVEL_FILE, outside the repository, 0 unless written)
# plus noise of sd 1 drawn from a counter kept outside the repository too
STEP_EVAL = textwrap.dedent(
    """\
    import json, os, random
    state, level = os.environ["NOISE_STATE"], os.environ["LEVEL_FILE"]
    n = int(open(state).read()) if os.path.exists(state) else 0
    open(state, "w").write(str(n + 1))
    shift = float(open(level).read()) if os.path.exists(level) else 0.0
    value = float(open("value.txt").read()) + shift + random.Random(n).gauss(0, 1)
    print(json.dumps({"pass": True, "score": value}))
    """
)


def test_a_level_that_jumps_between_rounds_does_not_widen_the_intervals(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    level = tmp_path / "level"
    monkeypatch.setenv("NOISE_STATE", str(tmp_path / "noise-counter"))
    monkeypatch.setenv("LEVEL_FILE", str(level))
    run_id = one_keep(repo, STEP_EVAL, "S")
    first = cli("certify", run_id, "--repeats", "3", cwd=repo.root)
    assert first.returncode == 0, first.stderr
    level.write_text("50\n")  # the machine's level moves by 50 readings' sd between rounds
    done = cli("certify", run_id, "--repeats", "6", "--json", cwd=repo.root)  # 3 rounds more
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    base = report["baseline"]["readings"]
    assert len(base) == 6 and base[3] - base[2] > 40  # the jump is in each commit's readings
    assert report["spread"] < 3  # within the pairs: the noise (sd 1), not the jump (~27)
    final = report["final"]["interval"]
    assert final["high"] - final["low"] < 6  # sized by the noise, not by the level's move
    improvement = report["improvement"]
    assert report["significant"] and improvement["low"] < 10 < improvement["high"]

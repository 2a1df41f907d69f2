"""certify pairs its readings by round (#34): a reading that fails drops its round, so later
pairs are not offset by one round. End to end through the CLI on a real repository."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sup_helpers import one_keep

from helpers import Repo, cli

# The score climbs by 1 per reading (a steady drift) on top of 1000 × value.txt; the final
# state's next reading fails once while the FAIL_ONCE file exists.
DRIFT_EVAL = (
    "import json, os, sys\n"
    "value = float(open('value.txt').read())\n"
    "state = os.environ['DRIFT_STATE']\n"
    "n = int(open(state).read()) if os.path.exists(state) else 0\n"
    "open(state, 'w').write(str(n + 1))\n"
    "once = os.environ['FAIL_ONCE']\n"
    "if value == 10 and os.path.exists(once):\n"
    "    os.remove(once)\n"
    "    sys.exit(2)\n"
    "print(json.dumps({'pass': True, 'score': 1000 * value + n}))\n"
)


def test_a_failed_reading_drops_its_round_and_the_pairs_stay_pairs(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DRIFT_STATE", str(tmp_path / "readings"))
    monkeypatch.setenv("FAIL_ONCE", str(once := tmp_path / "fail-once"))
    run_id = one_keep(repo, DRIFT_EVAL, "R")
    once.write_text("")
    done = cli("certify", run_id, "--repeats", "4", "--json", cwd=repo.root)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["failed_readings"] == 1 and not once.exists()
    base, final = report["baseline"]["readings"], report["final"]["readings"]
    # each round's two readings are next to each other: 1 reading of drift apart, never 3
    assert len(base) == len(final) == 3
    assert [abs(f - b - 10_000) for b, f in zip(base, final, strict=True)] == [1, 1, 1]

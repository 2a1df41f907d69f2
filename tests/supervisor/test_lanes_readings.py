"""Further readings of the noise-aware test spread over free evaluation slots (issue 14): with
two slots and one lane, readings of one candidate run at once, and the test still takes them
one at a time in its own order (the journal records each iteration's readings as before)."""

from __future__ import annotations

import itertools
import json
import sqlite3
import sys
import textwrap
from pathlib import Path

from helpers import Repo, cli, sandbox_text

AGENT = f"cmd:{sys.executable} {Path(__file__).parent / 'fakes/lane_agent.py'}"

# score = value.txt + one per bonus file + seeded noise; each reading appends "start end"
NOISY = textwrap.dedent(
    """\
    import glob, json, os, random, time
    start = time.time()
    time.sleep(0.3)
    score = float(open("value.txt").read()) + len(glob.glob("bonus-*.txt"))
    with open(os.environ["EVAL_LOG"], "a") as f:
        f.write(f"{start} {time.time()}\\n")
    print(json.dumps({"pass": True, "score": score + random.gauss(0, 0.3)}))
    """
)


def _readings(repo: Repo) -> dict[int, int]:
    conn = sqlite3.connect(repo.root / ".autoresearch/journal.sqlite3")
    try:
        rows = conn.execute(
            "SELECT iteration, COUNT(*) FROM evaluations WHERE iteration > 0 GROUP BY iteration"
        ).fetchall()
    finally:
        conn.close()
    return dict(rows)


def test_further_readings_of_one_candidate_spread_over_the_free_slots(
    repo: Repo, tmp_path: Path
) -> None:
    repo.write("scripts/noisy.py", NOISY)
    extra = (
        "evaluation:\n  slots: 2\nnoise:\n  mode: sequential\n  calibration: 3\n  max_evals: 8\n"
    )
    repo.mission(sandbox=sandbox_text("python3 scripts/noisy.py", extra=extra, unboxed=True))
    evals = tmp_path / "evals.log"
    done = cli("run", "missions/demo", "--agent", AGENT, "--run-tag", "T1", "--json",
               "--lanes", "1", "--max-iterations", "2", cwd=repo.root,
               env={"EVAL_LOG": str(evals), "LANE_SLEEP": "0.1"}, timeout=180)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["iteration"] == 2
    per_iteration = _readings(repo)
    assert max(per_iteration.values()) > 1  # the sequential test took further readings
    spans = sorted(tuple(map(float, line.split())) for line in evals.read_text().splitlines())
    # one lane: only further readings of one iteration can overlap, and some did
    assert any(b[0] < a[1] for a, b in itertools.pairwise(spans)), spans
    # every recorded reading was taken; readings started ahead and not needed are not recorded
    assert len(spans) >= 3 + sum(per_iteration.values())
    # the scratch checkouts of those readings end with the run
    assert "/ahead/" not in repo.git("worktree", "list")

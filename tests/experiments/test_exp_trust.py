"""Trust in experiment sessions (trust.md): a sealed harness, repeated runs, significance.
Real repositories, real harness processes, the real CLI."""

from __future__ import annotations

import json
import sqlite3
import textwrap
from pathlib import Path

import pytest
from exp_helpers import CHECKS, exp_repo, init, log, run

from autoresearch.errors import RefusedError
from autoresearch.experiments import RunParams, run_experiment
from autoresearch.experiments.verbs import Door
from helpers import Repo, cli

# value.txt plus noise (sd 0.1) drawn from a counter kept outside the repository: every
# reading differs, reproducibly; $0 says which copy of the harness ran.
NOISY_HARNESS = textwrap.dedent(
    """\
    #!/bin/bash
    n=$(cat "$NOISE_STATE" 2>/dev/null || echo 0); echo $((n + 1)) > "$NOISE_STATE"
    python3 -c "import random,sys; print('METRIC score=%.6f' % (float(open('value.txt').read())
        + random.Random(int(sys.argv[1])).gauss(0, 0.1)))" "$n"
    echo "harness=$0"
    """
)


def run_count(repo: Repo) -> int:
    conn = sqlite3.connect(repo.root / ".autoresearch/journal.sqlite3")
    try:
        return int(conn.execute("SELECT COUNT(*) FROM session_runs").fetchone()[0])
    finally:
        conn.close()


@pytest.fixture
def noisy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Repo:
    monkeypatch.setenv("NOISE_STATE", str(tmp_path / "noise-counter"))
    repo = exp_repo(tmp_path / "repo", value="100")
    repo.write("autoresearch.sh", NOISY_HARNESS)
    return repo


def test_a_sealed_harness_measures_only_an_unchanged_tree_and_runs_the_copy(noisy: Repo) -> None:
    result = init(noisy.root, seal=True, direction="higher")
    assert any(
        m.startswith("sealed autoresearch.sh: `autoresearch exp run` measures nothing")
        for m in result.messages
    )
    first = run(noisy.root)
    assert first.status == "pass"
    sealed = noisy.root / f".autoresearch/sessions/{result.session_id}/sealed"
    assert f"harness={sealed / 'autoresearch.sh'}" in first.tail  # the sealed copy ran
    log(noisy.root, "keep", "baseline")

    # a candidate that changes the harness is never measured, and no run is recorded
    runs_before = run_count(noisy)
    noisy.write("autoresearch.sh", NOISY_HARNESS + "echo 'METRIC score=1e9'\n")
    with pytest.raises(RefusedError, match=r"^harness changed: autoresearch\.sh \(sealed"):
        run(noisy.root)
    assert run_count(noisy) == runs_before
    # the way out names the caller's own door: a CLI command, or an MCP tool
    cli_refusal = cli("exp", "run", cwd=noisy.root)
    assert "(`autoresearch exp init --seal`)" in cli_refusal.stderr, cli_refusal.stderr
    with pytest.raises(RefusedError) as mcp_refusal:
        run_experiment(noisy.root, RunParams(), door=Door.MCP)
    assert str(mcp_refusal.value).endswith("(init_experiment with seal)")
    assert "autoresearch exp" not in str(mcp_refusal.value)
    assert run_count(noisy) == runs_before
    # adding a checks file changes the harness too
    noisy.git("checkout", "--", "autoresearch.sh")
    noisy.write("autoresearch.checks.sh", CHECKS)
    with pytest.raises(RefusedError, match=r"^harness changed: autoresearch\.checks\.sh"):
        run(noisy.root)
    (noisy.root / "autoresearch.checks.sh").unlink()
    # a tampered sealed copy is refused as well
    (sealed / "autoresearch.sh").write_text("echo 'METRIC score=1e9'\n")
    done = cli("exp", "run", cwd=noisy.root)
    assert done.returncode == 2
    assert done.stderr.startswith("autoresearch: sealed harness copy changed since init")
    assert run_count(noisy) == runs_before

    # sealing on purpose again (a deliberate harness change) measures again
    init(noisy.root, seal=True)
    assert run(noisy.root).status == "pass"


def test_repeats_record_every_reading_and_status_says_whether_it_is_significant(
    noisy: Repo,
) -> None:
    init(noisy.root, direction="higher")
    base = run(noisy.root, repeats=3)
    assert len(base.readings) == 3 and len(set(base.readings)) == 3
    assert base.metric == pytest.approx(sum(base.readings) / 3)
    log_dir = Path(base.log_path).parent
    assert sorted(p.name for p in log_dir.glob("run-0001*.log")) == [
        "run-0001-2.log", "run-0001-3.log", "run-0001.log",
    ]  # fmt: skip
    log(noisy.root, "keep", "baseline")

    # an improvement far beyond the spread
    noisy.write("value.txt", "101\n")
    better = run(noisy.root, repeats=3)
    logged = log(noisy.root, "keep", "one more")
    sig = logged.confidence.significance
    # paired: run 2's readings against the baseline commit read next to each of them
    assert sig is not None and sig.significant is True and sig.basis == "paired"
    assert sig.pairs == 3 and better.reference_readings and len(better.reference_readings) == 3
    assert sig.low < better.metric - base.metric < sig.high

    # the CLI: --repeats, and significance in status and log
    noisy.write("value.txt", "101.01\n")
    done = cli("exp", "run", "--repeats", "2", "--json", cwd=noisy.root)
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)["readings"]) == 2
    logged_cli = cli("exp", "log", "--status", "discard", "-d", "within noise", cwd=noisy.root)
    assert "significance: significant: best − baseline +" in logged_cli.stdout
    status = cli("exp", "status", "--json", cwd=noisy.root)
    assert json.loads(status.stdout)["confidence"]["significance"]["significant"] is True
    text = cli("exp", "status", cwd=noisy.root).stdout
    assert "significance: significant" in text and "95 % interval" in text


def test_without_repeats_significance_says_how_to_get_it(noisy: Repo) -> None:
    init(noisy.root, direction="higher")
    run(noisy.root)
    log(noisy.root, "keep", "baseline")
    noisy.write("value.txt", "101\n")
    run(noisy.root)
    logged = log(noisy.root, "keep", "better")
    assert logged.confidence.significance.reason == (
        "no repeated run yet: exp run --repeats N measures the spread"
    )

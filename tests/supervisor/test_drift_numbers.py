"""A machine that speeds up half-way (#34): the issue's reproduction through prepare, step and
certify on a real repository. Readings drop by 30 % after the 20th; one real 5 % speed-up among
null edits (lower is better)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from sup_helpers import submit_and_step

from autoresearch.supervisor import estimates
from autoresearch.supervisor.certify import open_any_run
from autoresearch.supervisor.prepare import prepare
from helpers import Repo, cli, sandbox_text

DRIFTING_EVAL = textwrap.dedent(
    """\
    import json, os, random
    value = float(open("value.txt").read())
    state = os.environ["NOISE_STATE"]
    n = int(open(state).read()) if os.path.exists(state) else 0
    open(state, "w").write(str(n + 1))
    level = 1.0 if n < 20 else 0.7
    print(json.dumps({"pass": True, "score": level * (value + random.Random(n).gauss(0, 1))}))
    """
)


def test_a_drifting_machine_keeps_no_null_edit_and_reports_paired_numbers(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOISE_STATE", str(tmp_path / "noise-counter"))
    repo.write("scripts/eval.py", DRIFTING_EVAL)
    repo.write("value.txt", "100\n")
    sandbox = sandbox_text(extra="  direction: lower\n", unboxed=True)
    with prepare(repo.mission(sandbox=sandbox), run_tag="D") as h:
        run_id = h.run_id
        decisions = {}
        for text, what in (("100.0", "null"), ("100.00", "null"), ("95", "real"),
                           ("95.0", "null"), ("95.00", "null")):  # fmt: skip
            done = submit_and_step(h, {"value.txt": f"{text}\n"}, description=text)
            decisions[text] = (what, done.decision)
        assert all(d != "keep" for what, d in decisions.values() if what == "null"), decisions
    certified = cli("certify", run_id, "--repeats", "4", "--json", cwd=repo.root)
    assert certified.returncode == 0, certified.stderr
    with open_any_run(repo.root, run_id) as h:
        drift = {d.label: d for d in estimates.level_drift(h.journal, h.run)}
        improvement = estimates.certified_improvement(h.journal, h.run)
    base = drift["baseline"]
    assert base.then.mean == pytest.approx(100, abs=2) and base.now.mean == pytest.approx(70, abs=2)
    assert base.significant and "the baseline now reads 7" in base.text()
    truth = 0.7 * 5 if decisions["95"][1] == "keep" else 0.0
    if improvement is None:  # nothing kept: the final state is the baseline
        assert truth == 0.0
    else:
        assert improvement.low <= truth <= improvement.high

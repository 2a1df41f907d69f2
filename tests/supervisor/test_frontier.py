"""The frontier strategy (issue 33): an archive of elites, each session started from one of
them and judged against it, on real git repositories with a scripted `cmd:` agent."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from autoresearch.agents import AgentConfig, make_agent
from autoresearch.journal import iteration_records, runs, search
from autoresearch.states import DecisionKind, RunStatus
from autoresearch.supervisor import frontier, refs
from autoresearch.supervisor.handle import RunHandle
from autoresearch.supervisor.kept import kept_steps
from autoresearch.supervisor.loop import LoopLimits, StopSignal, run_loop
from autoresearch.supervisor.prepare import prepare
from helpers import NOISY_EVAL, QuietObserver, cli, git, make_repo, sandbox_text

AGENT = f"cmd:{sys.executable} {Path(__file__).parent / 'fakes/frontier_agent.py'}"
# from the baseline (1): first +5 (6, the best), then +2 (3: better than its parent, worse
# than the best); from 6 and from 3 every try is worse
RULE = {"1": [5, 2], "6": [-1], "3": [-1]}
AGENT_CONFIG = AgentConfig(AGENT)


def agent_env(monkeypatch: pytest.MonkeyPatch, tmp: Path, rule: dict[str, list[float]]) -> Path:
    log = tmp / "sessions.log"
    monkeypatch.setenv("FRONTIER_RULE", json.dumps(rule))
    monkeypatch.setenv("FRONTIER_STATE", str(tmp / "visits.json"))
    monkeypatch.setenv("FRONTIER_LOG", str(log))
    return log


def value_at(h: RunHandle, commit: str) -> str:
    return git(h.worktree, "show", f"{commit}:value.txt")


def test_sessions_start_from_several_elites_and_a_lesser_child_enters_the_archive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = agent_env(monkeypatch, tmp_path, RULE)
    mission = make_repo(tmp_path / "repo").mission(sandbox=sandbox_text(unboxed=True))
    limits = LoopLimits(max_iterations=12, strategy="frontier", archive_size=4)
    with prepare(mission, run_tag="T1") as h:
        baseline = h.run.baseline_commit or ""
        outcome = run_loop(h, make_agent(AgentConfig(AGENT)), limits, QuietObserver(), StopSignal())
        its = iteration_records.all_iterations(h.journal, h.run_id)
        archive = frontier.archive_of(h.context)
        parents = search.parents(h.journal, h.run_id)
        branch_head = git(h.worktree, "rev-parse", h.branch_name)
        best = h.run.last_kept_commit or ""
        values = [value_at(h, e.commit) for e in archive]
        elite_refs = git(h.worktree, "for-each-ref", "--format=%(refname)", refs.prefix(h.run_id))
        steps = kept_steps(h.journal, h.run, its)
    assert outcome.status == RunStatus.COMPLETED
    assert values == ["6", "3", "1"]  # best first: the lesser child is in, beside its parent
    assert branch_head == best == archive[0].commit  # the branch did not move to it
    lesser = next(it for it in its if it.candidate_commit == archive[1].commit)
    assert lesser.decision == DecisionKind.KEEP and lesser.base_commit == baseline
    # every session's parent is in the journal, and is the base its candidate was built on
    assert set(parents) == set(range(1, 13))
    started = {int(line.split()[0]): line.split()[2] for line in log.read_text().splitlines()}
    assert started == parents
    assert len(set(parents.values())) == 3  # sessions started from every elite
    for it in its[1:]:
        if it.base_commit:
            assert it.base_commit == parents[it.iteration]
    # finalize and the report see the steps that lead to the best elite, not the other hill
    assert [(s.commit, s.before, s.after) for s in steps] == [(best, 1.0, 6.0)]
    assert {f"{refs.prefix(h.run_id)}elite/{e.entered}" for e in archive} <= set(
        elite_refs.splitlines()
    )


@pytest.mark.parametrize(
    ("flags", "search", "message"),
    [
        (["--strategy", "beam"], "", "unknown search strategy: beam (known: frontier, greedy)"),
        ([], "search:\n  strategy: beam\n", "unknown search strategy: beam"),
        ([], "search:\n  strategy: 3\n", "search.strategy must be a strategy's name"),
        ([], "search:\n  archive_size: 0\n", "search.archive_size must be a whole number >= 1"),
        (["--strategy", "frontier", "--archive-size", "0"], "", "0 is not in the range x>=1"),
    ],
)
def test_bad_search_settings_are_refused_in_one_line_before_anything_is_prepared(
    tmp_path: Path, flags: list[str], search: str, message: str
) -> None:
    repo = make_repo(tmp_path)
    repo.mission(sandbox=sandbox_text(extra=search, unboxed=True))
    done = cli("run", "missions/demo", "--agent", AGENT, *flags, cwd=repo.root)
    assert done.returncode != 0
    assert message in done.stderr and "Traceback" not in done.stderr
    assert not (repo.root / ".autoresearch/worktrees").exists()  # nothing was prepared


def test_status_json_and_the_summary_show_the_archive_and_each_iterations_parent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent_env(monkeypatch, tmp_path, RULE)
    repo = make_repo(tmp_path / "repo")
    repo.mission(sandbox=sandbox_text(unboxed=True))
    ran = cli("run", "missions/demo", "--agent", AGENT, "--strategy", "frontier",
              "--max-iterations", "9", "--no-certify", "--json", "--run-tag", "S1",
              cwd=repo.root)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    summary = json.loads(ran.stdout)
    shown = cli("status", "missions-demo-s1", "--json", cwd=repo.root)
    details = json.loads(shown.stdout)
    for archive in (summary["archive"], details["archive"]):
        assert [e["score"] for e in archive] == [6.0, 3.0, 1.0]  # best first
        assert [e["entered"] for e in archive] == [1, 9, 0]
        assert archive[0]["commit"] == details["last_kept_commit"]
        assert archive[1]["parent"] == archive[2]["commit"] and archive[2]["parent"] is None
        assert sum(e["tries"] for e in archive) == 9
    rows = details["iterations"][1:]
    assert [r["parent"] for r in rows][:2] == [details["archive"][2]["commit"]] * 1 + [
        details["archive"][0]["commit"]
    ]
    assert all(r["parent"] == r["base_commit"] for r in rows)
    text = cli("status", "missions-demo-s1", cwd=repo.root).stdout
    assert "elite" in text and "tries" in text and " from " in text
    # certify re-measures the best elite against the baseline
    certified = cli("certify", "missions-demo-s1", "--repeats", "2", "--json", cwd=repo.root)
    assert certified.returncode == 0, certified.stderr
    assert details["archive"][0]["commit"] in certified.stdout


def test_a_noise_aware_keep_compares_a_candidate_with_readings_of_its_own_parent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent_env(monkeypatch, tmp_path, {"0": [50, 20], "50": [-10], "20": [-10]})
    monkeypatch.setenv("NOISE_STATE", str(tmp_path / "noise-counter"))
    repo = make_repo(tmp_path / "repo", value="0")
    repo.write("scripts/noisy.py", NOISY_EVAL)
    mission = repo.mission(sandbox=sandbox_text("python3 scripts/noisy.py", unboxed=True))
    limits = LoopLimits(max_iterations=10, strategy="frontier")
    with prepare(mission, run_tag="N1") as h:
        baseline = h.run.baseline_commit or ""
        run_loop(h, make_agent(AGENT_CONFIG), limits, QuietObserver(), StopSignal())
        archive = frontier.archive_of(h.context)
        values = [value_at(h, e.commit) for e in archive]
        lesser = iteration_records.get_iteration(h.journal, h.run_id, archive[1].entered)
        readings = runs.readings(h.journal, h.run_id)
        best = h.run.last_kept_commit
    assert values == ["50", "20", "0"] and best == archive[0].commit
    assert lesser is not None and lesser.base_commit == baseline
    # the lesser child was tested against readings of its parent, the baseline, never the best
    ours = [
        r
        for r in readings
        if r.iteration == lesser.iteration and r.commit != lesser.candidate_commit
    ]
    assert ours and {r.commit for r in ours} == {baseline}

"""What a run froze at prepare reads back typed, from this version's records and older ones."""

from __future__ import annotations

from autoresearch.contracts.frozen import FrozenMission
from autoresearch.contracts.sandbox import ChecksSpec
from autoresearch.contracts.tune import parse_tune
from autoresearch.noise import NoiseMode, NoisePolicy

TUNE = {"file": "train.py", "seed": 3, "parameters": {"lr": {"min": 0.1, "max": 1.0}}}


def test_a_record_round_trips_through_its_json_form() -> None:
    frozen = FrozenMission(
        body="rules",
        links=("data",),
        runtime=("*.out",),
        tune=parse_tune(TUNE),
        noise=NoisePolicy(),
        sealed=("eval.py",),
        checks=ChecksSpec("pytest -q", 60.0),
        mission_text="# m",
        sandbox_text="---\n",
        relative_dir="missions/demo",
        start_commit="a" * 40,
    )
    assert FrozenMission.from_dict(frozen.to_dict()) == frozen
    assert frozen.shared_links[-1] == "data" and len(set(frozen.shared_links)) == len(
        frozen.shared_links
    )


def test_an_older_run_reads_back_with_the_defaults_it_always_had() -> None:
    old = FrozenMission.from_dict({"body": "b", "mission_text": "m", "start_commit": None})
    assert (old.relative_dir, old.runtime, old.checks, old.tune) == (".", (), None, None)
    assert old.noise is None and old.noise_policy.mode is NoiseMode.SINGLE


def test_keys_of_a_newer_version_survive_a_rewrite() -> None:
    data = {**FrozenMission().to_dict(), "lanes": {"count": 2}}
    assert FrozenMission.from_dict(data).to_dict() == data

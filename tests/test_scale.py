"""The spread within blocks (scale.py): drift between blocks and outliers do not widen it."""

from __future__ import annotations

import random

import pytest

from autoresearch.noise import NoisePolicy, Spread, pooled_spread
from autoresearch.scale import block_spread, with_today


def gaussian_blocks(seed: int, count: int = 150, level: float = 0.0) -> list[list[float]]:
    rng = random.Random(seed)
    return [
        [level + rng.gauss(0, 1) for _ in range(rng.choice((1, 2, 3, 5)))] for _ in range(count)
    ]


def test_a_step_between_blocks_adds_nothing() -> None:
    before, after = gaussian_blocks(1), gaussian_blocks(2, level=3.0)
    one_commit = [x for b in before + after for x in b]  # what pooling by commit saw
    assert pooled_spread([one_commit]).sd > 1.5
    assert block_spread(before + after).sd == pytest.approx(1.0, abs=0.1)


def test_outliers_do_not_widen_the_typical_spread() -> None:
    rng = random.Random(3)

    def reading() -> float:
        return rng.choice((-5.0, 5.0)) if rng.random() < 0.05 else rng.gauss(0, 1)

    blocks = [[reading() for _ in range(rng.choice((2, 3, 5)))] for _ in range(300)]
    plain, robust = pooled_spread(blocks), block_spread(blocks)
    assert plain.sd > 1.4
    # the spread a Huber mean of such readings really has: wider than the bulk's 1.0 (the
    # outliers it clips still count), narrower than the plain spread
    assert 1.1 < robust.sd < 1.35


@pytest.mark.parametrize(
    ("blocks", "expected"),
    [
        ([[1.0, 1.0], [2.0, 2.0, 2.0]], Spread(0.0, 3)),  # deterministic: exactly 0
        ([[5.0]], Spread(0.0, 0)),  # one reading: unknown
        ([[0.0, 2.0]], Spread(2**0.5, 1)),  # nothing cut: the plain spread
        # a quantized evaluator whose readings mostly agree: the plain spread, never 0
        ([[0.0, 0.0]] * 40 + [[0.0, 1.0]], Spread((1 / 82) ** 0.5, 41)),
    ],
)
def test_edge_cases(blocks: list[list[float]], expected: Spread) -> None:
    assert block_spread(blocks) == expected


def test_gaussian_readings_get_about_the_plain_spread() -> None:
    blocks = gaussian_blocks(4, count=20)
    found, plain = block_spread(blocks), pooled_spread(blocks)
    assert found.sd == pytest.approx(plain.sd, rel=0.05)  # the sandwich: ~1.005 on average
    assert found.df == plain.df


def test_the_run_spread_carries_todays() -> None:
    assert with_today(Spread(1.0, 40), Spread(1.5, 8)) == Spread(1.0, 40, 1.5)
    assert with_today(Spread(1.0, 40), Spread(0.0, 0)) == Spread(1.0, 40, 0.0)


def test_a_run_frozen_before_blocks_keeps_pooling_by_commit() -> None:
    assert NoisePolicy().blocks and NoisePolicy.from_dict(NoisePolicy().to_dict()).blocks
    before = {k: v for k, v in NoisePolicy().to_dict().items() if k != "spread"}
    assert NoisePolicy.from_dict(before).blocks is False

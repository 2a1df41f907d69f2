"""A tiny training job: fit a cubic curve with mini-batch SGD and momentum.

The compute budget (EPOCHS, or the evaluator's first argument) is fixed; the hyperparameters
below are what the demo tunes. Deterministic: the same parameters always give the same
validation loss.
"""

from __future__ import annotations

import math
import random
import sys

# One line of its own per hyperparameter, each under its comment: parallel lanes that tune
# different ones edit lines git can merge (sandbox.md: tune.split_lanes).

# the step size of each update
LEARNING_RATE = 0.002

# how much of the last update carries over into the next
MOMENTUM = 0.0

# examples per update
BATCH_SIZE = 64

# the pull of every weight towards zero
WEIGHT_DECAY = 0.01

EPOCHS = 12
SEED = 1234


def target(x: float) -> float:
    return 0.5 - 1.2 * x + 2.0 * x**3


def make_data(rng: random.Random, n: int) -> list[tuple[list[float], float]]:
    data = []
    for _ in range(n):
        x = rng.uniform(-1.0, 1.0)
        data.append(([1.0, x, x * x, x * x * x], target(x) + rng.gauss(0.0, 0.1)))
    return data


def mse(w: list[float], data: list[tuple[list[float], float]]) -> float:
    total = 0.0
    for features, y in data:
        pred = sum(wi * fi for wi, fi in zip(w, features, strict=True))
        total += (pred - y) ** 2
    return total / len(data)


def train(epochs: int = EPOCHS) -> float:
    rng = random.Random(SEED)
    train_set, val_set = make_data(rng, 256), make_data(rng, 128)
    w = [0.0] * 4
    velocity = [0.0] * 4
    batch = max(1, int(BATCH_SIZE))
    for _ in range(epochs):
        rng.shuffle(train_set)
        for start in range(0, len(train_set), batch):
            chunk = train_set[start : start + batch]
            grad = [0.0] * 4
            for features, y in chunk:
                err = sum(wi * fi for wi, fi in zip(w, features, strict=True)) - y
                for i, fi in enumerate(features):
                    grad[i] += 2.0 * err * fi / len(chunk)
            for i in range(4):
                g = grad[i] + WEIGHT_DECAY * w[i]
                velocity[i] = MOMENTUM * velocity[i] - LEARNING_RATE * g
                w[i] += velocity[i]
            if not all(math.isfinite(v) and abs(v) < 1e6 for v in w):
                return math.inf
    return mse(w, val_set)


if __name__ == "__main__":
    budget = int(sys.argv[1]) if len(sys.argv) > 1 else EPOCHS
    loss = train(budget)
    if not math.isfinite(loss):
        print("training diverged", file=sys.stderr)
        sys.exit(1)
    print(f"validation mse after {budget} epochs: {loss:.6f}")
    print(f"METRIC val_loss={loss:.6f}")

"""Evaluator: sort fixed inputs, check the output, print METRIC lines.

Exit 1 when any output is wrong: a wrong sort is a crash, never a score.
"""

from __future__ import annotations

import random
import sys

from hybrid_sort import Counter, hybrid_sort


def inputs() -> dict[str, list[int]]:
    rng = random.Random(7)
    shuffled = [rng.randrange(10_000) for _ in range(3_000)]
    nearly = sorted(shuffled)
    for _ in range(30):
        i, j = rng.randrange(3_000), rng.randrange(3_000)
        nearly[i], nearly[j] = nearly[j], nearly[i]
    return {"random": shuffled, "nearly_sorted": nearly, "reversed": sorted(shuffled)[::-1]}


def main() -> int:
    total = 0
    for name, data in inputs().items():
        items = list(data)
        counter = Counter()
        hybrid_sort(items, counter)
        if items != sorted(data):
            print(f"wrong output for {name}", file=sys.stderr)
            return 1
        print(f"METRIC {name}_comparisons={counter.comparisons}")
        total += counter.comparisons
    print(f"METRIC comparisons={total}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

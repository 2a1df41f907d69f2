"""Evaluator: replay a fixed request trace and report the hit rate as JSON.

The trace mixes a skewed hot set with periodic one-off scans (deterministic seed). The
cache must never hold more than CAPACITY keys: a violation is a failure, not a score.
"""

from __future__ import annotations

import json
import random

from cache import CAPACITY, Cache


def trace(seed: int = 42, length: int = 60_000) -> list[int]:
    rng = random.Random(seed)
    requests: list[int] = []
    scan_key = 1_000_000
    while len(requests) < length:
        if rng.random() < 0.003:  # a scan: many keys seen once
            requests.extend(range(scan_key, scan_key + 250))
            scan_key += 250
        else:
            requests.append(int(rng.paretovariate(1.1)) % 5_000)
    return requests[:length]


def main() -> None:
    cache = Cache()
    hits = 0
    requests = trace()
    for key in requests:
        hits += cache.get(key)
        if len(cache) > CAPACITY:
            print(json.dumps({"pass": False, "reason": "capacity exceeded"}))
            return
    print(json.dumps({"pass": True, "score": round(hits / len(requests), 6), "hits": hits}))


if __name__ == "__main__":
    main()

"""A fixed-capacity cache and the policy that decides what it keeps.

Segmented LRU: new keys enter a probation segment; a hit there promotes the key to a
protected segment that holds PROTECTED_FRACTION of the capacity. ADMIT_AFTER > 1 makes a
key earn admission by being requested that many times while it is not cached (scan
resistance). The capacity is fixed; the policy and its parameters are what may change.
"""

from __future__ import annotations

from collections import Counter, OrderedDict

CAPACITY = 200
PROTECTED_FRACTION = 0.2
ADMIT_AFTER = 1


class Cache:
    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = capacity
        self.protected_size = int(capacity * PROTECTED_FRACTION)
        self.probation: OrderedDict[int, None] = OrderedDict()
        self.protected: OrderedDict[int, None] = OrderedDict()
        self.misses: Counter[int] = Counter()

    def __len__(self) -> int:
        return len(self.probation) + len(self.protected)

    def get(self, key: int) -> bool:
        """Serve one request; True on a hit."""
        if key in self.protected:
            self.protected.move_to_end(key)
            return True
        if key in self.probation:
            del self.probation[key]
            self._protect(key)
            return True
        self.misses[key] += 1
        if self.misses[key] >= ADMIT_AFTER:
            del self.misses[key]
            self._admit(key)
        return False

    def _protect(self, key: int) -> None:
        self.protected[key] = None
        while len(self.protected) > max(self.protected_size, 0):
            demoted, _ = self.protected.popitem(last=False)
            self.probation[demoted] = None
        self._evict()

    def _admit(self, key: int) -> None:
        self.probation[key] = None
        self._evict()

    def _evict(self) -> None:
        while len(self) > self.capacity:
            if self.probation:
                self.probation.popitem(last=False)
            else:
                self.protected.popitem(last=False)

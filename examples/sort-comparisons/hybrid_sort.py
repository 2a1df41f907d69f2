"""A hybrid merge sort that counts its comparisons.

Runs shorter than INSERTION_THRESHOLD are sorted by insertion sort; longer ones are merged.
When GALLOP is 1, merging first checks whether the two halves are already in order.
"""

from __future__ import annotations

INSERTION_THRESHOLD = 32
GALLOP = 0


class Counter:
    def __init__(self) -> None:
        self.comparisons = 0

    def less(self, a: int, b: int) -> bool:
        self.comparisons += 1
        return a < b


def insertion_sort(items: list[int], lo: int, hi: int, c: Counter) -> None:
    for i in range(lo + 1, hi):
        value = items[i]
        j = i - 1
        while j >= lo and c.less(value, items[j]):
            items[j + 1] = items[j]
            j -= 1
        items[j + 1] = value


def merge(items: list[int], lo: int, mid: int, hi: int, c: Counter) -> None:
    if GALLOP and not c.less(items[mid], items[mid - 1]):
        return  # already in order
    left, right = items[lo:mid], items[mid:hi]
    i = j = 0
    k = lo
    while i < len(left) and j < len(right):
        if c.less(right[j], left[i]):
            items[k] = right[j]
            j += 1
        else:
            items[k] = left[i]
            i += 1
        k += 1
    items[k:hi] = left[i:] + right[j:]


def hybrid_sort(items: list[int], c: Counter, lo: int = 0, hi: int | None = None) -> None:
    hi = len(items) if hi is None else hi
    if hi - lo <= max(int(INSERTION_THRESHOLD), 1):
        insertion_sort(items, lo, hi, c)
        return
    mid = (lo + hi) // 2
    hybrid_sort(items, c, lo, mid)
    hybrid_sort(items, c, mid, hi)
    merge(items, lo, mid, hi, c)

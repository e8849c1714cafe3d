"""When each row of the board is next due for a look: a heap of (when, key, mtime). An entry
stands for the mtime it was made for; a row written since has a newer one, so the old one is
passed over. A second of an idle board then costs the rows due, not a look at every row."""

from __future__ import annotations

import heapq


class DueTimes:
    def __init__(self) -> None:
        self._heap: list[tuple[float, str, float]] = []
        self._mtimes: dict[str, float] = {}
        """The mtime each key's standing entry is for."""

    def add(self, key: str, mtime: float, when: float, *, again: bool = False) -> None:
        """Key `key` (written at `mtime`) is due at `when`; nothing when it already has an
        entry for that mtime, unless `again` (the entry just came due)."""
        if not again and self._mtimes.get(key) == mtime:
            return
        self._mtimes[key] = mtime
        heapq.heappush(self._heap, (when, key, mtime))

    def scheduled(self, key: str, mtime: float) -> bool:
        return self._mtimes.get(key) == mtime

    def forget(self, key: str) -> None:
        """The key is gone: back later, it is scheduled afresh."""
        self._mtimes.pop(key, None)

    def pop_due(self, now: float) -> list[tuple[str, float]]:
        """The (key, mtime) of the entries due by `now` that still stand, taken off."""
        heap, out = self._heap, []
        while heap and heap[0][0] <= now:
            _, key, mtime = heapq.heappop(heap)
            if self._mtimes.get(key) == mtime:
                out.append((key, mtime))
        return out

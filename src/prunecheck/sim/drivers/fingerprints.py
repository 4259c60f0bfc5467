"""A set of 64-bit fingerprints in flat memory: the explorer's visited set.

TLC keeps a fingerprint of every state it has seen instead of the state;
so does :func:`~.explore.explore`.  A Python ``set`` of ints costs about
60–90 bytes an entry (the int object and the table slot); this table is one
``array('Q')`` with open addressing and linear probing, 8 bytes a slot,
kept between 3/8 and 3/4 full: 10.7–21.3 bytes an entry.

Zero marks an empty slot, so the fingerprint 0 is stored as 1 (one more
value that collides, which changes nothing measurable).

Complexity: :meth:`FingerprintSet.add` is O(1) expected (1 + 1/(1-α)²)/2
probes at load α ≤ 3/4 when fingerprints are uniform; growing rehashes
every entry, amortised O(1).

Examples
--------
>>> seen = FingerprintSet()
>>> seen.add(12345), seen.add(12345), seen.add(0), 12345 in seen, len(seen)
(True, False, True, True, 2)
>>> collision_probability(1_000_000) < 3e-8
True
"""

from __future__ import annotations

from array import array

__all__ = ["FingerprintSet", "collision_probability", "fingerprint"]

_MASK64 = (1 << 64) - 1


def fingerprint(key: object) -> int:
    """A 64-bit unsigned fingerprint of a hashable key (Python's own hash of
    it: a tuple hash mixes its items' hashes with xxHash's rounds).  String
    hashes are salted per process (``PYTHONHASHSEED``), so a collision, if
    one ever happened, would not repeat on the next run; state counts are
    the same run to run unless one does."""
    return hash(key) & _MASK64


def collision_probability(states: int) -> float:
    """The probability that two of ``states`` distinct states share a
    fingerprint, assuming uniform 64-bit fingerprints: n(n-1)/2⁶⁵ (the
    birthday bound; TLC prints the same "optimistic" kind of estimate).
    A collision would make the explorer skip one state it believes seen.

    >>> f"{collision_probability(1_019_684):.1e}"
    '2.8e-08'
    """
    return states * (states - 1) / 2.0**65


class FingerprintSet:
    """Fingerprints (ints in [0, 2⁶⁴)) in an open-addressing ``array('Q')``."""

    __slots__ = ("_count", "_limit", "_mask", "_slots")

    def __init__(self, capacity: int = 1 << 10) -> None:
        size = 16
        while size * 3 < capacity * 4:
            size *= 2
        self._slots = array("Q", bytes(8 * size))
        self._mask = size - 1
        self._limit = size * 3 // 4
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def __contains__(self, fp: int) -> bool:
        fp = fp or 1
        slots, mask = self._slots, self._mask
        i = fp & mask
        while True:
            held = slots[i]
            if held == fp:
                return True
            if not held:
                return False
            i = (i + 1) & mask

    def add(self, fp: int) -> bool:
        """Insert ``fp``; True if it was not there yet."""
        fp = fp or 1
        slots, mask = self._slots, self._mask
        i = fp & mask
        while True:
            held = slots[i]
            if held == fp:
                return False
            if not held:
                break
            i = (i + 1) & mask
        slots[i] = fp
        self._count += 1
        if self._count > self._limit:
            self._grow()
        return True

    @property
    def nbytes(self) -> int:
        """Bytes of the table itself (what grows with the states)."""
        return self._slots.buffer_info()[1] * self._slots.itemsize

    def _grow(self) -> None:
        old = self._slots
        size = 2 * len(old)
        slots = array("Q", bytes(8 * size))
        mask = size - 1
        for fp in old:
            if fp:
                i = fp & mask
                while slots[i]:
                    i = (i + 1) & mask
                slots[i] = fp
        self._slots, self._mask, self._limit = slots, mask, size * 3 // 4

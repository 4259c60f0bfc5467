"""The explorer's visited set: 64-bit fingerprints in one flat array."""

from __future__ import annotations

import random

from prunecheck.sim.drivers.fingerprints import FingerprintSet, collision_probability, fingerprint


def test_holds_what_a_set_holds_through_growth() -> None:
    rng = random.Random(7)
    values = [rng.getrandbits(64) for _ in range(20_000)] + [0, 1, 2**64 - 1]
    values += values[:500]  # duplicates
    table = FingerprintSet(capacity=16)
    reference: set[int] = set()
    for value in values:
        stored = value or 1  # 0 marks an empty slot and is stored as 1
        assert table.add(value) == (stored not in reference)
        reference.add(stored)
    assert len(table) == len(reference)
    assert all(v in table for v in values)
    assert sum(rng.getrandbits(64) in table for _ in range(1_000)) == 0
    # Flat memory: at most 8 bytes / (3/8 load) a fingerprint after growing.
    assert table.nbytes <= len(table) * 8 * 8 / 3


def test_fingerprint_is_64_bit_and_follows_the_key() -> None:
    key = (1, ("m1", 30), None)
    assert 0 <= fingerprint(key) < 2**64
    assert fingerprint(key) == fingerprint((1, ("m1", 30), None))
    assert fingerprint(key) != fingerprint((1, ("m1", 31), None))


def test_collision_probability_is_the_birthday_bound() -> None:
    assert collision_probability(1) == 0.0
    assert collision_probability(2) == 2 / 2.0**65
    assert 2.8e-8 < collision_probability(1_019_684) < 2.9e-8

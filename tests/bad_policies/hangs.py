"""Policies that never answer."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from prunecheck.model.policies import ContextView


def sleeps(view: ContextView, need: int) -> list[str]:
    time.sleep(3600)
    return []


def busy(view: ContextView, need: int) -> NoReturn:
    while True:
        pass


def endless(view: ContextView, need: int) -> Iterator[str]:
    while True:
        yield "m1"


def memory(view: ContextView, need: int) -> NoReturn:
    hog = []
    while True:
        hog.append(bytearray(256 * 2**20))


def big_alloc(view: ContextView, need: int) -> list[bytearray]:
    return [bytearray(64 * 2**30)]

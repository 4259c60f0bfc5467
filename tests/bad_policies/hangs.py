"""Policies that never answer."""

from __future__ import annotations

import os
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


def busy_counted(view: ContextView, need: int) -> NoReturn:
    """``busy``, after adding a line to the file named by $HANG_MARK: a test
    counts the calls that hung (each costs the policy timeout)."""
    with open(os.environ["HANG_MARK"], "a", encoding="utf-8") as mark:
        mark.write("hung\n")
    while True:
        pass

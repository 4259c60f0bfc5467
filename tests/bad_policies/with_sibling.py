"""A policy that imports a module sitting next to it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sibling_helper import oldest_first

if TYPE_CHECKING:
    from prunecheck.model.policies import ContextView


def select(view: ContextView, need: int) -> list[str]:
    return oldest_first(view, need)

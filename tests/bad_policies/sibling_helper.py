"""A helper module imported by with_sibling.py."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from prunecheck.model.policies import ContextView


def oldest_first(view: ContextView, need: int) -> list[str]:
    out, freed = [], 0
    for m in view.messages:
        if freed >= need:
            break
        if m.role != "system":
            out.append(m.id)
            freed += m.tokens
    return out

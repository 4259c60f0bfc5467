"""Reading a trimmer's output back as actions: kept, evicted, summarized, cleared.

A list function returns a list of items (messages or content blocks).  Each
output item has been matched against the input as one of:

* **kept** — an input item, as it was (same object or an equal copy);
* **edited** — an input item identified by its call id (a tool result, an
  assistant message that issued calls) whose content changed;
* **new** — an item that is not in the input: a summary, or a placeholder
  such as ``"[4 earlier messages removed]"``.

:func:`read_back` turns that into what the runtime would do, in the native
action vocabulary, so the verdict judges it exactly like a built-in policy:

* a message none of whose identity parts came back is removed: it is
  *summarized* into the new item(s) that stand in its place (between the
  same kept neighbours), otherwise *evicted*;
* an edited message whose content got shorter is *cleared* — fully, or
  partially to the size left (:class:`~prunecheck.model.actions.Clear`
  with ``tokens``);
* a new item that stands in place of no removed message cannot be mapped
  back: a :class:`~prunecheck.model.errors.PolicyError` names it.

So a summary that swallows half of a unit is a ``Summarize`` of half a unit,
which the invariant reports as the invalid prune it is.  O(items).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from prunecheck.model.actions import Action, Clear, Summarize

__all__ = ["Item", "ItemKind", "read_back"]

Position = tuple[int, int]


class ItemKind(StrEnum):
    """How an output item relates to the input."""

    KEPT = "kept"
    EDITED = "edited"
    NEW = "new"


@dataclass(frozen=True, slots=True)
class Item:
    """One output item, matched.

    Attributes
    ----------
    kind: kept, edited or new.
    position: the input part it is (None for a new item).
    tokens: for an edited or new item, the size of its content now.
    label: how an error names it (``"output position 3"``).
    text: its text (for a new item: the summary's words).
    """

    kind: ItemKind
    position: Position | None
    tokens: int = 0
    label: str = ""
    text: str = ""


def read_back(
    order: Sequence[str],
    keys: Mapping[str, Sequence[Position]],
    sizes: Mapping[str, int],
    items: Sequence[Item],
    fail: Callable[[str], Exception],
) -> list[str | Action]:
    """The actions an output means (evicted ids as plain strings).

    Parameters
    ----------
    order: the ids of the messages the function was given, in input order.
    keys: per id, the input parts that carry its identity.
    sizes: per id, its tokens now.
    items: the output, matched, in output order (anchors already in order).
    fail: makes the error raised for an item that cannot be mapped back.

    Examples
    --------
    >>> keys = {"m1": [(0, 0)], "m2": [(1, 0)], "m3": [(2, 0)]}
    >>> out = [Item(ItemKind.NEW, None, 5, "output position 0", "summary"),
    ...        Item(ItemKind.KEPT, (2, 0))]
    >>> read_back(["m1", "m2", "m3"], keys, {"m1": 9, "m2": 9, "m3": 9}, out, ValueError)
    [Summarize(message_ids=('m1', 'm2'), tokens=5, text='summary')]
    """
    present = {it.position: it for it in items if it.position is not None}
    kept = [mid for mid in order if all(k in present for k in keys.get(mid, ()))]
    kept_set = set(kept)
    removed = [mid for mid in order if mid not in kept_set]
    first = {mid: min(keys[mid]) for mid in order if keys.get(mid)}
    actions: list[str | Action] = []
    summarized: set[str] = set()
    groups: dict[tuple[Position | None, Position | None], list[Item]] = {}
    previous: Position | None = None
    for at, item in enumerate(items):
        if item.position is not None:
            previous = item.position
            continue
        following = next((x.position for x in items[at + 1 :] if x.position is not None), None)
        groups.setdefault((previous, following), []).append(item)
    for (low, high), news in groups.items():
        inside = [
            mid
            for mid in removed
            if mid in first
            and (low is None or first[mid] > low)
            and (high is None or first[mid] < high)
        ]
        if not inside:
            raise fail(
                f"returned a message that is not in its input at {news[0].label} "
                f"({news[0].text[:60]!r}): no removed message stands where it is, so "
                "it is neither a kept message, an edit, nor a summary of what it "
                "replaced."
            )
        summarized.update(inside)
        actions.append(
            Summarize(
                tuple(inside),
                max(1, sum(n.tokens for n in news)),
                " ".join(n.text for n in news)[:200],
            )
        )
    evicted: list[str | Action] = [mid for mid in removed if mid not in summarized]
    for mid in kept:
        edits = [present[k] for k in keys[mid] if present[k].kind is ItemKind.EDITED]
        if edits:
            left = sum(e.tokens for e in edits)
            if left < sizes.get(mid, 0):
                actions.append(Clear(mid, max(1, left)))
    return evicted + actions

"""OpenAI Responses' server-side state, as the fake endpoint keeps it.

A Responses request may send only what is new and name the rest:
``previous_response_id`` continues the conversation of a stored response
(its input and its output come before this request's ``input``), and an
``{"type": "item_reference", "id": …}`` input item stands for an item the
server stored.  The provider judges the conversation those make, not the
bytes sent; so does the endpoint: :meth:`ResponseStore.conversation`
fills them in, :meth:`ResponseStore.remember` stores each answered
response unless the request said ``"store": false``.  A
``previous_response_id`` the store does not hold gets OpenAI's 400
(:data:`NOT_FOUND`).  Thread-safe.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence

__all__ = ["NOT_FOUND", "ResponseStore", "input_items"]

#: OpenAI's text for a previous_response_id it does not hold (``"param":
#: "previous_response_id"``, ``"code": "previous_response_not_found"``), as observed:
#: https://github.com/maximhq/bifrost/issues/2441
NOT_FOUND = "Previous response with id '{id}' not found."


def input_items(body: Mapping[str, object]) -> list[object]:
    """A request's ``input`` as a list of items (a bare string is one user message)."""
    raw = body.get("input")
    if isinstance(raw, str):
        return [{"role": "user", "content": raw}]
    return list(raw) if isinstance(raw, list) else []


class ResponseStore:
    """Stored responses (their whole conversation) and their items, by id."""

    def __init__(self) -> None:
        self._conversations: dict[str, list[object]] = {}
        self._items: dict[str, object] = {}
        self._lock = threading.Lock()

    def conversation(
        self, body: Mapping[str, object]
    ) -> tuple[dict[str, object] | None, str | None]:
        """The body as the provider reads it, and an error text.

        Returns ``(None, None)`` when the body names no stored state,
        ``(expanded, None)`` when it does (``input`` then holds the whole
        conversation, ``previous_response_id`` dropped), ``(None, text)``
        when its ``previous_response_id`` is not stored.
        """
        previous = body.get("previous_response_id")
        items = input_items(body)
        refers = any(_is_reference(i) for i in items)
        if not previous and not refers:
            return None, None
        with self._lock:
            before: list[object] = []
            if isinstance(previous, str) and previous:
                if previous not in self._conversations:
                    return None, NOT_FOUND.format(id=previous)
                before = list(self._conversations[previous])
            filled = [self._items.get(_ref(i), i) if _is_reference(i) else i for i in items]
        expanded = {k: v for k, v in body.items() if k != "previous_response_id"}
        expanded["input"] = before + filled
        return expanded, None

    def remember(
        self, response_id: str, body: Mapping[str, object], output: Sequence[Mapping[str, object]]
    ) -> None:
        """Store a response answering ``body`` (already expanded) with ``output``,
        unless the request asked ``"store": false``."""
        if body.get("store") is False:
            return
        with self._lock:
            items = [*input_items(body), *output]
            self._conversations[response_id] = items
            for item in items:  # what the server stored, referable by id
                if isinstance(item, Mapping) and isinstance(item.get("id"), str):
                    self._items[str(item["id"])] = dict(item)


def _is_reference(item: object) -> bool:
    return isinstance(item, Mapping) and item.get("type") == "item_reference"


def _ref(item: object) -> str:
    return str(item.get("id")) if isinstance(item, Mapping) else ""

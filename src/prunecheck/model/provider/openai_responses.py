"""OpenAI Responses: its item pairing rules, as data.

The body is ``{"model", "input": [...]}``, a list of items: messages,
``function_call`` items (``call_id``), ``function_call_output`` items that
answer them, and ``reasoning`` items (``rs_…``) that must travel with the
item that followed them.  OpenAI's error body names ``"param": "input"``;
our paths read ``input[N]``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from prunecheck.model.context import Message, Role
from prunecheck.model.provider._shape import fail, id_field, items_of, json_type, objects
from prunecheck.model.provider._wording import Tools, assistant_text, call, call_id, text
from prunecheck.model.provider.rule import ProviderError, Rule
from prunecheck.model.provider.vocabulary import (
    CALL_WITHOUT_RESULT,
    ITEM_WITHOUT_REASONING,
    REASONING_WITHOUT_ITEM,
    RESULT_WITHOUT_CALL,
    Provider,
)

__all__ = [
    "CALL_UNANSWERED",
    "ITEM_WITHOUT_ITS_REASONING",
    "REASONING_ALONE",
    "RESULT_ORPHANED",
    "RULES",
    "render",
    "validate",
]

_P = Provider.OPENAI_RESPONSES

RESULT_ORPHANED = Rule(
    id="openai-responses.result_without_call",
    provider=_P,
    kind=RESULT_WITHOUT_CALL,
    template="No tool call found for function call output with call_id {id}.",
    location="input[N]",
    # Observed, with "param": "input": https://github.com/continuedev/continue/issues/10092
    source="https://github.com/continuedev/continue/issues/10092",
)
CALL_UNANSWERED = Rule(
    id="openai-responses.call_without_result",
    provider=_P,
    kind=CALL_WITHOUT_RESULT,
    template="No tool output found for function call {id}.",
    location="input[N]",
    # Observed, with "param": "input": https://github.com/tjardoo/openai-client/pull/124
    source="https://github.com/tjardoo/openai-client/pull/124",
)
REASONING_ALONE = Rule(
    id="openai-responses.reasoning_without_item",
    provider=_P,
    kind=REASONING_WITHOUT_ITEM,
    template=("Item '{id}' of type 'reasoning' was provided without its required following item."),
    location="input[N]",
    # Observed: https://github.com/continuedev/continue/issues/8933
    source="https://github.com/continuedev/continue/issues/8933",
)
#: Needs the server's record of which reasoning item preceded an output item (the body
#: does not say): recognized in logs; the server-side state's replay checks it.
ITEM_WITHOUT_ITS_REASONING = Rule(
    id="openai-responses.item_without_reasoning",
    provider=_P,
    kind=ITEM_WITHOUT_REASONING,
    template=(
        "Item '{id}' of type 'message' was provided without its required 'reasoning' item: '{ref}'."
    ),
    location="input[N]",
    # Observed: https://github.com/continuedev/continue/issues/11309
    source="https://github.com/continuedev/continue/issues/11309",
    emitted=False,
)

#: Every rule, the one the validator answers for its kind first.
RULES = (RESULT_ORPHANED, CALL_UNANSWERED, REASONING_ALONE, ITEM_WITHOUT_ITS_REASONING)

_MODEL = "gpt-4.1"


def _kind(item: dict[str, object], where: str) -> str:
    kind = item.get("type")
    if kind is None and "role" in item:
        return "message"  # an easy input message: {"role", "content"}
    if not isinstance(kind, str):
        fail(
            where,
            f"is an input item without a string 'type' (found {json_type(kind)}).",
            'Items look like {"type": "message", "role": "user", "content": "..."} or '
            '{"type": "function_call_output", "call_id": ..., "output": "..."}.',
        )
    return kind


def _answers(item: dict[str, object], kind: str) -> bool:
    """Whether ``item`` is an output item a reasoning item may precede:
    an assistant message or a tool call of any kind."""
    if kind == "message":
        return item.get("role") == "assistant"
    return kind.endswith("_call")


def validate(payload: object, source: str) -> list[ProviderError]:
    """Every item pairing error of a Responses body, in input order.

    Each ``function_call_output`` must answer a ``function_call`` earlier in
    ``input``, each ``function_call`` must be answered by an output after
    it, and each ``reasoning`` item must be followed by the output item it
    preceded (an assistant message or a call).  A body chained to server
    state (``previous_response_id`` or ``conversation``) may answer calls
    the server holds: its outputs are not checked for their calls.
    O(number of items).
    """
    raw = items_of(payload, "input", source, "input items", '{"type": ..., ...}')
    items = objects(raw, source, "input", "an input item is an object with a 'type'")
    chained = isinstance(payload, dict) and bool(
        payload.get("previous_response_id") or payload.get("conversation")
    )
    found: list[tuple[int, ProviderError]] = []
    calls: dict[str, int] = {}  # call_id -> index of its function_call
    answered: set[str] = set()
    kinds = [_kind(item, f"{source}: input[{i}]") for i, item in enumerate(items)]
    for i, (item, kind) in enumerate(zip(items, kinds, strict=True)):
        where = f"{source}: input[{i}]"
        if kind == "function_call":
            calls.setdefault(id_field(item, "call_id", where, "a function_call item"), i)
        elif kind == "function_call_output":
            cid = id_field(item, "call_id", where, "a function_call_output item")
            if cid in calls:
                answered.add(cid)
            elif not chained:
                found.append((i, RESULT_ORPHANED.error(f"input[{i}]", (cid,))))
        elif kind == "reasoning":
            rid = id_field(item, "id", where, "a reasoning item")
            if i + 1 == len(items) or not _answers(items[i + 1], kinds[i + 1]):
                found.append((i, REASONING_ALONE.error(f"input[{i}]", (rid,))))
    for cid, at in calls.items():
        if cid not in answered:
            found.append((at, CALL_UNANSWERED.error(f"input[{at}]", (cid,))))
    found.sort(key=lambda pair: pair[0])
    return [error for _, error in found]


def render(messages: Iterable[Message], tools: Tools, model: str | None) -> dict[str, object]:
    """The Responses body for ``messages``: one message item per user,
    system or assistant text, one ``function_call`` item per call (after its
    assistant's text), one ``function_call_output`` item per tool message."""
    items: list[dict[str, object]] = []
    for m in messages:
        if m.summary_of or m.role in (Role.USER, Role.SYSTEM):
            role = "user" if m.summary_of else str(m.role)
            items.append({"type": "message", "role": role, "content": text(m)})
        elif m.role == Role.TOOL:
            items.append({"type": "function_call_output", "call_id": call_id(m), "output": text(m)})
        else:
            said = assistant_text(m)
            if said is not None:
                items.append({"type": "message", "role": "assistant", "content": said})
            for cid in m.tool_calls:
                name, path = call(cid, tools)
                arguments = json.dumps({"path": path})
                items.append({"type": "function_call", "call_id": cid, "name": name,
                              "arguments": arguments})  # fmt: skip
    return {"model": model or _MODEL, "input": items}

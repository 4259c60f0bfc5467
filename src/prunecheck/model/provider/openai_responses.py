"""OpenAI Responses: its item pairing rules, as data.

The body is ``{"model", "input": [...]}``, a list of items: messages,
``function_call`` items (``call_id``), ``function_call_output`` items that
answer them, and ``reasoning`` items (``rs_…``) that must travel with the
item that followed them.  OpenAI's error body names ``"param": "input"``;
our paths read ``input[N]``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

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
    "reasoning_record",
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
#: An output item sent without the reasoning item the model produced before it.  The
#: body does not say which reasoning item preceded an output item: the server's record
#: of its stored responses does (``stored`` of :func:`validate`, :func:`reasoning_record`
#: for our model's history).  The item is named by its ``id`` (``fc_…`` for a call,
#: ``msg_…`` for a message), which a client sends when it replays the output it got.
ITEM_WITHOUT_ITS_REASONING = Rule(
    id="openai-responses.item_without_reasoning",
    provider=_P,
    kind=ITEM_WITHOUT_REASONING,
    template=(
        "Item '{id}' of type '{item}' was provided without its required 'reasoning' item: '{ref}'."
    ),
    location="input[N]",
    # Observed for a function_call, with "param": "input":
    # https://github.com/continuedev/continue/issues/10018 (also cline/cline#12242,
    # openai/openai-agents-python via VRSEN/agency-swarm#367); for a message:
    # https://github.com/continuedev/continue/issues/11309
    source="https://github.com/continuedev/continue/issues/10018",
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


def validate(
    payload: object, source: str, stored: Mapping[str, str] | None = None
) -> list[ProviderError]:
    """Every item pairing error of a Responses body, in input order.

    Each ``function_call_output`` must answer a ``function_call`` earlier in
    ``input``, each ``function_call`` must be answered by an output after
    it, and each ``reasoning`` item must be followed by the output item it
    preceded (an assistant message or a call).  A body chained to server
    state (``previous_response_id`` or ``conversation``) may answer calls
    the server holds: its outputs are not checked for their calls.

    ``stored`` is the server's record of its stored responses: output item
    id -> the id of the reasoning item the model produced just before it.
    With it, an item it names must come with that reasoning item (else
    :data:`ITEM_WITHOUT_ITS_REASONING`), and a reasoning item it names must
    be followed by that very item (else :data:`REASONING_ALONE`).  Without
    it (a body read alone), only the second is checked, by the kind of the
    item that follows.  O(number of items).

    >>> body = {"input": [{"type": "message", "role": "user", "content": "hi"},
    ...     {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "f",
    ...      "arguments": "{}"},
    ...     {"type": "function_call_output", "call_id": "c1", "output": "ok"}]}
    >>> validate(body, "body")
    []
    >>> print(validate(body, "body", {"fc_1": "rs_1"})[0].text)
    Item 'fc_1' of type 'function_call' was provided without its required 'reasoning' item: 'rs_1'.
    """
    raw = items_of(payload, "input", source, "input items", '{"type": ..., ...}')
    items = objects(raw, source, "input", "an input item is an object with a 'type'")
    chained = isinstance(payload, dict) and bool(
        payload.get("previous_response_id") or payload.get("conversation")
    )
    record = dict(stored or {})
    needed = set(record.values())  # reasoning items the record pairs with an item
    found: list[tuple[int, ProviderError]] = []
    calls: dict[str, int] = {}  # call_id -> index of its function_call
    answered: set[str] = set()
    kinds = [_kind(item, f"{source}: input[{i}]") for i, item in enumerate(items)]
    sent = {str(item.get("id")) for item, kind in zip(items, kinds, strict=True)
            if kind == "reasoning"}  # fmt: skip
    for i, (item, kind) in enumerate(zip(items, kinds, strict=True)):
        where = f"{source}: input[{i}]"
        own = item.get("id")
        if isinstance(own, str) and own in record and not chained and record[own] not in sent:
            error = ITEM_WITHOUT_ITS_REASONING.error(f"input[{i}]", (own, record[own]), item=kind)
            found.append((i, error))
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
            follower = items[i + 1] if i + 1 < len(items) else None
            if follower is None:
                alone = True
            elif rid in needed:
                alone = record.get(str(follower.get("id"))) != rid
            else:
                alone = not _answers(follower, kinds[i + 1])
            if alone:
                found.append((i, REASONING_ALONE.error(f"input[{i}]", (rid,))))
    for cid, at in calls.items():
        if cid not in answered:
            found.append((at, CALL_UNANSWERED.error(f"input[{at}]", (cid,))))
    found.sort(key=lambda pair: pair[0])
    return [error for _, error in found]


def _first_item(m: Message) -> str:
    """The id of the first output item ``m`` renders as (its words, else its
    first call): the item its reasoning item preceded."""
    if assistant_text(m) is not None or not m.tool_calls:
        return f"msg_{m.id}"
    return f"fc_{m.tool_calls[0]}"


def reasoning_record(messages: Iterable[Message]) -> dict[str, str]:
    """The server's record of a history's reasoning: for each assistant
    message the model produced after a reasoning item, the id of its first
    output item (as :func:`render` names it) -> the reasoning item's id.

    >>> ms = [Message("t1", Role.ASSISTANT, 5, 1, 0.0, thought=True),
    ...       Message("a1", Role.ASSISTANT, 5, 1, 1.0, tool_calls=("c1",), after_thought="t1")]
    >>> reasoning_record(ms)
    {'fc_c1': 'rs_t1'}
    >>> reasoning_record(ms[:1])  # the call it preceded is not in the history
    {'(the item after rs_t1)': 'rs_t1'}

    A reasoning message whose following message is not in ``messages`` (a
    trimmer evicted it) is recorded as preceding an item the request does
    not send, which is what the server's record says of it.
    """
    messages = tuple(messages)
    record = {_first_item(m): f"rs_{m.after_thought}" for m in messages if m.after_thought}
    followed = set(record.values())
    for m in messages:
        if m.thought and f"rs_{m.id}" not in followed:
            record[f"(the item after rs_{m.id})"] = f"rs_{m.id}"
    return record


def render(messages: Iterable[Message], tools: Tools, model: str | None) -> dict[str, object]:
    """The Responses body for ``messages``: one message item per user,
    system or assistant text, one ``function_call`` item per call (after its
    assistant's text), one ``function_call_output`` item per tool message,
    one ``reasoning`` item per reasoning message (``rs_<id>``).  The output
    items of an assistant message that followed a reasoning item are sent
    as the client replays a response's output: with their ids (``msg_<id>``,
    ``fc_<call id>``), which the server knows them by."""
    items: list[dict[str, object]] = []
    for m in messages:
        if m.thought and not m.summary_of:
            items.append({"type": "reasoning", "id": f"rs_{m.id}", "summary": []})
        elif m.summary_of or m.role in (Role.USER, Role.SYSTEM):
            role = "user" if m.summary_of else str(m.role)
            items.append({"type": "message", "role": role, "content": text(m)})
        elif m.role == Role.TOOL:
            items.append({"type": "function_call_output", "call_id": call_id(m), "output": text(m)})
        else:
            said = assistant_text(m)
            replayed = bool(m.after_thought)
            if said is not None and replayed:
                part = {"type": "output_text", "text": said, "annotations": []}
                items.append({"type": "message", "id": f"msg_{m.id}", "role": "assistant",
                              "status": "completed", "content": [part]})  # fmt: skip
            elif said is not None:
                items.append({"type": "message", "role": "assistant", "content": said})
            for cid in m.tool_calls:
                name, path = call(cid, tools)
                arguments = json.dumps({"path": path})
                known = {"id": f"fc_{cid}"} if replayed else {}
                items.append({"type": "function_call", **known, "call_id": cid, "name": name,
                              "arguments": arguments})  # fmt: skip
    return {"model": model or _MODEL, "input": items}

"""OpenAI Chat Completions: its tool pairing rules, as data.

The body is ``{"model", "messages": [...]}``; an assistant message carries
``tool_calls`` and each answer is a ``tool`` message with ``tool_call_id``.
OpenAI's error body names the message as ``"param": "messages.[N].role"``;
our paths read ``messages.N``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from prunecheck.model.context import Message, Role
from prunecheck.model.provider._shape import fail, id_field, items_of, json_type, objects, role_of
from prunecheck.model.provider._wording import Tools, assistant_text, call, call_id, text
from prunecheck.model.provider.rule import ProviderError, Rule
from prunecheck.model.provider.vocabulary import (
    CALL_WITHOUT_RESULT,
    RESULT_WITHOUT_CALL,
    Provider,
)

__all__ = ["CALL_UNANSWERED", "RESULT_ORPHANED", "RESULT_UNMATCHED", "RULES", "render", "validate"]

_P = Provider.OPENAI

#: A tool message with no assistant ``tool_calls`` message before it; "preceeding" is OpenAI's.
RESULT_ORPHANED = Rule(
    id="openai.result_without_call",
    provider=_P,
    kind=RESULT_WITHOUT_CALL,
    template=(
        "Invalid parameter: messages with role 'tool' must be a response to a "
        "preceeding message with 'tool_calls'."
    ),
    location="messages.N",
    # Observed, with "param": "messages.[59].role": https://github.com/sdcb/chats/pull/132
    source="https://github.com/sdcb/chats/pull/132",
)
#: An assistant message whose calls the tool messages after it do not all answer.
CALL_UNANSWERED = Rule(
    id="openai.call_without_result",
    provider=_P,
    kind=CALL_WITHOUT_RESULT,
    template=(
        "An assistant message with 'tool_calls' must be followed by tool messages "
        "responding to each 'tool_call_id'. The following tool_call_ids did not have "
        "response messages: {ids}"
    ),
    location="messages.N",
    # Observed, with "param": "messages.[57].role": https://github.com/sdcb/chats/pull/132
    source="https://github.com/sdcb/chats/pull/132",
)
#: A tool message after an assistant ``tool_calls`` message that did not make its call.
RESULT_UNMATCHED = Rule(
    id="openai.result_for_another_call",
    provider=_P,
    kind=RESULT_WITHOUT_CALL,
    template=(
        "Invalid parameter: 'tool_call_id' of '{id}' not found in 'tool_calls' of previous message."
    ),
    location="messages.N",
    # Observed: https://github.com/dapr/dapr-agents/issues/145.  Which of this text and
    # RESULT_ORPHANED's OpenAI answers for a tool message after an assistant message that
    # made other calls is not established: the validator answers RESULT_ORPHANED's, and
    # recognize() knows this one in logs.
    source="https://github.com/dapr/dapr-agents/issues/145",
    emitted=False,
)

#: Every rule, the one our validator answers first for its kind first.
RULES = (RESULT_ORPHANED, CALL_UNANSWERED, RESULT_UNMATCHED)

_ROLES = ("system", "developer", "user", "assistant", "tool", "function")
_MODEL = "gpt-4.1"


def validate(
    payload: object, source: str, rules: tuple[Rule, Rule] = (RESULT_ORPHANED, CALL_UNANSWERED)
) -> list[ProviderError]:
    """Every tool pairing error of a Chat Completions body, in message order.

    Each ``tool`` message must answer a call of the nearest preceding
    assistant message with ``tool_calls``, with only tool messages in
    between, and every such call must be answered by the tool messages
    directly after it; a call with nothing after it counts as unanswered.
    ``rules`` are the (result without call, call without result) rules
    whose texts to answer: an OpenAI-compatible API's own.  O(messages + calls).
    """
    orphaned, unanswered = rules
    raw = items_of(payload, "messages", source, "messages", '{"role": ..., "content": ...}')
    messages = objects(raw, source, "messages", "a message is an object with 'role' and 'content'")
    found: list[tuple[int, ProviderError]] = []
    batch_at, answered = -1, dict[str, bool]()  # the assistant whose tool messages may follow

    def close_batch() -> None:
        missing = tuple(cid for cid, done in answered.items() if not done)
        if missing:
            found.append((batch_at, unanswered.error(f"messages.{batch_at}", missing)))

    for i, message in enumerate(messages):
        where = f"{source}: messages[{i}]"
        role, content = role_of(message, where, _ROLES, "an OpenAI"), message.get("content")
        if not isinstance(content, str | list | None):
            fail(
                where,
                f"has content of type {json_type(content)}; OpenAI content is a "
                "string, a list of parts or null.",
                'Write "content": "...".',
            )
        if role == "tool":
            cid = id_field(message, "tool_call_id", where, "a tool message")
            if cid in answered:
                answered[cid] = True
            else:
                found.append((i, orphaned.error(f"messages.{i}", (cid,))))
            continue
        close_batch()
        batch_at, answered = i, dict.fromkeys(calls_of(message, role, where), False)
    close_batch()
    found.sort(key=lambda pair: pair[0])  # a batch's error is found only when it closes
    return [error for _, error in found]


def calls_of(message: dict[str, object], role: str, where: str) -> tuple[str, ...]:
    """The call ids of a message's ``tool_calls`` (checked to be a list of
    calls with ids, in an assistant message)."""
    calls = message.get("tool_calls")
    if calls is None:
        return ()
    if not isinstance(calls, list) or (calls and role != "assistant"):
        fail(
            where,
            f"has 'tool_calls' (a JSON {json_type(calls)}) in a {role} message; "
            "only an assistant message carries tool_calls, as a list of calls.",
            'Write "tool_calls": [{"id": ..., "type": "function", "function": {...}}].',
        )
    for j, entry in enumerate(calls):
        if not isinstance(entry, dict):
            fail(
                f"{where}.tool_calls[{j}]",
                f"is a JSON {json_type(entry)}; a tool call is an object with an 'id'.",
                'Write {"id": ..., "type": "function", ...}.',
            )
    return tuple(id_field(c, "id", f"{where}.tool_calls[{j}]", "a tool call")
                 for j, c in enumerate(calls))  # fmt: skip


def render(messages: Iterable[Message], tools: Tools, model: str | None) -> dict[str, object]:
    """The Chat Completions body for ``messages``: one message per message,
    tool messages carry ``tool_call_id``, ``function.arguments`` is a JSON
    string, a summary is a user message."""
    out: list[dict[str, object]] = []
    for m in messages:
        if m.summary_of:
            out.append({"role": "user", "content": text(m)})
        elif m.role == Role.TOOL:
            out.append({"role": "tool", "tool_call_id": call_id(m), "content": text(m)})
        elif m.role == Role.ASSISTANT and m.tool_calls:
            calls = []
            for cid in m.tool_calls:
                name, path = call(cid, tools)
                function = {"name": name, "arguments": json.dumps({"path": path})}
                calls.append({"id": cid, "type": "function", "function": function})
            out.append({"role": "assistant", "content": assistant_text(m), "tool_calls": calls})
        else:
            out.append({"role": str(m.role), "content": text(m)})
    return {"model": model or _MODEL, "messages": out}

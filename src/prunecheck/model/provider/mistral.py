"""Mistral (``/v1/chat/completions``): its tool message rules, as data.

Mistral takes OpenAI's message shape (``tool_calls``; ``tool`` messages
with ``tool_call_id``) but checks the role order more strictly: a tool
message must follow the calls it answers, and an assistant message must
come between tool results and the next user message.  Its texts
(``"type": "invalid_request_message_order"`` or ``"invalid_request_error"``)
name no place; our paths read ``messages.N``.
"""

from __future__ import annotations

from collections.abc import Iterable

from prunecheck.model.context import Message
from prunecheck.model.provider import openai_chat
from prunecheck.model.provider._shape import id_field, items_of, objects, role_of
from prunecheck.model.provider._wording import Tools
from prunecheck.model.provider.rule import ProviderError, Rule
from prunecheck.model.provider.vocabulary import (
    CALL_WITHOUT_RESULT,
    RESULT_WITHOUT_CALL,
    USER_AFTER_RESULT,
    Provider,
)

__all__ = ["CALLS_LAST", "COUNT_MISMATCH", "RULES", "TOOL_OUT_OF_ORDER", "USER_AFTER_TOOL",
           "render", "validate"]  # fmt: skip

_P = Provider.MISTRAL

TOOL_OUT_OF_ORDER = Rule(
    id="mistral.result_without_call",
    provider=_P,
    kind=RESULT_WITHOUT_CALL,
    # Mistral names the role before the tool message; observed with 'user' (a tool
    # message after a system message, or first, reads the same way with its role).
    template="Unexpected role 'tool' after role '{role}'",
    location="messages.N",
    # Observed: https://github.com/charmbracelet/crush/issues/279
    source="https://github.com/charmbracelet/crush/issues/279",
)
COUNT_MISMATCH = Rule(
    id="mistral.call_without_result",
    provider=_P,
    kind=CALL_WITHOUT_RESULT,
    template="Not the same number of function calls and responses",
    location="messages.N",
    # Observed: https://github.com/mistralai/client-python/issues/234
    source="https://github.com/mistralai/client-python/issues/234",
)
USER_AFTER_TOOL = Rule(
    id="mistral.user_after_result",
    provider=_P,
    kind=USER_AFTER_RESULT,
    template="Unexpected role 'user' after role 'tool'",
    location="messages.N",
    # Observed: https://github.com/datapizza-labs/datapizza-ai/issues/98
    source="https://github.com/datapizza-labs/datapizza-ai/issues/98",
)
CALLS_LAST = Rule(
    id="mistral.calls_last",
    provider=_P,
    kind=CALL_WITHOUT_RESULT,
    template=(
        "Expected last role User or Tool (or Assistant with prefix True) for serving but got "
        "assistant"
    ),
    location="messages.N",
    # Observed: https://github.com/0xPlaygrounds/rig/pull/1130
    source="https://github.com/0xPlaygrounds/rig/pull/1130",
)

#: Every rule, the one the validator answers for its kind first.
RULES = (TOOL_OUT_OF_ORDER, COUNT_MISMATCH, USER_AFTER_TOOL, CALLS_LAST)

_ROLES = ("system", "user", "assistant", "tool")


def validate(payload: object, source: str) -> list[ProviderError]:
    """Every tool message error of a Mistral chat body, in message order.

    A tool message must follow the assistant message whose calls it
    answers, or another tool message of that batch; the batch's tool
    messages must answer exactly its calls; a user message may not follow a
    tool message (the assistant speaks first); and the body may not end with
    an assistant's calls.  O(messages + calls).
    """
    raw = items_of(payload, "messages", source, "messages", '{"role": ..., "content": ...}')
    messages = objects(raw, source, "messages", "a message is an object with 'role' and 'content'")
    found: list[tuple[int, ProviderError]] = []
    batch_at, answered, extra = -1, dict[str, bool](), list[str]()
    previous = before = ""  # the role before this message; before the run of tool messages
    for i, message in enumerate(messages):
        where = f"{source}: messages[{i}]"
        role = role_of(message, where, _ROLES, "a Mistral")
        if role == "tool":
            cid = id_field(message, "tool_call_id", where, "a tool message")
            before = before if previous == "tool" else previous
            if before != "assistant" or (not answered and not extra):
                found.append(
                    (i, TOOL_OUT_OF_ORDER.error(f"messages.{i}", (cid,), role=before or "user"))
                )
            elif cid in answered and not answered[cid]:
                answered[cid] = True
            else:
                extra.append(cid)
        else:
            _close(found, batch_at, answered, extra)
            if role == "user" and previous == "tool":
                found.append((i, USER_AFTER_TOOL.error(f"messages.{i}")))
            calls = openai_chat.calls_of(message, role, where)
            batch_at, answered, extra = i, dict.fromkeys(calls, False), []
        previous = role
    if previous == "assistant" and answered:
        found.append((batch_at, CALLS_LAST.error(f"messages.{batch_at}", tuple(answered))))
    else:
        _close(found, batch_at, answered, extra)
    found.sort(key=lambda pair: pair[0])
    return [error for _, error in found]


def _close(
    found: list[tuple[int, ProviderError]], at: int, answered: dict[str, bool], extra: list[str]
) -> None:
    missing = tuple(cid for cid, done in answered.items() if not done)
    if missing or extra:
        found.append((at, COUNT_MISMATCH.error(f"messages.{at}", missing + tuple(extra))))


def render(messages: Iterable[Message], tools: Tools, model: str | None) -> dict[str, object]:
    """The Mistral chat body: OpenAI's (:func:`~.openai_chat.render`)."""
    body = openai_chat.render(messages, tools, model or _MODEL)
    return body


_MODEL = "mistral-large-latest"

"""Spans cut by the OpenTelemetry SDK's limits: named, never guessed at.

The SDK bounds what a span keeps.  ``OTEL_ATTRIBUTE_COUNT_LIMIT`` (128 by
default; ``SpanLimits.max_span_attributes``): a span that sets more
attributes keeps the newest and drops the *oldest* first, counting them in
``droppedAttributesCount`` (OTLP JSON has it; the SDK's console JSON does
not).  ``OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT`` (none by default): every string
value is cut at that many characters, silently.

What that does to a model span:

* OpenInference flattens a request into ``llm.input_messages.N.message.*``,
  set after ``session.id``: the count limit removes the conversation id
  first, then the first messages, then the first fields of a message (its
  role before its content).  Eviction takes the oldest attributes, so what
  is left of the messages is a suffix: messages from index 0 on, each with
  its role, are whole; a missing index 0 or a message without its role is
  proof of a cut (:func:`cut_messages`).
* The GenAI conventions put a request in one JSON attribute,
  ``gen_ai.input.messages``: the length limit cuts it mid-JSON (the reader
  names it), the count limit drops it whole while ``gen_ai.output.messages``
  (set later) stays — known from the dropped count, or from
  ``gen_ai.operation.name`` (always set, and first) gone too
  (:func:`cut_messages`).
* A dropped count on a span whose messages are whole still hides what the
  dropped attributes said — the conversation id among them
  (:func:`dropped_note`).
* A string of exactly the length at which a JSON value of the same span was
  cut (OpenInference's ``input.value``) was cut too (:func:`length_note`).
* Messages attributes of several spans cut mid-JSON at exactly the same
  length prove the length limit and its value (:func:`proven_length`).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

__all__ = ["cut_messages", "dropped_note", "length_note", "proven_length"]

_GUESS = "the instrumentation truncated it (an attribute length limit?)"
_CUT = re.compile(r"attribute \((\d+) characters\) is cut off or not JSON — " + re.escape(_GUESS))

_COUNT = (
    "the SDK's attribute count limit (OTEL_ATTRIBUTE_COUNT_LIMIT, 128 by default) drops a "
    "span's oldest attributes first"
)
_PREFIX = "llm.input_messages."


def _dropped(count: int) -> str:
    if count:
        return f"the SDK dropped {count} of its attributes (droppedAttributesCount {count}): "
    return ""


def _ranges(numbers: list[int]) -> str:
    """``[0, 1, 2, 5]`` as ``0–2, 5``."""
    out: list[str] = []
    start = prev = numbers[0]
    for n in [*numbers[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        out.append(str(start) if start == prev else f"{start}–{prev}")
        if n is not None:
            start = prev = n
    return ", ".join(out)


def cut_messages(
    attributes: Mapping[str, Any], dropped: int, name: str = ""
) -> tuple[str, str] | None:
    """(reason, what is known) when a model span's request messages were
    cut by the attribute count limit; None when they are whole (or the span
    is no model span: the reader decides).  ``name``: the span's name (an
    agent run or tool span is no model call, whatever usage it records).

    >>> cut_messages({"openinference.span.kind": "LLM",
    ...               "llm.input_messages.2.message.content": "hi",
    ...               "llm.input_messages.3.message.role": "user",
    ...               "llm.input_messages.3.message.content": "go"}, 9)[1]
    '1 of at least 4 messages readable'
    """
    if attributes.get("openinference.span.kind") == "LLM":
        fields: dict[int, set[str]] = {}
        for key in attributes:
            if key.startswith(_PREFIX):
                index, _, rest = key[len(_PREFIX) :].partition(".")
                if index.isdigit():
                    fields.setdefault(int(index), set()).add(rest)
        if not fields:
            if not dropped:
                return None  # the reader names an LLM span without inputs
            return (
                f"{_dropped(dropped)}its llm.input_messages are all gone; {_COUNT}",
                "",
            )
        top = max(fields)
        lost = [i for i in range(top + 1) if "message.role" not in fields.get(i, ())]
        if not lost or (lost == [0] and 0 not in fields and _items(attributes) == top):
            # The Agents SDK's spans number the input items from 1 (0 is the
            # instructions the response echoes): no index 0, every item whole
            # and input.value holding as many items is no cut.
            return None
        return (
            f"{_dropped(dropped)}{'message' if len(lost) == 1 else 'messages'} "
            f"{_ranges(lost)} of its llm.input_messages "
            f"{'is' if len(lost) == 1 else 'are'} missing or lack their role: {_COUNT}",
            f"{top + 1 - len(lost)} of at least {top + 1} messages readable",
        )
    if dropped and _only_usage_left(attributes, name):
        return (
            f"{_dropped(dropped)}no message of its request is left, only what a model call "
            f"records last (its usage or response): {_COUNT}",
            "",
        )
    genai_out = "gen_ai.output.messages" in attributes
    evicted = dropped or "gen_ai.operation.name" not in attributes  # always set, set first
    if genai_out and "gen_ai.input.messages" not in attributes and evicted:
        return (
            f"{_dropped(dropped)}it holds gen_ai.output.messages but no gen_ai.input.messages, "
            f"set before them: {_COUNT}",
            "the model's answer",
        )
    return None


_USAGE = ("gen_ai.usage.", "gen_ai.response.", "llm.token_count.")
_MESSAGES = (
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.prompt.",
    "gen_ai.completion.",
    "llm.input_messages.",
    "llm.output_messages.",
    "events",
)
_AGENT = ("agent run", "invoke_agent", "execute_tool", "running tool")
_AGENT_KEYS = ("gen_ai.aggregated_usage.", "pydantic_ai.", "agent_name", "final_result",
               "all_messages", "gen_ai.agent.", "gen_ai.tool.")  # fmt: skip


def _only_usage_left(attributes: Mapping[str, Any], name: str) -> bool:
    """A model call's span whose count limit took every message and kept
    only what the instrumentation sets last: token usage, the response's id
    or model (an agent run or a tool span is not one)."""
    if name.startswith(_AGENT) or attributes.get("gen_ai.operation.name") in (
        "invoke_agent", "execute_tool", "create_agent",
    ):  # fmt: skip
        return False
    keys = [str(k) for k in attributes]
    return (
        any(k.startswith(_USAGE) for k in keys)
        and not any(k.startswith(_MESSAGES) for k in keys)
        and not any(k.startswith(_AGENT_KEYS) for k in keys)
    )


def _items(attributes: Mapping[str, Any]) -> int | None:
    """How many input items ``input.value`` holds (a JSON list), or None."""
    try:
        value = json.loads(attributes.get("input.value") or "")
    except (json.JSONDecodeError, TypeError):
        return None
    return len(value) if isinstance(value, list) else None


def dropped_note(dropped: int, conversation_known: bool) -> str | None:
    """What a span whose messages are whole lost to the count limit, or None."""
    if not dropped:
        return None
    note = (
        f"the SDK dropped {dropped} of its span's attributes (droppedAttributesCount): what "
        "they said is not known"
    )
    if not conversation_known:
        note += "; its conversation id (session.id, gen_ai.conversation.id) may be one of them"
    return note


def length_note(attributes: Mapping[str, Any]) -> str | None:
    """A note when a value-length limit is proven on the span (a JSON value
    cut mid-way) and message strings of exactly that length were cut too."""
    limit = None
    for key in ("input.value", "output.value"):
        value = attributes.get(key)
        mime = attributes.get(key.replace(".value", ".mime_type"))
        if isinstance(value, str) and mime == "application/json":
            try:
                json.loads(value)
            except (ValueError, RecursionError):
                limit = len(value)
                break
    if limit is None:
        return None
    cut = sum(
        1
        for key, value in attributes.items()
        if key.startswith(_PREFIX) and isinstance(value, str) and len(value) == limit
    )
    note = f"its values are cut at {limit} characters (OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT)"
    if cut:
        note += f": {cut} message field(s) of that length are cut, their sizes lower bounds"
    return note


def proven_length(reasons: list[str]) -> tuple[list[str], int | None]:
    """``reasons`` with the length limit named where several messages
    attributes were cut mid-JSON at exactly the same length, and that length.

    >>> cut = "its gen_ai.input.messages attribute (1000 characters) is cut off or not JSON — "
    >>> said, limit = proven_length([cut + _GUESS, cut + _GUESS])
    >>> limit, "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT=1000" in said[0]
    (1000, True)
    """
    lengths = Counter(int(m.group(1)) for r in reasons if (m := _CUT.search(r)))
    found = [n for n, count in lengths.most_common() if count >= 2]
    if not found:
        return reasons, None
    limit = found[0]
    proof = (
        f"the SDK's value length limit: {lengths[limit]} values of this log are cut at exactly "
        f"{limit} characters (OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT={limit})"
    )
    out = []
    for reason in reasons:
        m = _CUT.search(reason)
        out.append(reason.replace(_GUESS, proof) if m and int(m.group(1)) == limit else reason)
    return out, limit

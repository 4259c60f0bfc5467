"""Gemini (``generateContent``): its function calling turn rules, as data.

The body is ``{"contents": [...], "tools"?, "systemInstruction"?}``: turns
of role ``user`` or ``model`` holding parts; a model turn's
``functionCall`` parts are answered by the next turn's ``functionResponse``
parts (role ``user``).  Gemini's texts name no place (``"status":
"INVALID_ARGUMENT"``); our paths read ``contents[N]``.
"""

from __future__ import annotations

from collections.abc import Iterable

from prunecheck.model.context import Message, Role
from prunecheck.model.provider._shape import fail, items_of, json_type, objects, role_of
from prunecheck.model.provider._wording import Tools, assistant_text, call, call_id, text
from prunecheck.model.provider.rule import ProviderError, Rule
from prunecheck.model.provider.vocabulary import (
    CALL_OUT_OF_PLACE,
    CALL_WITHOUT_RESULT,
    RESULT_WITHOUT_CALL,
    Provider,
)

__all__ = ["CALL_OUT_OF_PLACE_TURN", "COUNT_MISMATCH", "RESPONSE_OUT_OF_PLACE", "RULES",
           "render", "validate"]  # fmt: skip

_P = Provider.GEMINI

RESPONSE_OUT_OF_PLACE = Rule(
    id="gemini.result_without_call",
    provider=_P,
    kind=RESULT_WITHOUT_CALL,
    template=(
        "Please ensure that function response turn comes immediately after a function call turn."
    ),
    location="contents[N]",
    # Observed: https://github.com/langchain-ai/langchain/issues/27799
    source="https://github.com/langchain-ai/langchain/issues/27799",
)
COUNT_MISMATCH = Rule(
    id="gemini.call_without_result",
    provider=_P,
    kind=CALL_WITHOUT_RESULT,
    template=(
        "Please ensure that the number of function response parts is equal to the "
        "number of function call parts of the function call turn."
    ),
    location="contents[N]",
    # Observed (a batch answered in part; a cancelled call):
    # https://github.com/google-gemini/gemini-cli/issues/4217.  We answer it also for a
    # call turn followed by no function response turn (0 parts answer N).
    source="https://github.com/google-gemini/gemini-cli/issues/4217",
)
CALL_OUT_OF_PLACE_TURN = Rule(
    id="gemini.call_out_of_place",
    provider=_P,
    kind=CALL_OUT_OF_PLACE,
    template=(
        "Please ensure that function call turn comes immediately after a user turn or "
        "after a function response turn."
    ),
    location="contents[N]",
    # Observed "when the sent conversation history starts with a function call":
    # https://github.com/google-gemini/gemini-cli/issues/11814
    source="https://github.com/google-gemini/gemini-cli/issues/11814",
)

#: Every rule.
RULES = (RESPONSE_OUT_OF_PLACE, COUNT_MISMATCH, CALL_OUT_OF_PLACE_TURN)

_ROLES = ("user", "model")
_MODEL = "gemini-2.5-flash"


def _key(part: dict[str, object], field: str, where: str) -> str:
    """The id of a functionCall / functionResponse part, or its name."""
    value = part[field]
    if not isinstance(value, dict):
        fail(where, f"has a '{field}' that is a JSON {json_type(value)}, not an object.",
             f'Write {{"{field}": {{"name": ..., ...}}}}.')  # fmt: skip
    key = value.get("id") or value.get("name")
    if not isinstance(key, str):
        fail(where, f"is a '{field}' part with neither a string 'id' nor a 'name'.",
             f"A {field} names its function in 'name'.")  # fmt: skip
    return key


def validate(payload: object, source: str) -> list[ProviderError]:
    """Every function calling error of a ``generateContent`` body, in turn order.

    A function response turn must come right after a function call turn and
    hold as many ``functionResponse`` parts as it has ``functionCall``
    parts; a function call turn must come right after a user turn or a
    function response turn (not first, not after another model turn).
    O(turns + parts).
    """
    raw = items_of(payload, "contents", source, "contents", '{"role": "user", "parts": [...]}')
    contents = objects(raw, source, "contents", "a content is an object with 'role' and 'parts'")
    roles: list[str] = []
    calls: list[list[str]] = []
    responses: list[list[str]] = []
    for i, content in enumerate(contents):
        where = f"{source}: contents[{i}]"
        roles.append(role_of(content, where, _ROLES, "a Gemini"))
        parts = content.get("parts")
        if not isinstance(parts, list):
            fail(where, f"has 'parts' of type {json_type(parts)}; a content holds a list of parts.",
                 'Write "parts": [{"text": "..."}].')  # fmt: skip
        calls.append([])
        responses.append([])
        for k, part in enumerate(parts):
            at = f"{where}.parts[{k}]"
            if not isinstance(part, dict):
                fail(at, f"is a JSON {json_type(part)}, not a part object.",
                     'Parts look like {"text": "..."}.')  # fmt: skip
            if "functionCall" in part:
                calls[i].append(_key(part, "functionCall", at))
            elif "functionResponse" in part:
                responses[i].append(_key(part, "functionResponse", at))
    errors: list[ProviderError] = []
    for i in range(len(contents)):
        if responses[i] and (i == 0 or not calls[i - 1]):
            errors.append(RESPONSE_OUT_OF_PLACE.error(f"contents[{i}]", tuple(responses[i])))
        if not calls[i]:
            continue
        if i == 0 or roles[i - 1] != "user":
            errors.append(CALL_OUT_OF_PLACE_TURN.error(f"contents[{i}]", tuple(calls[i])))
        answers = responses[i + 1] if i + 1 < len(contents) else []
        if len(answers) != len(calls[i]):
            missing = [c for c in calls[i] if c not in answers] or answers[len(calls[i]) :]
            errors.append(COUNT_MISMATCH.error(f"contents[{i}]", tuple(missing)))
    return errors


def render(messages: Iterable[Message], tools: Tools, model: str | None) -> dict[str, object]:
    """The ``generateContent`` body for ``messages``: system messages become
    ``systemInstruction``; a user message (or summary) a user turn; an
    assistant message a model turn with its text and one ``functionCall``
    part per call; the tool messages that follow each other one user turn
    of ``functionResponse`` parts.  Field names as the REST API spells them
    (camelCase), which ``google-genai``'s types also accept."""
    system: list[str] = []
    contents: list[dict[str, object]] = []
    used: dict[str, None] = {}
    for m in messages:
        if m.role == Role.SYSTEM and not m.summary_of:
            system.append(text(m))
        elif m.role == Role.TOOL and not m.summary_of:
            cid = call_id(m)
            name = call(cid, tools)[0]
            part = {"functionResponse": {"id": cid, "name": name, "response": {"output": text(m)}}}
            last = contents[-1] if contents else None
            if last is not None and last["role"] == "user" and _responses_only(last):
                last["parts"].append(part)  # type: ignore[attr-defined]
            else:
                contents.append({"role": "user", "parts": [part]})
        elif m.role == Role.ASSISTANT and not m.summary_of:
            said = assistant_text(m)
            parts: list[dict[str, object]] = [{"text": said}] if said is not None else []
            for cid in m.tool_calls:
                name, path = call(cid, tools)
                used[name] = None
                parts.append({"functionCall": {"id": cid, "name": name, "args": {"path": path}}})
            contents.append({"role": "model", "parts": parts})
        else:
            contents.append({"role": "user", "parts": [{"text": text(m)}]})
    body: dict[str, object] = {"model": model or _MODEL, "contents": contents}
    if system:
        body["systemInstruction"] = {"parts": [{"text": "\n\n".join(system)}]}
    if used:
        body["tools"] = [{"functionDeclarations": [_declaration(name) for name in used]}]
    return body


def _responses_only(content: dict[str, object]) -> bool:
    parts = content["parts"]
    return isinstance(parts, list) and all("functionResponse" in p for p in parts)


def _declaration(name: str) -> dict[str, object]:
    return {
        "name": name,
        "description": f"{name}(path)",
        "parameters": {"type": "OBJECT", "properties": {"path": {"type": "STRING"}}},
    }

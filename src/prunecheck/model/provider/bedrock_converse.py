"""AWS Bedrock Converse: its tool block rules, as data.

The body is ``{"modelId", "messages": [...], "system"?, "toolConfig"?}``;
an assistant message holds ``toolUse`` blocks and the next user message
answers them with ``toolResult`` blocks; ``toolConfig`` must declare tools
whenever the history holds tool blocks.  Bedrock answers a
``ValidationException`` (HTTP 400) whose text names ``messages.N.content``.
"""

from __future__ import annotations

from collections.abc import Iterable

from prunecheck.model.context import Message, Role
from prunecheck.model.provider._shape import fail, id_field, items_of, json_type, objects, role_of
from prunecheck.model.provider._wording import Tools, assistant_text, call, call_id, text
from prunecheck.model.provider.rule import ProviderError, Rule
from prunecheck.model.provider.vocabulary import (
    CALL_WITHOUT_RESULT,
    RESULT_WITHOUT_CALL,
    TOOLS_UNDECLARED,
    USER_AFTER_RESULT,
    USER_NOT_FIRST,
    Provider,
)

__all__ = [
    "MIXED_TURN",
    "RESULTS_EXCEED",
    "RESULTS_EXPECTED",
    "RULES",
    "TOOLS_MISSING",
    "USER_FIRST",
    "render",
    "validate",
]

_P = Provider.BEDROCK

RESULTS_EXCEED = Rule(
    id="bedrock.result_without_call",
    provider=_P,
    kind=RESULT_WITHOUT_CALL,
    template=(
        "The number of toolResult blocks at {path} exceeds the number of toolUse "
        "blocks of previous turn."
    ),
    location="messages.N.content",
    # Observed after a context prune: https://github.com/Just-Curieous/Curie/issues/16
    source="https://github.com/Just-Curieous/Curie/issues/16",
)
RESULTS_EXPECTED = Rule(
    id="bedrock.call_without_result",
    provider=_P,
    kind=CALL_WITHOUT_RESULT,
    template="Expected toolResult blocks at {path} for the following Ids: {ids}",
    location="messages.N.content",
    # Observed (N is the message after the toolUse blocks):
    # https://github.com/agno-agi/agno/issues/6698
    source="https://github.com/agno-agi/agno/issues/6698",
)
MIXED_TURN = Rule(
    id="bedrock.user_after_result",
    provider=_P,
    kind=USER_AFTER_RESULT,
    template=(
        "{path}: Conversation blocks and tool result blocks cannot be provided in the same turn."
    ),
    location="messages.N.content",
    # Observed: https://github.com/langchain-ai/langchain-aws/issues/141
    source="https://github.com/langchain-ai/langchain-aws/issues/141",
)
TOOLS_MISSING = Rule(
    id="bedrock.tools_undeclared",
    provider=_P,
    kind=TOOLS_UNDECLARED,
    template=(
        "The toolConfig field must be defined when using toolUse and toolResult content blocks."
    ),
    location="toolConfig",
    # Observed: https://github.com/langgenius/dify/issues/16421
    source="https://github.com/langgenius/dify/issues/16421",
)

USER_FIRST = Rule(
    id="bedrock.user_not_first",
    provider=_P,
    kind=USER_NOT_FIRST,
    template=(
        "A conversation must start with a user message. Try again with a conversation that "
        "starts with a user message."
    ),
    location="messages.0",
    # Observed (a sliding window that starts with the assistant's message):
    # https://github.com/strands-agents/harness-sdk/issues/2085
    source="https://github.com/strands-agents/harness-sdk/issues/2085",
)

#: Every rule.
RULES = (RESULTS_EXCEED, RESULTS_EXPECTED, MIXED_TURN, TOOLS_MISSING, USER_FIRST)

_ROLES = ("user", "assistant")
_MODEL = "anthropic.claude-sonnet-4-5-20250929-v1:0"
# block key -> (the role that may carry it, "use" or "result")
_TOOL_BLOCKS = {"toolUse": "assistant", "toolResult": "user"}


def _declared(payload: object) -> bool:
    config = payload.get("toolConfig") if isinstance(payload, dict) else None
    return isinstance(config, dict) and bool(config.get("tools"))


def validate(payload: object, source: str) -> list[ProviderError]:
    """Every tool block error of a Converse body, in message order.

    The conversation must start with the user's message; ``toolConfig``
    must declare tools when the history holds tool blocks (a
    bare message list declares none); a user message's ``toolResult``
    blocks may not outnumber the previous message's ``toolUse`` blocks nor
    share the turn with text; each ``toolUse`` block must be answered by a
    ``toolResult`` block in the next message.  O(messages + blocks).
    """
    raw = items_of(payload, "messages", source, "messages", '{"role": ..., "content": [...]}')
    messages = objects(raw, source, "messages", "a message is an object with 'role' and 'content'")
    uses: list[list[str]] = []
    results: list[list[str]] = []
    mixed: list[bool] = []
    for i, message in enumerate(messages):
        where = f"{source}: messages[{i}]"
        role, content = (
            role_of(message, where, _ROLES, "a Bedrock Converse"),
            message.get("content"),
        )
        if not isinstance(content, list):
            fail(where, f"has content of type {json_type(content)}; Converse content is a list "
                 "of blocks.", 'Write "content": [{"text": "..."}].')  # fmt: skip
        uses.append([])
        results.append([])
        other = False
        for k, block in enumerate(content):
            at = f"{where}.content[{k}]"
            if not isinstance(block, dict) or len(block) != 1:
                fail(at, "is not a content block (an object with one key: text, toolUse, "
                     "toolResult, ...).", 'Blocks look like {"text": "..."}.')  # fmt: skip
            ((key, value),) = block.items()
            if key not in _TOOL_BLOCKS:
                other = True
                continue
            if role != _TOOL_BLOCKS[key]:
                fail(at, f"is a {key} block in a {role} message; it belongs in the "
                     f"{_TOOL_BLOCKS[key]}'s message.", "Check the message's role.")  # fmt: skip
            if not isinstance(value, dict):
                fail(at, f"has a {key} that is a JSON {json_type(value)}, not an object.",
                     f'Write {{"{key}": {{"toolUseId": ..., ...}}}}.')  # fmt: skip
            cid = id_field(value, "toolUseId", at, f"a {key} block")
            (uses if key == "toolUse" else results)[i].append(cid)
        mixed.append(other and bool(results[i]))
    errors: list[ProviderError] = []
    if messages and messages[0].get("role") != "user":
        errors.append(USER_FIRST.error("messages.0", tuple(uses[0])))
    if (any(uses) or any(results)) and not _declared(payload):
        errors.append(TOOLS_MISSING.error("toolConfig"))
    for i in range(len(messages)):
        previous = uses[i - 1] if i > 0 else []
        if len(results[i]) > len(previous):
            extra = tuple(c for c in results[i] if c not in previous) or tuple(results[i])
            errors.append(RESULTS_EXCEED.error(f"messages.{i}.content", extra))
        if mixed[i]:
            errors.append(MIXED_TURN.error(f"messages.{i}.content", tuple(results[i])))
        answered = results[i + 1] if i + 1 < len(messages) else []
        missing = tuple(dict.fromkeys(c for c in uses[i] if c not in answered))
        if missing:
            errors.append(RESULTS_EXPECTED.error(f"messages.{i + 1}.content", missing))
    return errors


def render(messages: Iterable[Message], tools: Tools, model: str | None) -> dict[str, object]:
    """The Converse body for ``messages``: system messages become the
    top-level ``system`` blocks; an assistant message a text block (if it
    has text) and one ``toolUse`` block per call; a tool message a
    ``toolResult`` block of a user message.  Messages of one role that
    follow each other merge (Converse requires alternation), tool results
    first; ``toolConfig`` declares every tool the history names."""
    system: list[dict[str, object]] = []
    turns: list[tuple[str, list[dict[str, object]]]] = []
    used: dict[str, None] = {}

    def push(role: str, blocks: list[dict[str, object]]) -> None:
        if not turns or turns[-1][0] != role:
            turns.append((role, blocks))
            return
        merged = turns[-1][1]
        at = sum(1 for b in merged if "toolResult" in b)  # results stay first
        merged[at:at] = [b for b in blocks if "toolResult" in b]
        merged.extend(b for b in blocks if "toolResult" not in b)

    for m in messages:
        if m.summary_of or m.role == Role.USER:
            push("user", [{"text": text(m)}])
        elif m.role == Role.SYSTEM:
            system.append({"text": text(m)})
        elif m.role == Role.TOOL:
            cid = call_id(m)
            used[call(cid, tools)[0]] = None
            result = {"toolUseId": cid, "content": [{"text": text(m)}]}
            push("user", [{"toolResult": result}])
        else:
            said = assistant_text(m)
            blocks: list[dict[str, object]] = [{"text": said}] if said else []
            for cid in m.tool_calls:
                name, path = call(cid, tools)
                used[name] = None
                blocks.append(
                    {"toolUse": {"toolUseId": cid, "name": name, "input": {"path": path}}}
                )
            push("assistant", blocks)
    body: dict[str, object] = {"modelId": model or _MODEL}
    body["messages"] = [{"role": role, "content": blocks} for role, blocks in turns]
    if system:
        body["system"] = system
    if used:
        body["toolConfig"] = {"tools": [_spec(name) for name in used]}
    return body


def _spec(name: str) -> dict[str, object]:
    schema = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    return {"toolSpec": {"name": name, "inputSchema": {"json": schema}}}

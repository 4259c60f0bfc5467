"""Anthropic Messages: its tool pairing rules, as data.

The body is ``{"model", "max_tokens", "system"?, "messages": [...]}``;
an assistant message carries ``tool_use`` blocks and the next user message
answers them with ``tool_result`` blocks.  The texts name the place as
``messages.N`` or ``messages.N.content.K``.
"""

from __future__ import annotations

from collections.abc import Iterable

from prunecheck.model.context import Message, Role
from prunecheck.model.provider._shape import fail, id_field, items_of, json_type, objects, role_of
from prunecheck.model.provider._wording import Tools, assistant_text, call, call_id, text
from prunecheck.model.provider.rule import ProviderError, Rule
from prunecheck.model.provider.vocabulary import (
    CALL_WITHOUT_RESULT,
    ITEM_WITHOUT_REASONING,
    RESULT_WITHOUT_CALL,
    Provider,
)

__all__ = [
    "CALL_UNANSWERED",
    "RESULT_ORPHANED",
    "RULES",
    "THINKING_ALTERED",
    "THINKING_MISSING",
    "render",
    "validate",
]

_P = Provider.ANTHROPIC

RESULT_ORPHANED = Rule(
    id="anthropic.result_without_call",
    provider=_P,
    kind=RESULT_WITHOUT_CALL,
    template=(
        "{path}: unexpected `tool_use_id` found in `tool_result` blocks: {ids}. "
        "Each `tool_result` block must have a corresponding `tool_use` block in the "
        "previous message."
    ),
    location="messages.N.content.K",
    # Observed: https://github.com/anthropics/claude-code/issues/13460
    source="https://github.com/anthropics/claude-code/issues/13460",
)
CALL_UNANSWERED = Rule(
    id="anthropic.call_without_result",
    provider=_P,
    kind=CALL_WITHOUT_RESULT,
    template=(
        "{path}: `tool_use` ids were found without `tool_result` blocks immediately "
        "after: {ids}. Each `tool_use` block must have a corresponding `tool_result` "
        "block in the next message."
    ),
    location="messages.N",
    # Observed: https://github.com/anthropics/claude-code/issues/5060
    source="https://github.com/anthropics/claude-code/issues/5060",
)
RESULTS_NOT_FIRST = Rule(
    id="anthropic.results_not_first",
    provider=_P,
    kind=CALL_WITHOUT_RESULT,
    template=(
        "Did not find {count} tool_result block(s) at the beginning of this message. "
        "Messages following tool_use blocks must begin with a matching number of "
        "tool_result blocks."
    ),
    location="messages.N",
    # An earlier wording of the rule above, still in logs:
    # https://github.com/anthropics/anthropic-sdk-typescript/issues/653
    source="https://github.com/anthropics/anthropic-sdk-typescript/issues/653",
    emitted=False,
)

_MISSING = (
    "{path}.type: Expected `thinking` or `redacted_thinking`, but found `{item}`. When "
    "`thinking` is enabled, a final `assistant` message must start with a thinking block "
    "(preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you "
    "include thinking blocks from previous turns. To avoid this requirement, disable "
    "`thinking`. Please consult our documentation at {doc}"
)
#: With extended thinking on, the assistant turn whose tool results the request sends
#: (the tool loop in progress) must start with the signed thinking block the model wrote
#: before its tool_use blocks: a trimmer that dropped it breaks this rule.  Earlier
#: turns' thinking blocks may be dropped (the API ignores them).
THINKING_MISSING = Rule(
    id="anthropic.thinking_missing",
    provider=_P,
    kind=ITEM_WITHOUT_REASONING,
    template=_MISSING,
    location="messages.N.content.K",
    # Observed ("found `tool_use`"): https://github.com/deepset-ai/haystack-core-integrations/
    # issues/2146; ("found `text`"): https://github.com/pydantic/pydantic-ai/issues/2040;
    # with the link https://docs.claude.com/...: https://github.com/lbjlaq/Antigravity-Manager/
    # issues/139 ({doc} matches either; the text names the anthropic.com one).
    source="https://github.com/deepset-ai/haystack-core-integrations/issues/2146",
)
#: A thinking block that does not come back as the model wrote it (edited, cleared,
#: truncated, re-serialized, or written by another model): its signature no longer
#: matches.  A body alone cannot show it (the signature is opaque): recognized in logs.
THINKING_ALTERED = Rule(
    id="anthropic.thinking_altered",
    provider=_P,
    kind=ITEM_WITHOUT_REASONING,
    template="{path}: Invalid `signature` in `thinking` block",
    location="messages.N.content.K",
    # Observed: https://github.com/anthropics/claude-code/issues/10627; what the check
    # compares: https://github.com/anthropics/anthropic-sdk-python/issues/1598
    source="https://github.com/anthropics/claude-code/issues/10627",
    emitted=False,
)
#: A thinking block of the latest assistant message changed.
THINKING_LATEST_ALTERED = Rule(
    id="anthropic.latest_thinking_altered",
    provider=_P,
    kind=ITEM_WITHOUT_REASONING,
    template="{path}: 'thinking' blocks in the latest assistant message cannot be modified",
    location="messages.N.content.K",
    # Observed: https://github.com/anthropics/claude-code/issues/63265
    source="https://github.com/anthropics/claude-code/issues/63265",
    emitted=False,
)

#: Every rule, the one the validator answers for its kind first.
RULES = (
    RESULT_ORPHANED,
    CALL_UNANSWERED,
    RESULTS_NOT_FIRST,
    THINKING_MISSING,
    THINKING_ALTERED,
    THINKING_LATEST_ALTERED,
)
_THOUGHTS = ("thinking", "redacted_thinking")

_ROLES = ("user", "assistant")
# block type -> (the role that may carry it, the key naming its call)
_CALL_BLOCKS = {"tool_use": ("assistant", "id"), "tool_result": ("user", "tool_use_id")}
_MODEL = "claude-sonnet-4-5"


def validate(payload: object, source: str) -> list[ProviderError]:
    """Every tool pairing error of an Anthropic Messages body, in message order.

    Each ``tool_result`` block of a user message must answer a ``tool_use``
    block of the immediately previous (assistant) message, and each
    ``tool_use`` block must be answered in the immediately next (user)
    message; a call with nothing after it counts as unanswered.  With
    extended thinking on (``"thinking": {"type": "enabled", ...}``), a
    request that sends tool results (its last message) must send the
    assistant turn they answer starting with its ``thinking`` (or
    ``redacted_thinking``) block.  O(messages + blocks).
    """
    if isinstance(payload, dict):
        system = payload.get("system")
        if "messages" in payload and not isinstance(system, str | list | None):
            fail(
                f"{source}: system",
                f"is a JSON {json_type(system)}; Anthropic's "
                "'system' is a string or a list of text blocks.",
                'Write the system prompt as "system": "...".',
            )
    raw = items_of(payload, "messages", source, "messages", '{"role": ..., "content": ...}')
    messages = objects(raw, source, "messages", "a message is an object with 'role' and 'content'")
    uses: list[list[str]] = []  # per message: its tool_use ids, in order
    results: list[list[tuple[int, str]]] = []  # per message: (block index, tool_use_id)
    roles: list[str] = []
    firsts: list[str] = []  # per message: the type of its first block
    for i, message in enumerate(messages):
        where = f"{source}: messages[{i}]"
        role, content = _role(message, where), message.get("content")
        uses.append([])
        results.append([])
        roles.append(role)
        firsts.append("text")
        if isinstance(content, str):
            continue
        if not isinstance(content, list):
            fail(
                where,
                f"has content of type {json_type(content)}; Anthropic content is "
                "a string or a list of blocks.",
                'Write "content": "..." or a block list.',
            )
        for k, block in enumerate(content):
            at = f"{where}.content[{k}]"
            if not isinstance(block, dict) or not isinstance(block.get("type"), str):
                fail(
                    at,
                    "is not a content block (an object with a string 'type').",
                    'Blocks look like {"type": "text", "text": "..."}.',
                )
            if k == 0:
                firsts[i] = block["type"]
            if block["type"] not in _CALL_BLOCKS:
                continue
            owner, key = _CALL_BLOCKS[block["type"]]
            if role != owner:
                fail(
                    at,
                    f"is a {block['type']} block in a {role} message; it belongs in "
                    f"the {owner}'s message.",
                    "Check the message's role.",
                )
            cid = id_field(block, key, at, f"a {block['type']} block")
            if owner == "assistant":
                uses[i].append(cid)
            else:
                results[i].append((k, cid))
    errors: list[ProviderError] = []
    for i in range(len(messages)):
        previous = set(uses[i - 1]) if i > 0 else set()
        for k, cid in results[i]:
            if cid not in previous:
                errors.append(RESULT_ORPHANED.error(f"messages.{i}.content.{k}", (cid,)))
        answered = {cid for _, cid in results[i + 1]} if i + 1 < len(messages) else set()
        missing = tuple(dict.fromkeys(cid for cid in uses[i] if cid not in answered))
        if missing:
            errors.append(CALL_UNANSWERED.error(f"messages.{i}", missing))
    if _thinking(payload) and len(messages) >= 2 and results[-1] and roles[-2] == "assistant":
        turn = len(messages) - 2  # the turn whose tool results this request sends
        if firsts[turn] not in _THOUGHTS:
            path = f"messages.{turn}.content.0"
            errors.append(THINKING_MISSING.error(path, item=firsts[turn]))
    errors.sort(key=_message_index)
    return errors


def _message_index(error: ProviderError) -> int:
    return int(error.path.split(".")[1])


def _thinking(payload: object) -> bool:
    """Whether the request turns extended thinking on."""
    if not isinstance(payload, dict):
        return False
    thinking = payload.get("thinking")
    return isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")


def _role(message: dict[str, object], where: str) -> str:
    role = message.get("role")
    hint = ""
    if role == "system":
        hint = "Anthropic takes the system prompt as the top-level 'system' of the request."
    elif role == "tool":
        hint = (
            "Anthropic carries tool results as 'tool_result' blocks of a user message; "
            "an OpenAI Chat Completions transcript must be validated as openai."
        )
    return role_of(message, where, _ROLES, "an Anthropic", hint)


def render(messages: Iterable[Message], tools: Tools, model: str | None) -> dict[str, object]:
    """The Messages body for ``messages`` (see :func:`~.request_body.render`).

    System messages become the top-level ``"system"`` (omitted if none); an
    assistant message becomes a text block (if it has text) and one
    ``tool_use`` block per call; a tool message becomes a ``tool_result``
    block of a user message.  Messages of one role that follow each other
    merge into one message, as Anthropic requires alternation: tool results,
    and a user message after them, join one user message, results first.  A
    reasoning message is a signed ``thinking`` block at the start of the
    assistant turn it preceded, and turns extended thinking on (as does an
    assistant message that followed one, when its reasoning was cut).
    """
    system: list[str] = []
    turns: list[tuple[str, list[dict[str, object]]]] = []

    def push(role: str, blocks: list[dict[str, object]]) -> None:
        if not turns or turns[-1][0] != role:
            turns.append((role, blocks))
            return
        merged = turns[-1][1]
        at = sum(1 for b in merged if b["type"] == "tool_result")  # results stay first
        merged[at:at] = [b for b in blocks if b["type"] == "tool_result"]
        merged.extend(b for b in blocks if b["type"] != "tool_result")

    thinking = False
    for m in messages:
        thinking = thinking or m.thought or bool(m.after_thought)
        if m.thought and not m.summary_of:
            block: dict[str, object] = {"type": "thinking", "thinking": text(m),
                                        "signature": f"sig_{m.id}"}  # fmt: skip
            push("assistant", [block])
        elif m.summary_of or m.role == Role.USER:
            push("user", [{"type": "text", "text": text(m)}])
        elif m.role == Role.SYSTEM:
            system.append(text(m))
        elif m.role == Role.TOOL:
            push("user", [{"type": "tool_result", "tool_use_id": call_id(m), "content": text(m)}])
        else:
            said = assistant_text(m)
            blocks: list[dict[str, object]] = [{"type": "text", "text": said}] if said else []
            for cid in m.tool_calls:
                name, path = call(cid, tools)
                blocks.append(
                    {"type": "tool_use", "id": cid, "name": name, "input": {"path": path}}
                )
            push("assistant", blocks)
    body: dict[str, object] = {"model": model or _MODEL, "max_tokens": 1024}
    if thinking:
        body["max_tokens"] = 2048  # more than the thinking budget, as the API requires
        body["thinking"] = {"type": "enabled", "budget_tokens": 1024}
    if system:
        body["system"] = "\n\n".join(system)
    body["messages"] = [
        {"role": role, "content": b[0]["text"] if len(b) == 1 and b[0]["type"] == "text" else b}
        for role, b in turns
    ]
    return body

"""autogen-core model contexts: ``BufferedChatCompletionContext``,
``HeadAndTailChatCompletionContext``, ``TokenLimitedChatCompletionContext``,
``UnboundedChatCompletionContext`` or a user's own ``ChatCompletionContext``
subclass — checked as AutoGen's ``AssistantAgent`` uses them.

The agent appends every message to its model context with ``add_message``
and asks ``get_messages()`` for what to send right before each model call;
the system prompt is held apart.  A context is a view: what
``get_messages()`` leaves out is, for the model, evicted.  Tool results of
one batch travel in one ``FunctionExecutionResultMessage``, as AutoGen
builds them; an assistant message that issued calls is an
``AssistantMessage`` whose content is its ``FunctionCall`` list (its text,
if any, is the ``thought``).

``TokenLimitedChatCompletionContext`` counts with its model client; this
adapter gives it a stub client whose ``count_tokens`` applies the
4-characters-per-token approximation to each message's text and calls'
arguments (AutoGen's OpenAI client would use tiktoken, which needs a
download; no network here).

Specs::

    autogen:context=buffered,buffer_size=6
    autogen:context=head_and_tail,head_size=2,tail_size=6
    autogen:context=token_limited,token_limit=budget
    autogen:context=my_context.py:MyContext     # built with no arguments

Needs ``pip install 'prunecheck[autogen]'``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from prunecheck.model.errors import PolicyError
from prunecheck.sim.subjects.sized_content import approx_tokens

from .common import Msgs, load_object, need, resolve_limit, run_sync, split_system
from .spec import BUDGET, Limit

__all__ = ["KINDS", "AutogenSettings", "StubClient", "autogen_trimmer", "to_autogen"]

#: The built-in contexts ``context=`` names (anything else: module:Class).
KINDS = ("buffered", "head_and_tail", "token_limited", "unbounded")


@dataclass(frozen=True, slots=True)
class AutogenSettings:
    """Which model context, with which sizes."""

    context: str = field(
        default="buffered",
        metadata={"choices": KINDS, "open": True, "help": "the context class, or module:Class"},
    )
    buffer_size: int = field(default=6, metadata={"min": 1, "help": "buffered: messages kept"})
    head_size: int = field(default=2, metadata={"min": 1, "help": "head_and_tail: first kept"})
    tail_size: int = field(default=6, metadata={"min": 1, "help": "head_and_tail: last kept"})
    token_limit: Limit = field(
        default=BUDGET, metadata={"limit": True, "help": "token_limited: tokens kept"}
    )


class StubClient:
    """The part of a ``ChatCompletionClient`` a token-limited context uses:
    ``count_tokens`` (4 characters per token) and ``remaining_tokens``."""

    def __init__(self, window: int) -> None:
        self.window = window

    def count_tokens(self, messages: Any, *, tools: Any = ()) -> int:
        return sum(_message_tokens(m) for m in messages)

    def remaining_tokens(self, messages: Any, *, tools: Any = ()) -> int:
        return self.window - self.count_tokens(messages, tools=tools)


def _message_tokens(message: Any) -> int:
    content = message.content
    if isinstance(content, str):
        return approx_tokens(content)
    total = approx_tokens(getattr(message, "thought", None) or "")
    for part in content:
        total += approx_tokens(getattr(part, "content", "") or "")
        total += approx_tokens(getattr(part, "name", "") + getattr(part, "arguments", ""))
    return total


def to_autogen(history: Msgs, models: Any, core: Any) -> list[tuple[Any, list[dict[str, Any]]]]:
    """AutoGen messages for OpenAI dicts, each with the dicts it carries
    (consecutive tool results merge into one result message)."""
    names: dict[str, str] = {}
    out: list[tuple[Any, list[dict[str, Any]]]] = []
    for d in history:
        role, content = d.get("role"), d.get("content") or ""
        if role == "tool":
            result = models.FunctionExecutionResult(
                content=content,
                name=names.get(d["tool_call_id"], "tool"),
                call_id=d["tool_call_id"],
            )
            if out and isinstance(out[-1][0], models.FunctionExecutionResultMessage):
                out[-1][0].content.append(result)
                out[-1][1].append(d)
            else:
                out.append((models.FunctionExecutionResultMessage(content=[result]), [d]))
        elif role == "assistant" and d.get("tool_calls"):
            calls = []
            for c in d["tool_calls"]:
                names[c["id"]] = c["function"]["name"]
                calls.append(
                    core.FunctionCall(
                        id=c["id"], name=c["function"]["name"], arguments=c["function"]["arguments"]
                    )
                )
            out.append(
                (
                    models.AssistantMessage(
                        content=calls, thought=content or None, source="assistant"
                    ),
                    [d],
                )
            )
        elif role == "assistant":
            out.append((models.AssistantMessage(content=content, source="assistant"), [d]))
        elif role == "system":
            out.append((models.SystemMessage(content=content), [d]))
        else:
            out.append((models.UserMessage(content=content, source="user"), [d]))
    return out


def autogen_trimmer(settings: AutogenSettings) -> Any:
    """The list function running ``settings.context``."""
    subject = f"autogen:context={settings.context}"
    contexts = need("autogen_core.model_context", "autogen", subject)
    models = need("autogen_core.models", "autogen", subject)
    core = need("autogen_core", "autogen", subject)
    user_class = None
    if settings.context not in KINDS:
        user_class = load_object(settings.context, subject)
        if not (
            isinstance(user_class, type) and issubclass(user_class, contexts.ChatCompletionContext)
        ):
            raise PolicyError(
                subject,
                f"{settings.context} is not a ChatCompletionContext subclass.",
                f"point context= at your context class, or use one of {', '.join(KINDS)}.",
            )

    def build(max_tokens: int) -> Any:
        if user_class is not None:
            return user_class()
        if settings.context == "buffered":
            return contexts.BufferedChatCompletionContext(buffer_size=settings.buffer_size)
        if settings.context == "head_and_tail":
            return contexts.HeadAndTailChatCompletionContext(
                head_size=settings.head_size, tail_size=settings.tail_size
            )
        if settings.context == "token_limited":
            limit = resolve_limit(settings.token_limit, max_tokens)
            return contexts.TokenLimitedChatCompletionContext(StubClient(limit), token_limit=limit)
        return contexts.UnboundedChatCompletionContext()

    async def view(context: Any, converted: list[Any]) -> list[Any]:
        for message in converted:
            await context.add_message(message)
        return list(await context.get_messages())

    def trim(messages: Msgs, max_tokens: int) -> Msgs:
        system, history = split_system(messages)
        pairs = to_autogen(history, models, core)
        origin = {id(m): ds for m, ds in pairs}
        got = run_sync(view(build(max_tokens), [m for m, _ in pairs]))
        out = list(system)
        for m in got:
            if id(m) in origin:
                out.extend(origin[id(m)])
            else:  # a message the context wrote itself (e.g. a placeholder)
                out.append({"role": "user", "content": _text(m)})
        return out

    trim.__name__ = trim.__qualname__ = f"autogen_{settings.context}"
    return trim


def _text(message: Any) -> str:
    content = message.content
    return (
        content
        if isinstance(content, str)
        else json.dumps([getattr(p, "content", "") for p in content])
    )

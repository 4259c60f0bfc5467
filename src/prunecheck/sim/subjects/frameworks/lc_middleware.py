"""LangChain v1 agent middleware: ``SummarizationMiddleware``,
``ContextEditingMiddleware`` and any ``AgentMiddleware`` that rewrites
messages — checked as LangChain's agent loop runs them.

An agent built by ``langchain.agents.create_agent`` calls each middleware's
``before_model`` hook right before every model call, applies the state
update it returns with LangGraph's ``add_messages`` reducer (a
``RemoveMessage(REMOVE_ALL_MESSAGES)`` followed by a summary and the kept
messages, or ``RemoveMessage(id)`` per dropped message), then lets
``wrap_model_call`` hooks edit the request.  This adapter does exactly that
on the rendered history (system prompt held apart, as ``create_agent``
does) and maps the result back: the summary message is read as a
``Summarize`` of what it replaced, a cleared tool result as a ``Clear``.

Specs::

    langchain-summarization:trigger=budget,keep=6
        SummarizationMiddleware(model=<fake chat model>,
                                trigger=("tokens", T), keep=("messages", K))
    langchain-context-editing:trigger=budget,keep=3
        ContextEditingMiddleware(edits=[ClearToolUsesEdit(trigger=T, keep=K)])
    langchain-middleware:middleware=my_mw.py:mw
        any AgentMiddleware instance (or class, built without arguments)

The summarizing model is ``FakeListChatModel`` answering a summary of
``summary_tokens`` tokens: no network, deterministic.  Needs
``pip install 'prunecheck[langchain]'`` (langchain v1 and langchain-core).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from prunecheck.sim.subjects.sized_content import sized_text

from .common import Msgs, load_object, need, resolve_limit, split_system
from .spec import BUDGET, Limit

__all__ = [
    "ContextEditingSettings",
    "MiddlewareSettings",
    "SummarizationSettings",
    "context_editing_trimmer",
    "middleware_trimmer",
    "summarization_trimmer",
]

_EXTRA = "langchain"


@dataclass(frozen=True, slots=True)
class SummarizationSettings:
    """How ``SummarizationMiddleware`` is built."""

    trigger: Limit = field(
        default=BUDGET,
        metadata={"limit": True, "help": "summarize when the history exceeds this many tokens"},
    )
    keep: int = field(default=6, metadata={"min": 1, "help": "messages kept after a summary"})
    keep_tokens: int = field(
        default=0, metadata={"help": "keep this many tokens instead of keep messages (0: use keep)"}
    )
    summary_tokens: int = field(
        default=200, metadata={"min": 1, "help": "size of the fake model's summary"}
    )


@dataclass(frozen=True, slots=True)
class ContextEditingSettings:
    """How ``ContextEditingMiddleware(ClearToolUsesEdit(...))`` is built."""

    trigger: Limit = field(
        default=BUDGET,
        metadata={"limit": True, "help": "clear tool results when the history exceeds this"},
    )
    keep: int = field(default=3, metadata={"help": "most recent tool results kept"})
    clear_at_least: int = field(default=0, metadata={"help": "tokens to reclaim at least"})
    clear_tool_inputs: bool = field(
        default=False, metadata={"help": "also clear the calls' arguments"}
    )


@dataclass(frozen=True, slots=True)
class MiddlewareSettings:
    """Which ``AgentMiddleware`` to run."""

    middleware: str = field(
        default="",
        metadata={"help": "module:attr or file.py:attr of an AgentMiddleware (or its class)"},
    )


def summarization_trimmer(settings: SummarizationSettings) -> Any:
    """The list function running ``SummarizationMiddleware``."""
    subject = "langchain-summarization"
    mw = need("langchain.agents.middleware", _EXTRA, subject)
    fake = need("langchain_core.language_models.fake_chat_models", _EXTRA, subject)
    text = sized_text("langchain-summary", settings.summary_tokens, "Summary:")

    def build(max_tokens: int) -> Any:
        keep = (
            ("tokens", settings.keep_tokens)
            if settings.keep_tokens
            else ("messages", settings.keep)
        )
        return mw.SummarizationMiddleware(
            model=fake.FakeListChatModel(responses=[text]),
            trigger=("tokens", resolve_limit(settings.trigger, max_tokens)),
            keep=keep,
        )

    return _trimmer(build, "SummarizationMiddleware")


def context_editing_trimmer(settings: ContextEditingSettings) -> Any:
    """The list function running ``ContextEditingMiddleware``."""
    subject = "langchain-context-editing"
    mw = need("langchain.agents.middleware", _EXTRA, subject)

    def build(max_tokens: int) -> Any:
        edit = mw.ClearToolUsesEdit(
            trigger=resolve_limit(settings.trigger, max_tokens),
            keep=settings.keep,
            clear_at_least=settings.clear_at_least,
            clear_tool_inputs=settings.clear_tool_inputs,
        )
        return mw.ContextEditingMiddleware(edits=[edit], token_count_method="approximate")

    return _trimmer(build, "ContextEditingMiddleware")


def middleware_trimmer(settings: MiddlewareSettings) -> Any:
    """The list function running a user's ``AgentMiddleware``."""
    subject = f"langchain-middleware:middleware={settings.middleware}"
    mw = need("langchain.agents.middleware", _EXTRA, subject)
    obj = load_object(settings.middleware, subject)
    if isinstance(obj, type):
        obj = obj()
    if not isinstance(obj, mw.AgentMiddleware):
        from prunecheck.model.errors import PolicyError

        raise PolicyError(
            subject,
            f"{settings.middleware} is a {type(obj).__name__}, not an AgentMiddleware.",
            "point the spec at an AgentMiddleware instance.",
        )
    return _trimmer(lambda _max: obj, type(obj).__name__)


def _trimmer(build: Any, label: str) -> Any:
    lc = need("langchain_core.messages", _EXTRA, label)
    graph = need("langgraph.graph.message", _EXTRA, label)
    mw = need("langchain.agents.middleware", _EXTRA, label)

    def trim(messages: Msgs, max_tokens: int) -> Msgs:
        system, history = split_system(messages)
        converted = lc.convert_to_messages(history)
        for i, m in enumerate(converted):
            m.id = f"msg-{i}"
        origin = {f"msg-{i}": d for i, d in enumerate(history)}
        before = {f"msg-{i}": _signature(m) for i, m in enumerate(converted)}
        middleware = build(max_tokens)
        current = list(converted)
        if type(middleware).before_model is not mw.AgentMiddleware.before_model:
            update = middleware.before_model({"messages": current}, None)
            if update and update.get("messages"):
                current = graph.add_messages(current, update["messages"])
        if type(middleware).wrap_model_call is not mw.AgentMiddleware.wrap_model_call:
            current = _through_wrap(middleware, current, mw)
        out = list(system)
        for m in current:
            key = m.id if m.id in origin else None
            if key is not None and _signature(m) == before[key]:
                out.append(origin[key])
            else:
                out.append(lc.convert_to_openai_messages(m))
        return out

    trim.__name__ = trim.__qualname__ = label
    return trim


def _through_wrap(middleware: Any, messages: list[Any], mw: Any) -> list[Any]:
    seen: list[list[Any]] = []

    def handler(request: Any) -> Any:
        seen.append(list(request.messages))
        return mw.ModelResponse(result=[])

    fake = need("langchain_core.language_models.fake_chat_models", _EXTRA, "langchain")
    request = mw.ModelRequest(
        model=fake.FakeListChatModel(responses=["ok"]),
        messages=messages,
        state={"messages": messages},
    )
    middleware.wrap_model_call(request, handler)
    return seen[-1] if seen else messages


def _signature(message: Any) -> tuple[str, str, str]:
    calls = getattr(message, "tool_calls", None) or []
    return (
        str(message.content),
        repr([(c.get("id"), c.get("args")) for c in calls]),
        str(getattr(message, "tool_call_id", "")),
    )

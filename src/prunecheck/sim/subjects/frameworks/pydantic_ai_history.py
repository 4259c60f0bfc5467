"""pydantic-ai ``history_processors``: any callable over its message list —
checked as pydantic-ai's agent graph runs it.

``Agent(..., history_processors=[fn])`` passes the message history
(``list[ModelMessage]``) through each processor right before every model
request and sends what comes back.  A processor may take a ``RunContext``
first, and may be async.  The history is built as pydantic-ai builds it:
a ``ModelRequest`` holds the system prompt and the first user prompt, a
``ModelResponse`` holds the model's text and its ``ToolCallPart`` s, and the
next ``ModelRequest`` holds one ``ToolReturnPart`` per result.

What comes back is mapped part by part: a kept part keeps its message; a
``ToolReturnPart`` with the same ``tool_call_id`` but new content is an
edit (a clear); a new part (a summary's ``UserPromptPart``) stands for the
messages it replaced.

Spec::

    pydantic-ai:processor=my_history.py:keep_recent_messages

Needs ``pip install 'prunecheck[pydantic-ai]'`` (pydantic-ai-slim: no model
provider SDK is needed).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any

from prunecheck.model.errors import PolicyError

from .common import Msgs, load_object, need, run_sync

__all__ = ["PydanticAISettings", "pydantic_ai_trimmer", "to_pydantic_ai"]


@dataclass(frozen=True, slots=True)
class PydanticAISettings:
    """Which history processor."""

    processor: str = field(
        default="", metadata={"help": "module:attr or file.py:attr of a history processor"}
    )


def to_pydantic_ai(messages: Msgs, pm: Any) -> tuple[list[Any], dict[int, dict[str, Any]]]:
    """pydantic-ai messages for OpenAI dicts, and per part (by ``id``) the
    dict it came from."""
    out: list[Any] = []
    origin: dict[int, dict[str, Any]] = {}
    pending: list[Any] = []  # parts of the ModelRequest being built
    names: dict[str, str] = {}

    def flush() -> None:
        if pending:
            out.append(pm.ModelRequest(parts=list(pending)))
            pending.clear()

    for d in messages:
        role, text = d.get("role"), d.get("content") or ""
        if role == "assistant":
            flush()
            parts: list[Any] = [pm.TextPart(content=text)] if text else []
            for c in d.get("tool_calls") or []:
                names[c["id"]] = c["function"]["name"]
                parts.append(
                    pm.ToolCallPart(
                        tool_name=c["function"]["name"],
                        args=c["function"]["arguments"],
                        tool_call_id=c["id"],
                    )
                )
            response = pm.ModelResponse(parts=parts)
            out.append(response)
            for p in parts:
                origin[id(p)] = d
            continue
        if role == "system":
            part: Any = pm.SystemPromptPart(content=text)
        elif role == "tool":
            cid = d["tool_call_id"]
            part = pm.ToolReturnPart(
                tool_name=names.get(cid, "tool"), content=text, tool_call_id=cid
            )
        else:
            if pending and any(isinstance(p, pm.UserPromptPart) for p in pending):
                flush()  # a new user turn is a new request
            part = pm.UserPromptPart(content=text)
        pending.append(part)
        origin[id(part)] = d
    flush()
    return out, origin


def pydantic_ai_trimmer(settings: PydanticAISettings) -> Any:
    """The list function running the processor ``settings.processor``."""
    subject = f"pydantic-ai:processor={settings.processor}"
    pm = need("pydantic_ai.messages", "pydantic-ai", subject)
    if not settings.processor:
        raise PolicyError(
            subject,
            "names no processor.",
            "write pydantic-ai:processor=my_history.py:keep_recent_messages.",
        )
    fn = load_object(settings.processor, subject)
    if not callable(fn):
        raise PolicyError(subject, f"{settings.processor} is not callable.")
    takes_ctx = len(inspect.signature(fn).parameters) >= 2

    def call(history: list[Any]) -> list[Any]:
        args: list[Any] = [history]
        if takes_ctx:
            args.insert(0, _run_context())
        result = fn(*args)
        if inspect.isawaitable(result):

            async def wait() -> Any:
                return await result

            result = run_sync(wait())
        return list(result)

    def trim(messages: Msgs) -> Msgs:
        history, origin = to_pydantic_ai(messages, pm)
        equal = list(origin.items())
        parts_by_id = {id(p): p for m in history for p in m.parts}
        out: list[dict[str, Any]] = []
        for message in call(history):
            for part in message.parts:
                found = origin.get(id(part))
                if found is None:
                    found = next((d for pid, d in equal if parts_by_id.get(pid) == part), None)
                if found is None:
                    found = _new_dict(part, pm)
                if not out or out[-1] is not found:
                    out.append(found)
        return out

    trim.__name__ = trim.__qualname__ = getattr(fn, "__name__", "history_processor")
    return trim


def _new_dict(part: Any, pm: Any) -> dict[str, Any]:
    """The OpenAI dict of a part the processor wrote itself."""
    if isinstance(part, pm.ToolReturnPart):
        return {"role": "tool", "tool_call_id": part.tool_call_id, "content": str(part.content)}
    role = "assistant" if isinstance(part, pm.TextPart) else "user"
    return {"role": role, "content": str(getattr(part, "content", ""))}


def _run_context() -> Any:
    tools = need("pydantic_ai.tools", "pydantic-ai", "pydantic-ai")
    usage = need("pydantic_ai.usage", "pydantic-ai", "pydantic-ai")
    test = need("pydantic_ai.models.test", "pydantic-ai", "pydantic-ai")
    return tools.RunContext(deps=None, model=test.TestModel(), usage=usage.RunUsage())

"""The library-only parts of reproduction scripts: one snippet per adapter
that runs the trimmer on ``messages`` (OpenAI dicts) and leaves ``result``
(OpenAI dicts), and the pairing check every script prints.

Each snippet repeats, in the library's own terms, what the adapter module
does (same message shapes, same settings); keep the two in step.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from prunecheck.sim.subjects.policy_spec import split_reference

__all__ = ["SNIPPETS", "pairing_problems"]


def pairing_problems(
    given: list[dict[str, Any]], output: list[dict[str, Any]], open_at: Any
) -> list[str]:
    """What ``output`` (a trimmer's result) broke of ``given`` (its input),
    both OpenAI Chat Completions dicts: orphaned tool messages, calls kept
    without their result, a parallel batch kept in part, calls dropped while
    their result is pending, messages dropped while still streaming
    (positions ``open_at``)."""
    answered_in = {m.get("tool_call_id") for m in given if m.get("role") == "tool"}
    problems: list[str] = []
    seen_calls: set[str] = set()
    calls_out: list[str] = []
    results_out: set[str] = set()
    for m in output:
        for c in m.get("tool_calls") or []:
            seen_calls.add(c["id"])
            calls_out.append(c["id"])
        if m.get("role") == "tool":
            cid = str(m.get("tool_call_id"))
            results_out.add(cid)
            if cid not in seen_calls:
                problems.append(
                    f"orphaned tool message: the result of {cid} is kept, its call is gone"
                )
    for cid in calls_out:
        if cid not in results_out and cid in answered_in:
            problems.append(f"call without its result: {cid} is kept, its result was dropped")
    for m in given:
        batch = [c["id"] for c in m.get("tool_calls") or []]
        kept = [c for c in batch if c in seen_calls]
        if kept and len(kept) < len(batch):
            problems.append(
                f"parallel batch split: calls {', '.join(kept)} are kept, "
                f"{', '.join(c for c in batch if c not in kept)} of the same "
                "assistant message are gone"
            )
    given_calls = [c["id"] for m in given for c in m.get("tool_calls") or []]
    for cid in given_calls:
        if cid not in answered_in and cid not in seen_calls:
            problems.append(
                f"call {cid} was dropped while its result is still pending: "
                "the result will arrive orphaned"
            )
    kept_text = {m.get("content") or "" for m in output}
    for i in open_at:
        if (given[i].get("content") or "") not in kept_text:
            problems.append(
                f"message {i} ({given[i].get('role')}) was dropped while still streaming"
            )
    return problems


_SPLIT = """system = [m for m in messages if m["role"] == "system"][:1]
history = messages[len(system):]
"""


def _langchain(s: Any, max_tokens: int) -> str:
    limit = s.max if s.counter == "len" else max_tokens
    counter = "len" if s.counter == "len" else "count"
    return f'''from langchain_core.messages import (convert_to_messages, convert_to_openai_messages,
                                     trim_messages)

converted = convert_to_messages(messages)
size = {{id(c): n for c, n in zip(converted, TOKENS)}}


def count(batch):
    """Each message's tokens, as the agent counts them."""
    return sum(size.get(id(m), 0) for m in batch)


kept = trim_messages(converted, max_tokens={limit},
                     token_counter={counter}, strategy={s.strategy!r},
                     start_on={list(s.start_on) or None!r}, end_on={list(s.end_on) or None!r},
                     include_system={s.include_system!r})
result = convert_to_openai_messages(kept)
'''


def _limit(value: int, max_tokens: int) -> int:
    return max(1, max_tokens if value < 0 else value)


def _lc_run(build: str) -> str:
    return (
        _SPLIT
        + f"""from langchain_core.messages import (convert_to_messages,
                                     convert_to_openai_messages)
from langgraph.graph.message import add_messages
from langchain.agents import middleware as mw
from langchain_core.language_models.fake_chat_models import FakeListChatModel

converted = convert_to_messages(history)
for i, m in enumerate(converted):
    m.id = f"msg-{{i}}"
{build}
update = middleware.before_model({{"messages": converted}}, None) \\
    if type(middleware).before_model is not mw.AgentMiddleware.before_model else None
current = add_messages(converted, update["messages"]) if update else converted
if type(middleware).wrap_model_call is not mw.AgentMiddleware.wrap_model_call:
    seen = []
    request = mw.ModelRequest(model=FakeListChatModel(responses=["ok"]), messages=current,
                              state={{"messages": current}})
    middleware.wrap_model_call(request, lambda r: seen.append(list(r.messages))
                               or mw.ModelResponse(result=[]))
    current = seen[-1]
result = system + convert_to_openai_messages(current)
"""
    )


def _summarization(s: Any, max_tokens: int) -> str:
    keep = f'("tokens", {s.keep_tokens})' if s.keep_tokens else f'("messages", {s.keep})'
    chars = 4 * s.summary_tokens - 9
    return _lc_run(f"""summary = "Summary: " + filler("langchain-summary", {chars})
middleware = mw.SummarizationMiddleware(model=FakeListChatModel(responses=[summary]),
                                        trigger=("tokens", {_limit(s.trigger, max_tokens)}),
                                        keep={keep})""")


def _context_editing(s: Any, max_tokens: int) -> str:
    trigger = _limit(s.trigger, max_tokens)
    return _lc_run(f"""edit = mw.ClearToolUsesEdit(trigger={trigger}, keep={s.keep},
                           clear_at_least={s.clear_at_least},
                           clear_tool_inputs={s.clear_tool_inputs!r})
middleware = mw.ContextEditingMiddleware(edits=[edit], token_count_method="approximate")""")


def _autogen(s: Any, max_tokens: int) -> str:
    build = {
        "buffered": f"BufferedChatCompletionContext(buffer_size={s.buffer_size})",
        "head_and_tail": f"HeadAndTailChatCompletionContext(head_size={s.head_size}, "
        f"tail_size={s.tail_size})",
        "token_limited": f"TokenLimitedChatCompletionContext(StubClient(), "
        f"token_limit={_limit(s.token_limit, max_tokens)})",
        "unbounded": "UnboundedChatCompletionContext()",
    }[s.context]
    return (
        _SPLIT
        + f'''import asyncio
from autogen_core import FunctionCall
from autogen_core.model_context import *  # noqa: F403
from autogen_core.models import (AssistantMessage, FunctionExecutionResult,
                                 FunctionExecutionResultMessage, UserMessage)


class StubClient:
    """count_tokens as a model client would: 4 characters per token."""

    def count_tokens(self, messages, *, tools=()):
        total = 0
        for m in messages:
            if isinstance(m.content, str):
                total += round(len(m.content) / 4)
                continue
            total += round(len(getattr(m, "thought", None) or "") / 4)
            for p in m.content:
                total += round(len(getattr(p, "content", "") or "") / 4)
                total += round(len(getattr(p, "name", "") + getattr(p, "arguments", "")) / 4)
        return total

    def remaining_tokens(self, messages, *, tools=()):
        return 0


names, converted = {{}}, []
for d in history:
    if d["role"] == "tool":
        r = FunctionExecutionResult(content=d["content"], name=names[d["tool_call_id"]],
                                    call_id=d["tool_call_id"])
        if converted and isinstance(converted[-1], FunctionExecutionResultMessage):
            converted[-1].content.append(r)
        else:
            converted.append(FunctionExecutionResultMessage(content=[r]))
    elif d.get("tool_calls"):
        calls = [FunctionCall(id=c["id"], name=c["function"]["name"],
                              arguments=c["function"]["arguments"]) for c in d["tool_calls"]]
        names.update((c.id, c.name) for c in calls)
        converted.append(AssistantMessage(content=calls, thought=d["content"], source="assistant"))
    elif d["role"] == "assistant":
        converted.append(AssistantMessage(content=d["content"], source="assistant"))
    else:
        converted.append(UserMessage(content=d["content"], source="user"))


async def view():
    context = {build}
    for m in converted:
        await context.add_message(m)
    return await context.get_messages()


result = list(system)
for m in asyncio.run(view()):
    if isinstance(m, FunctionExecutionResultMessage):
        result += [{{"role": "tool", "tool_call_id": r.call_id, "content": r.content}}
                   for r in m.content]
    elif isinstance(m, AssistantMessage) and not isinstance(m.content, str):
        result.append({{"role": "assistant", "content": m.thought, "tool_calls": [
            {{"id": c.id, "type": "function",
              "function": {{"name": c.name, "arguments": c.arguments}}}} for c in m.content]}})
    else:
        result.append({{"role": "assistant" if isinstance(m, AssistantMessage) else "user",
                       "content": m.content}})
'''
    )


def _llamaindex(s: Any, max_tokens: int) -> str:
    limit = _limit(s.token_limit, max_tokens)
    tokenizer = "lambda text: [0] * round(len(text) / 4)" if s.tokenizer == "approx" else "None"
    if s.memory == "buffer":
        run = f"""buffer = ChatMemoryBuffer.from_defaults(chat_history=converted,
                                        token_limit={limit},
                                        tokenizer_fn={tokenizer})
got = buffer.get()"""
    else:
        run = f"""memory = Memory.from_defaults(session_id="repro", token_limit={limit},
                              tokenizer_fn={tokenizer},
                              chat_history_token_ratio={s.chat_history_token_ratio},
                              token_flush_size={s.token_flush_size})


async def view():
    await memory.aput_messages(converted)
    return await memory.aget()


got = [m for m in asyncio.run(view()) if m.role.value != "system"]"""
    return (
        _SPLIT
        + f"""import asyncio
from llama_index.core.llms import ChatMessage
from llama_index.core.memory import ChatMemoryBuffer, Memory

converted = []
for d in history:
    extra = {{}}
    if d.get("tool_calls"):
        extra["tool_calls"] = d["tool_calls"]
    if d["role"] == "tool":
        extra["tool_call_id"] = d["tool_call_id"]
    converted.append(ChatMessage(role=d["role"], content=d["content"] or "",
                                 additional_kwargs=extra))
{run}
result = list(system)
for m in got:
    d = {{"role": m.role.value, "content": m.content}}
    d.update(m.additional_kwargs or {{}})
    result.append(d)
"""
    )


def _semantic_kernel(s: Any, max_tokens: int) -> str:
    if s.reducer == "truncation":
        build = (
            f"ChatHistoryTruncationReducer(target_count={s.target_count}, "
            f"threshold_count={s.threshold_count})"
        )
    else:
        build = (
            f"ChatHistorySummarizationReducer(service=StubSummaryService("
            f"ai_model_id='stub'), target_count={s.target_count}, "
            f"threshold_count={s.threshold_count}, include_function_content_in_summary="
            f"{s.include_function_content_in_summary!r})"
        )
    return f"""import asyncio
from semantic_kernel.connectors.ai.chat_completion_client_base import ChatCompletionClientBase
from semantic_kernel.contents import (AuthorRole, ChatHistorySummarizationReducer,
                                      ChatHistoryTruncationReducer, ChatMessageContent,
                                      FunctionCallContent, FunctionResultContent, TextContent)


class StubSummaryService(ChatCompletionClientBase):
    async def _inner_get_chat_message_contents(self, chat_history, settings):
        text = "Summary: " + filler("sk-summary", {4 * s.summary_tokens - 9})
        return [ChatMessageContent(role=AuthorRole.ASSISTANT, content=text)]


reducer = {build}
names = {{}}
for d in messages:
    if d["role"] == "tool":
        item = FunctionResultContent(id=d["tool_call_id"], name=names[d["tool_call_id"]],
                                     result=d["content"])
        reducer.add_message(ChatMessageContent(role=AuthorRole.TOOL, items=[item]))
    elif d.get("tool_calls"):
        items = [TextContent(text=d["content"])] if d["content"] else []
        for c in d["tool_calls"]:
            names[c["id"]] = c["function"]["name"]
            items.append(FunctionCallContent(id=c["id"], name=c["function"]["name"],
                                             arguments=c["function"]["arguments"]))
        reducer.add_message(ChatMessageContent(role=AuthorRole.ASSISTANT, items=items))
    else:
        reducer.add_message(ChatMessageContent(role=AuthorRole(d["role"]), content=d["content"]))
asyncio.run(reducer.reduce())
result = []
for m in reducer.messages:
    calls = [i for i in m.items if isinstance(i, FunctionCallContent)]
    results = [i for i in m.items if isinstance(i, FunctionResultContent)]
    if results:
        result += [{{"role": "tool", "tool_call_id": r.id, "content": str(r.result)}}
                   for r in results]
    elif calls:
        result.append({{"role": "assistant", "content": m.content, "tool_calls": [
            {{"id": c.id, "type": "function",
              "function": {{"name": c.name, "arguments": c.arguments}}}} for c in calls]}})
    else:
        result.append({{"role": m.role.value, "content": m.content}})
"""


def _pydantic_ai(s: Any, max_tokens: int) -> str:
    where, attr = split_reference(s.processor)
    return f"""import asyncio
import importlib.util
import inspect
from pydantic_ai.messages import (ModelRequest, ModelResponse, SystemPromptPart, TextPart,
                                  ToolCallPart, ToolReturnPart, UserPromptPart)

# the processor under test, loaded from its file as the agent would import it
_spec = importlib.util.spec_from_file_location("processor", {where!r})
_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_module)
processor = _module.{attr}

history, pending, names = [], [], {{}}
for d in messages:
    if d["role"] == "assistant":
        if pending:
            history.append(ModelRequest(parts=pending))
            pending = []
        parts = [TextPart(content=d["content"])] if d["content"] else []
        for c in d.get("tool_calls") or []:
            names[c["id"]] = c["function"]["name"]
            parts.append(ToolCallPart(tool_name=c["function"]["name"],
                                      args=c["function"]["arguments"], tool_call_id=c["id"]))
        history.append(ModelResponse(parts=parts))
    elif d["role"] == "system":
        pending.append(SystemPromptPart(content=d["content"]))
    elif d["role"] == "tool":
        pending.append(ToolReturnPart(tool_name=names[d["tool_call_id"]], content=d["content"],
                                      tool_call_id=d["tool_call_id"]))
    else:
        if any(isinstance(p, UserPromptPart) for p in pending):
            history.append(ModelRequest(parts=pending))
            pending = []
        pending.append(UserPromptPart(content=d["content"]))
if pending:
    history.append(ModelRequest(parts=pending))
out = processor(history)
out = asyncio.run(out) if inspect.isawaitable(out) else out
result = []
for m in out:
    calls = [p for p in m.parts if isinstance(p, ToolCallPart)]
    if calls:
        text = " ".join(p.content for p in m.parts if isinstance(p, TextPart)) or None
        result.append({{"role": "assistant", "content": text, "tool_calls": [
            {{"id": c.tool_call_id, "type": "function",
              "function": {{"name": c.tool_name, "arguments": c.args}}}} for c in calls]}})
        continue
    for p in m.parts:
        if isinstance(p, ToolReturnPart):
            result.append({{"role": "tool", "tool_call_id": p.tool_call_id,
                           "content": str(p.content)}})
        else:
            role = {{"SystemPromptPart": "system", "TextPart": "assistant"}}.get(
                type(p).__name__, "user")
            result.append({{"role": role, "content": str(p.content)}})
"""


def _openai_agents(s: Any, max_tokens: int) -> str:
    if s.runtime == "session":
        run = f"return await session.get_items(limit={s.limit})"
    else:
        run = (
            f"prepared, _ = await prepare_input_with_session([], session, None, "
            f"SessionSettings(limit={s.limit}))\n        return prepared"
        )
    return (
        _SPLIT
        + f"""import asyncio
from agents.memory import SessionSettings, SQLiteSession
from agents.run_internal.session_persistence import prepare_input_with_session

items = []
for i, d in enumerate(history):
    if d["role"] == "tool":
        items.append({{"type": "function_call_output", "call_id": d["tool_call_id"],
                      "output": d["content"]}})
    elif d["role"] == "assistant":
        if d["content"]:
            items.append({{"id": f"msg_{{i:04d}}", "type": "message", "role": "assistant",
                          "status": "completed", "content": [
                              {{"type": "output_text", "text": d["content"], "annotations": []}}]}})
        for c in d.get("tool_calls") or []:
            items.append({{"id": f"fc_{{c['id']}}", "type": "function_call", "call_id": c["id"],
                          "name": c["function"]["name"], "arguments": c["function"]["arguments"],
                          "status": "completed"}})
    else:
        items.append({{"role": d["role"], "content": d["content"]}})


async def run():
    session = SQLiteSession("repro", db_path=":memory:")
    try:
        await session.add_items(items)
        {run}
    finally:
        session.close()


result = list(system)
for item in asyncio.run(run()):
    kind = item.get("type")
    if kind == "function_call":
        call = {{"id": item["call_id"], "type": "function",
                "function": {{"name": item["name"], "arguments": item["arguments"]}}}}
        if result and result[-1]["role"] == "assistant" and result[-1].get("tool_calls"):
            result[-1]["tool_calls"].append(call)
        else:
            result.append({{"role": "assistant", "content": None, "tool_calls": [call]}})
    elif kind == "function_call_output":
        result.append({{"role": "tool", "tool_call_id": item["call_id"],
                       "content": item["output"]}})
    elif kind == "message":
        result.append({{"role": "assistant", "content": item["content"][0]["text"]}})
    else:
        result.append({{"role": item["role"], "content": item["content"]}})
"""
    )


#: adapter name -> (settings, max_tokens) -> the snippet leaving ``result``.
SNIPPETS: dict[str, Callable[[Any, int], str]] = {
    "langchain": _langchain,
    "langchain-summarization": _summarization,
    "langchain-context-editing": _context_editing,
    "autogen": _autogen,
    "llamaindex": _llamaindex,
    "semantic-kernel": _semantic_kernel,
    "pydantic-ai": _pydantic_ai,
    "openai-agents": _openai_agents,
}

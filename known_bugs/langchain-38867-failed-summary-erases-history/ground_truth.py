"""Ground truth for langchain-ai/langchain#38867, with LangChain's own fake chat model.

The scenario of the report: a conversation past SummarizationMiddleware's
trigger (24 messages, about 6,000 tokens), a new message, and a summary call
that fails (the provider's rate limit, on every attempt).  On the buggy
release the middleware removes every message and keeps the error text as the
summary: the checkpoint loses the conversation's oldest messages although no
summary was written.  On the fixed release the turn raises the error and the
checkpoint keeps every message.

Exit 1: the bug happened (messages were removed while every summary call
failed); 0: it did not; 2: the scenario could not run (the reason is printed).
"""

from __future__ import annotations

import asyncio
import runpy
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


class RateLimited(Exception):
    """What the provider answers the summary call: 429."""


def conversation() -> list[Any]:
    """24 messages of about 250 tokens each (count_tokens_approximately: 4 chars a token)."""
    from langchain_core.messages import AIMessage, HumanMessage

    out: list[Any] = []
    for n in range(12):
        question = f"Question {n} about ticket T-{n}: " + "details " * 120
        out.append(HumanMessage(question, id=f"h{n}"))
        out.append(AIMessage(f"Answer {n}: " + "explanation " * 85, id=f"a{n}"))
    return out


async def main() -> int:
    from langchain_core.language_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver

    summary_calls = 0

    class Model(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

        def _is_summary(self, messages: Any) -> bool:
            text = str(messages[0].content) if messages else ""
            return "<messages>" in text or "summar" in text.lower()[:400]

        def _generate(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
            nonlocal summary_calls
            if self._is_summary(messages):
                summary_calls += 1
                raise RateLimited("Error code: 429 - Rate limit reached for requests")
            self.messages = iter([AIMessage("Ticket T-12 is open, waiting on the customer.")])
            return super()._generate(messages, *args, **kwargs)

        async def _agenerate(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
            return self._generate(messages, *args, **kwargs)

    factory = runpy.run_path(str(HERE / "agent.py"))["agent"]
    saver = InMemorySaver()
    graph = factory(model=Model(messages=iter([])), checkpointer=saver)
    config = {"configurable": {"thread_id": "user-1"}}
    history = conversation()
    new = HumanMessage("And what about ticket T-12?", id="h12")
    raised: BaseException | None = None
    try:
        await graph.ainvoke({"messages": [*history, new]}, config)
    except RateLimited as exc:  # the fixed release lets the summary call's error propagate
        raised = exc
    if summary_calls == 0:
        print("could not run: the summary was never attempted (the trigger did not fire)")
        return 2
    state = await graph.aget_state(config)
    kept = state.values.get("messages", [])
    kept_ids = {m.id for m in kept}
    lost = [m.id for m in history if m.id not in kept_ids]
    erroneous = [
        m
        for m in kept
        if isinstance(m, HumanMessage) and "Error generating summary" in str(m.content)
    ]
    if lost:
        shown = repr(str(erroneous[0].content)[:90]) if erroneous else "no summary"
        print(
            f"reproduced: {summary_calls} summary call(s) failed, yet {len(lost)} of the "
            f"{len(history)} messages were removed; in their place: {shown}"
        )
        return 1
    how = f"the turn raised {type(raised).__name__}" if raised else "the turn went on"
    print(
        f"not reproduced: {summary_calls} summary call(s) failed, {how}, "
        f"and the checkpoint keeps all {len(history)} earlier messages"
    )
    return 0


if __name__ == "__main__":
    try:
        sys.exit(asyncio.run(main()))
    except Exception as exc:  # the scenario could not run: not the bug
        print(f"could not run: {type(exc).__name__}: {exc}")
        sys.exit(2)

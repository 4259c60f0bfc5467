"""LangChain v1: an agent whose history is trimmed behind the commit gate.

Runs offline: a scripted chat model (no API key) asks for two parallel
``read_file`` calls, then answers.  ``trim_messages`` — blind to tool
structure — is wrapped by ``CommitGuardMiddleware``; its ``before_model``
hook lets only whole, closed units go, so the provider never sees a tool
result without its call::

    pip install 'prunecheck[langchain]'
    python examples/langchain_middleware.py
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, trim_messages
from langchain_core.tools import tool

from prunecheck.guard.langchain import CommitGuardMiddleware


class ScriptedModel(GenericFakeChatModel):
    """A fake chat model that accepts tools (it ignores them) and records
    what it was sent."""

    sent: ClassVar[list[list[BaseMessage]]] = []

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedModel:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        ScriptedModel.sent.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


@tool
def read_file(path: str) -> str:
    """Read a file of the repository."""
    return f"contents of {path}: " + "lorem ipsum " * 60


def words(messages: Any) -> int:
    """Tokens as words, for the example (use your model's counter)."""
    items = messages if isinstance(messages, list) else [messages]
    return sum(len(str(m.content).split()) + 1 for m in items)


def describe(m: BaseMessage) -> str:
    calls = [c["id"] for c in getattr(m, "tool_calls", [])]
    return (
        f"{m.type}({len(str(m.content).split())} words"
        + (f", calls {', '.join(calls)}" if calls else "")
        + (f", answers {getattr(m, 'tool_call_id', '')}" if m.type == "tool" else "")
        + ")"
    )


def main() -> list[list[BaseMessage]]:
    script = iter(
        [
            AIMessage(
                "",
                tool_calls=[
                    {"name": "read_file", "args": {"path": "src/app.py"}, "id": "call_1"},
                    {"name": "read_file", "args": {"path": "src/db.py"}, "id": "call_2"},
                ],
            ),
            AIMessage("Both files read; the retry settings live in src/app.py."),
        ]
    )
    model = ScriptedModel(messages=script)
    guard = CommitGuardMiddleware(
        trim_messages, budget=300, hard_ceiling=600, store=":memory:", token_counter=words
    )
    agent = create_agent(model, tools=[read_file], middleware=[guard])
    history = [
        HumanMessage("background: " + "earlier discussion " * 40),
        HumanMessage("check the retry settings in src/app.py and src/db.py"),
    ]
    ScriptedModel.sent = []
    agent.invoke({"messages": history})
    for n, sent in enumerate(ScriptedModel.sent, 1):
        print(f"model call {n}: " + ", ".join(describe(m) for m in sent))
    return ScriptedModel.sent


if __name__ == "__main__":
    main()

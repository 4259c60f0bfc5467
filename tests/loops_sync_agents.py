"""Agents whose code is sync, written as their frameworks' docs write them
(tests of the handoff executor, sim/subjects/loops/handoff.py).

``pa_agent``: a pydantic-ai agent whose history processor is a plain
``def`` (pydantic-ai runs it with ``anyio.to_thread``); ``PROCESSED`` counts
its calls.  ``lg_agent``: a hand-built LangGraph ``StateGraph`` whose model
node is a plain ``def`` calling ``model.invoke`` (LangGraph runs it with
``run_in_executor``), with the prebuilt ``ToolNode``.  Frameworks are
imported inside the factories: collecting a test needs none of them.
"""

import functools
import tempfile
import threading
from pathlib import Path
from typing import Any

__all__ = [
    "APP_DIR",
    "PROCESSED",
    "ag_custom_context",
    "lc_sync_middleware",
    "lg_agent",
    "lg_react",
    "oa_app",
    "pa_agent",
    "pa_module_agent",
]

#: Where the Agents SDK app keeps its sessions (the harness never writes there).
APP_DIR = Path(tempfile.gettempdir()) / "prunecheck-test-user-app"

#: Calls of the pydantic-ai processor, and the threads they ran on.
PROCESSED: list[str] = []


def pa_agent() -> Any:
    """A pydantic-ai agent with a sync history processor keeping the last 6 messages."""
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import ProcessHistory
    from pydantic_ai.messages import ModelMessage

    def keep_last(messages: list[ModelMessage]) -> list[ModelMessage]:
        PROCESSED.append(threading.current_thread().name)
        return messages[-6:] if len(messages) > 6 else messages

    def read_file(path: str) -> str:
        """Read a file."""
        raise NotImplementedError("reads the file in the real app")

    return Agent(
        "test", tools=[read_file], capabilities=[ProcessHistory(keep_last)], defer_model_check=True
    )


@functools.cache
def pa_module_agent() -> Any:
    """:func:`pa_agent` built once, as a module-level ``agent = Agent(...)`` is."""
    return pa_agent()


def lg_agent(model: Any) -> Any:
    """LangGraph's tutorial graph: a sync ``chatbot`` node, ``ToolNode``, ``tools_condition``."""
    from typing import Annotated, TypedDict

    from langchain_core.tools import tool
    from langgraph.graph import START, StateGraph
    from langgraph.graph.message import add_messages
    from langgraph.prebuilt import ToolNode, tools_condition

    class State(TypedDict):
        messages: Annotated[list[Any], add_messages]

    @tool
    def read_file(path: str) -> str:
        """Read a file."""
        raise NotImplementedError("reads the file in the real app")

    llm = model.bind_tools([read_file])

    def chatbot(state: State) -> dict[str, Any]:
        return {"messages": [llm.invoke(state["messages"])]}

    builder = StateGraph(State)
    builder.add_node("chatbot", chatbot)
    builder.add_node("tools", ToolNode([read_file]))
    builder.add_edge(START, "chatbot")
    builder.add_conditional_edges("chatbot", tools_condition)
    builder.add_edge("tools", "chatbot")
    return builder.compile()


def oa_app() -> Any:
    """An Agents SDK app on its own session class: a ``SQLiteSession`` keeping the last 4 items."""
    from agents import Agent, RunConfig, SQLiteSession, function_tool

    class LastFour(SQLiteSession):
        def __init__(self, session_id: str, db_path: str = ":memory:") -> None:
            super().__init__(session_id, db_path)
            self.keep = 4

        async def get_items(self, limit: int | None = None) -> list[Any]:
            return (await super().get_items(limit))[-self.keep :]

    @function_tool
    def read_file(path: str) -> str:
        """Read a file."""
        raise NotImplementedError("reads the file in the real app")

    agent = Agent(name="reader", instructions="Read files.", model="gpt-4.1", tools=[read_file])
    APP_DIR.mkdir(exist_ok=True)
    return agent, RunConfig(), LastFour("customer-42", str(APP_DIR / "sessions.sqlite"))


def lg_react(model: Any, checkpointer: Any = None) -> Any:
    """LangGraph's prebuilt ``create_react_agent`` with a sync ``pre_model_hook`` keeping the
    last 3 messages (the older API, as its "manage message history" guide writes it)."""
    from langchain_core.tools import tool
    from langgraph.prebuilt import create_react_agent

    @tool
    def read_file(path: str) -> str:
        """Read a file."""
        raise NotImplementedError("reads the file in the real app")

    def pre_model_hook(state: dict[str, Any]) -> dict[str, Any]:
        return {"llm_input_messages": state["messages"][-3:]}

    return create_react_agent(
        model, tools=[read_file], pre_model_hook=pre_model_hook, checkpointer=checkpointer
    )


def lc_sync_middleware(model: Any) -> Any:
    """A LangChain v1 agent whose middleware has a sync ``wrap_model_call`` only (its app
    runs ``agent.invoke``): it sends the model the last 3 messages."""
    from langchain.agents import create_agent
    from langchain.agents.middleware import AgentMiddleware
    from langchain_core.tools import tool

    class LastThree(AgentMiddleware):
        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            return handler(request.override(messages=request.messages[-3:]))

    @tool
    def read_file(path: str) -> str:
        """Read a file."""
        raise NotImplementedError("reads the file in the real app")

    return create_agent(model, tools=[read_file], middleware=[LastThree()])


def ag_custom_context() -> Any:
    """An AutoGen ``AssistantAgent`` object (no factory) on the user's own context class:
    a ``ChatCompletionContext`` handing the model its last 3 messages."""
    from autogen_agentchat.agents import AssistantAgent
    from autogen_core.model_context import UnboundedChatCompletionContext
    from autogen_core.models import ModelFamily
    from autogen_ext.models.replay import ReplayChatCompletionClient

    class LastThree(UnboundedChatCompletionContext):
        async def get_messages(self) -> list[Any]:
            return self._messages[-3:]

    async def read_file(path: str) -> str:
        """Read a file."""
        raise NotImplementedError("reads the file in the real app")

    client = ReplayChatCompletionClient(
        [], model_info={"vision": False, "function_calling": True, "json_output": False,
                        "family": ModelFamily.UNKNOWN, "structured_output": False},
    )  # fmt: skip
    return AssistantAgent("reader", model_client=client, tools=[read_file],
                          model_context=LastThree())  # fmt: skip

"""Held back (issue 31, written last; prunecheck not changed for it): the
legacy LangChain ``AgentExecutor`` (LangChain 0.x's ``create_tool_calling_agent``
and ``AgentExecutor(max_iterations=...)``), as older apps still write it.

LangChain 1.x no longer ships ``AgentExecutor`` in ``langchain.agents`` (it
moved to ``langchain-classic``): with the installed LangChain the import
fails.

Expected: exit status **2**, one paragraph naming the failed import, no
traceback (prunecheck cannot drive what the installed LangChain does not ship).
"""

from typing import Any

from langchain.agents import AgentExecutor, create_tool_calling_agent
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.tools import tool


@tool
def get_weather(city: str) -> str:
    """Get the weather of a city."""
    raise NotImplementedError("calls the weather API")


prompt = ChatPromptTemplate.from_messages(
    [("system", "You are helpful."), ("human", "{input}"), ("placeholder", "{agent_scratchpad}")]
)


def agent(model: Any) -> Any:
    """The executor on the app's chat model."""
    runnable = create_tool_calling_agent(model, [get_weather], prompt)
    return AgentExecutor(agent=runnable, tools=[get_weather], max_iterations=8)

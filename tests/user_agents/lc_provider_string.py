"""LangChain v1's quick start: ``create_agent("openai:gpt-4o", ...)`` at module level.

``create_agent`` with a provider string calls ``init_chat_model``, which
builds a ``ChatOpenAI`` at import: without ``OPENAI_API_KEY`` the import
raises ``OpenAIError: Missing credentials`` (needs ``langchain-openai``, as
every user of this spelling has).  A user expects ``prunecheck check
loop:tests/user_agents/lc_provider_string.py:agent`` to load the module
anyway, point the graph at its model double and give a verdict.

Expected: it loads with no key and no network; the user's configuration
trims nothing, so its verdict is **safe** (what LangGraph's own loop does
with a batch's results is a framework finding, reported apart).
"""

from langchain.agents import create_agent
from langchain_core.tools import tool


@tool
def get_weather(city: str) -> str:
    """Get the weather for a given city."""
    return f"It's always sunny in {city}!"


@tool
def get_time(city: str) -> str:
    """Get the local time in a given city."""
    return f"It is noon in {city}."


agent = create_agent(
    "openai:gpt-4o",
    tools=[get_weather, get_time],
    system_prompt="You are a helpful assistant",
)

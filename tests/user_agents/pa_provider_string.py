"""pydantic-ai's first line of docs: the model named by a provider string.

``Agent("openai:gpt-4o", ...)`` without ``defer_model_check``: pydantic-ai
builds the OpenAI provider at import and raises ``UserError`` when
``OPENAI_API_KEY`` is not set, as in a CI job without provider keys.  A user
expects ``prunecheck check loop:tests/user_agents/pa_provider_string.py:agent``
to load the module anyway (prunecheck replaces the model) and give a verdict.

Expected: it loads with no key and no network; the user's configuration
trims nothing, so its verdict is **safe** (what pydantic-ai's own loop does
on a crash is a framework finding, reported apart).
"""

from pydantic_ai import Agent

agent = Agent(
    "openai:gpt-4o",
    instructions="You are a helpful support agent. Look things up before answering.",
)


@agent.tool_plain
async def search_docs(query: str) -> str:
    """Search the product documentation."""
    raise NotImplementedError("calls the docs search API")


@agent.tool_plain
async def get_ticket(ticket_id: str) -> str:
    """Fetch a support ticket by its id."""
    raise NotImplementedError("calls the ticketing API")

"""Held back (written last; prunecheck not changed for it): a LangChain v1
agent whose ``@wrap_model_call`` middleware trims the request to 6,000 tokens.

An async ``@wrap_model_call`` function (LangChain's decorator form) sends
the model the newest messages that fit in 6,000 tokens, counted with
``count_tokens_approximately``, and leaves the state alone.  Blind to tool
calls: the window can open on a ``ToolMessage`` whose call is cut.

Expected: **unsafe**, ``orphaned_result`` / ``provider_rejection``.
"""

from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import ModelRequest, ModelResponse, wrap_model_call
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.tools import tool

MAX_TOKENS = 6000


@tool
def search_contracts(query: str) -> str:
    """Search the contract database."""
    raise NotImplementedError("queries the contract database")


@tool
def get_clause(contract_id: str, clause: str) -> str:
    """Get a clause of a contract."""
    raise NotImplementedError("reads the contract")


@wrap_model_call
async def fit_context(
    request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
) -> ModelResponse:
    kept = []
    for message in reversed(request.messages):
        if count_tokens_approximately([*kept, message]) > MAX_TOKENS:
            break
        kept.insert(0, message)
    return await handler(request.override(messages=kept))


def agent(model: Any) -> Any:
    """The legal assistant on the app's chat model."""
    return create_agent(
        model,
        tools=[search_contracts, get_clause],
        system_prompt="You are a legal assistant.",
        middleware=[fit_context],
    )

"""Held back (written last; prunecheck not changed for it): LangChain's
summarization middleware with a trigger never reached.

``SummarizationMiddleware`` set to summarize once the thread holds 300
messages (a "just in case" setting): a conversation gets there after about
a hundred tool rounds.  In any schedule prunecheck runs, it never fires.

Expected: **vacuous** (never "safe"), with figures (300).
"""

from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.tools import tool


@tool
def lookup_word(word: str) -> str:
    """Look a word up in the dictionary."""
    raise NotImplementedError("calls the dictionary API")


@tool
def conjugate(verb: str, tense: str) -> str:
    """Conjugate a verb."""
    raise NotImplementedError("calls the grammar API")


def agent(model: Any, checkpointer: Any = None) -> Any:
    """The language tutor on the app's chat model and checkpointer."""
    return create_agent(
        model,
        tools=[lookup_word, conjugate],
        system_prompt="You are a language tutor.",
        middleware=[
            SummarizationMiddleware(model=model, trigger=("messages", 300), keep=("messages", 20))
        ],
        checkpointer=checkpointer,
    )

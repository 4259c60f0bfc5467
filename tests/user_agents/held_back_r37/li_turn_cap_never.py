"""Held back, round 37 (written last; prunecheck not changed for it): a
LlamaIndex ``AgentWorkflow`` on a memory that caps the number of user turns
it hands the agent, a cap no check reaches.

LlamaIndex's memory docs: ``agent.run(text, memory=memory)`` reads the
history with the memory's async ``aget`` before each step; a memory class
may override it.  The app's model has a very large window, so its
``TurnCappedMemory`` (a ``ChatMemoryBuffer`` subclass) does not count
tokens: its ``aget`` returns the whole stored history (``aget_all``), and
only once it holds more than ``MAX_USER_TURNS = 200`` user messages does it
start at the 200th-last one (whole turns: a cut just before a user message
never separates a tool call from its result).  Two hundred questions of one
user in one conversation is far beyond any schedule of a check (its
schedules are at most 48 steps), so the memory never leaves anything out:
the trimmer never fires, whatever the outputs' size.  The agent is
``AgentWorkflow.from_tools_or_functions`` on LlamaIndex's ``Anthropic`` LLM
(built without a key); the app's one memory is the module's ``memory``.

Expected (before running): exit 0, the trimming class **vacuous** (not
"safe"), its note giving the figures (the trimmer never fired; the most
user turns in a history against its threshold of 200 user turns, module
constant MAX_USER_TURNS, or "budget unknown").
"""

from __future__ import annotations

from typing import Any

from llama_index.core.agent.workflow import AgentWorkflow
from llama_index.core.llms import ChatMessage, MessageRole
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.llms.anthropic import Anthropic

MAX_USER_TURNS = 200


class TurnCappedMemory(ChatMemoryBuffer):
    """The whole history, from the MAX_USER_TURNS-th last user message on."""

    async def aget(self, input: str | None = None, **kwargs: Any) -> list[ChatMessage]:
        history = await self.aget_all()
        user_turns = [i for i, m in enumerate(history) if m.role == MessageRole.USER]
        if len(user_turns) > MAX_USER_TURNS:
            history = history[user_turns[-MAX_USER_TURNS] :]
        return history


def search_listings(city: str, max_rent: int, bedrooms: int = 1) -> str:
    """Search apartment listings in a city under a monthly rent."""
    raise NotImplementedError("calls the listings API")


def get_listing(listing_id: str) -> str:
    """Read one listing with its description, photos' captions and the landlord's terms."""
    raise NotImplementedError("calls the listings API")


memory = TurnCappedMemory.from_defaults()

agent = AgentWorkflow.from_tools_or_functions(
    [search_listings, get_listing],
    llm=Anthropic(model="claude-sonnet-4-5", max_tokens=2048),
    system_prompt="You help people find an apartment. Read a listing before you recommend it.",
)


async def ask(text: str) -> str:
    """One message of the app's chat, on the app's one memory."""
    return str(await agent.run(text, memory=memory))

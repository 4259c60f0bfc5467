"""A LlamaIndex ``FunctionAgent`` with LlamaIndex's ``Memory`` on a database file.

``Memory.from_defaults(token_limit=...)`` is the memory LlamaIndex documents
for its agents: a FIFO queue of messages in a SQL store that, past
``token_limit * chat_history_token_ratio``, archives the oldest messages
(whole turns: the queue always starts at a user's message) into its memory
blocks. On a database file the conversation outlives the process: a
restarted app continues the session. Check it::

    prunecheck check loop:examples/loops/llamaindex_memory.py:agent
"""

from __future__ import annotations

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.memory import Memory
from llama_index.llms.anthropic import Anthropic


def search(query: str) -> str:
    """Search the knowledge base."""
    raise NotImplementedError("the app's real search")


def send_email(to: str, body: str) -> str:
    """Send an email."""
    raise NotImplementedError("the app's real mailer")


memory = Memory.from_defaults(
    session_id="support",
    token_limit=3000,
    async_database_uri="sqlite+aiosqlite:///support-memory.db",
)

agent = FunctionAgent(
    tools=[search, send_email],
    llm=Anthropic(model="claude-sonnet-4-5"),
    system_prompt="You are a support agent.",
)


async def chat(text: str) -> str:
    """One message of the app's chat."""
    return str(await agent.run(text, memory=memory))

"""Held back, round 36 (written last; prunecheck not changed for it): a
LlamaIndex ``FunctionAgent`` on a memory of the app's own that forgets the
tool rounds of earlier questions, keeping each question and its answer.

The app subclasses ``ChatMemoryBuffer`` and overrides ``get`` (a plain
``def``; LlamaIndex runs it in a worker thread through ``aget``).  The key
is age, in user turns: the newest ``KEEP_RECENT_TURNS = 1`` turn (from the
latest user message on) is kept as it is; in every older turn the
assistant messages that call tools and the ``tool`` messages answering them
are left out, so what remains of it is the user's question and the
assistant's final answer.  Calls always go with their results (a turn's
calls are answered within the turn), no call is kept without its result and
no result without its call, and the user and assistant messages still
alternate: a history Anthropic (the model, named by its string on
LlamaIndex's ``Anthropic`` class) accepts.  The tools are read-only
lookups whose findings the kept answer states.  The stored conversation is
not changed.

Expected (before running): exit 0, the trimming class **safe** and exercised
(older turns' tool rounds left out in some schedules, on a second message to
the same memory); no ``invalid_prune``, no ``orphaned_result``, no
``unanswered_call``.
"""

from __future__ import annotations

from typing import Any

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ToolCallBlock
from llama_index.core.llms import ChatMessage, MessageRole
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.llms.anthropic import Anthropic

KEEP_RECENT_TURNS = 1


def _calls_tools(message: ChatMessage) -> bool:
    if message.additional_kwargs.get("tool_calls"):
        return True
    return any(isinstance(block, ToolCallBlock) for block in message.blocks)


class RecentTurnsMemory(ChatMemoryBuffer):
    """The chat history, the tool rounds of older turns left out."""

    def get(
        self, input: str | None = None, initial_token_count: int = 0, **kwargs: Any
    ) -> list[ChatMessage]:
        history = super().get(input=input, initial_token_count=initial_token_count, **kwargs)
        user_turns = [i for i, m in enumerate(history) if m.role == MessageRole.USER]
        if len(user_turns) <= KEEP_RECENT_TURNS:
            return history
        recent_from = user_turns[-KEEP_RECENT_TURNS]
        kept = [
            m
            for m in history[:recent_from]
            if m.role != MessageRole.TOOL
            and not (m.role == MessageRole.ASSISTANT and _calls_tools(m))
        ]
        return kept + history[recent_from:]


def get_patient_schedule(patient_id: str, week: str) -> str:
    """Read a patient's appointments for a week."""
    raise NotImplementedError("calls the scheduling system")


def find_free_slots(clinic: str, date: str) -> str:
    """Find the free appointment slots of a clinic on a date."""
    raise NotImplementedError("calls the scheduling system")


memory = RecentTurnsMemory.from_defaults(token_limit=120_000)

agent = FunctionAgent(
    tools=[get_patient_schedule, find_free_slots],
    llm=Anthropic(model="claude-sonnet-4-5"),
    system_prompt="You book clinic appointments. Check the schedule before you offer a slot.",
)


async def chat(text: str) -> str:
    """One message of the app's chat, on the app's one memory."""
    return str(await agent.run(text, memory=memory))

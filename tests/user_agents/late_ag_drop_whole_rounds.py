"""Held back (written last; prunecheck not changed for it): an AutoGen
custom context that drops whole tool rounds.

A subclass of ``UnboundedChatCompletionContext`` whose ``get_messages``,
past 12 messages, leaves out the oldest ``AssistantMessage`` of
``FunctionCall``s together with the ``FunctionExecutionResultMessage``
that answers it (all of that batch's results), until 12 remain or no
complete round is left.  Every call sent has its result and every result
its call: a history every provider accepts.

Expected: **safe** (whole calls dropped, judged by the provider's rules).
"""

from typing import Any

from autogen_agentchat.agents import AssistantAgent
from autogen_core.model_context import UnboundedChatCompletionContext
from autogen_core.models import AssistantMessage, FunctionExecutionResultMessage, LLMMessage


class DropOldRoundsContext(UnboundedChatCompletionContext):
    def __init__(self, max_messages: int = 12) -> None:
        super().__init__()
        self.max_messages = max_messages

    async def get_messages(self) -> list[LLMMessage]:
        messages = list(await super().get_messages())
        i = 0
        while len(messages) > self.max_messages and i < len(messages) - 1:
            first, second = messages[i], messages[i + 1]
            is_round = (
                isinstance(first, AssistantMessage)
                and isinstance(first.content, list)
                and isinstance(second, FunctionExecutionResultMessage)
            )
            if is_round:
                del messages[i : i + 2]
            else:
                i += 1
        return messages


async def get_weather(city: str) -> str:
    """Get the weather of a city."""
    raise NotImplementedError("calls the weather API")


async def get_events(city: str, date: str) -> str:
    """List the events in a city on a date."""
    raise NotImplementedError("calls the events API")


def agent(model_client: Any) -> AssistantAgent:
    """The city guide on the app's model client."""
    return AssistantAgent(
        name="guide",
        model_client=model_client,
        tools=[get_weather, get_events],
        system_message="You are a city guide.",
        model_context=DropOldRoundsContext(max_messages=12),
    )

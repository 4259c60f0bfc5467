"""A module-level AutoGen ``AssistantAgent`` (no factory), as users write one: its
``OpenAIChatCompletionClient`` built at import with the model named by its string
(no key set), and a model context of its own that hands the model its newest
``KEEP_MESSAGES = 2`` messages, blind to a call and its result: UNSAFE in the
trim class (``orphaned_result`` / ``provider_rejection``).

``tests/test_repro_autogen.py`` writes its reproduction and runs it alone.
"""

from autogen_agentchat.agents import AssistantAgent
from autogen_core.model_context import UnboundedChatCompletionContext
from autogen_core.models import LLMMessage
from autogen_ext.models.openai import OpenAIChatCompletionClient

KEEP_MESSAGES = 2


class NewestMessages(UnboundedChatCompletionContext):
    """The newest KEEP_MESSAGES messages, whatever they are."""

    async def get_messages(self) -> list[LLMMessage]:
        messages = await super().get_messages()
        return messages[-KEEP_MESSAGES:]


async def lookup(key: str) -> str:
    """Look a customer record up."""
    raise NotImplementedError("reads the customer store")


agent = AssistantAgent(
    name="clerk",
    model_client=OpenAIChatCompletionClient(model="gpt-4.1"),
    tools=[lookup],
    system_message="You answer questions about customers. Look them up first.",
    model_context=NewestMessages(),
)

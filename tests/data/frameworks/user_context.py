"""A user's own autogen model context: keep the last 3 messages, nothing more."""

from autogen_core.model_context import UnboundedChatCompletionContext
from autogen_core.models import LLMMessage


class KeepLastThree(UnboundedChatCompletionContext):
    async def get_messages(self) -> list[LLMMessage]:
        return (await super().get_messages())[-3:]

"""A user's own autogen model context: keep the last 3 messages, nothing more."""

from autogen_core.model_context import UnboundedChatCompletionContext


class KeepLastThree(UnboundedChatCompletionContext):
    async def get_messages(self):  # type: ignore[no-untyped-def]
        return (await super().get_messages())[-3:]

"""A dice bot with a small sliding window, as in strands issue 2085: the
conversation manager keeps the last few messages so the context stays small."""

import random

from strands import Agent, tool
from strands.agent.conversation_manager import SlidingWindowConversationManager


@tool
def roll_dice(sides: int = 6) -> int:
    """Roll a die with the given number of sides."""
    return random.randint(1, sides)


agent = Agent(
    model="us.amazon.nova-2-lite-v1:0",
    system_prompt="You roll dice for the user. Use the tool.",
    tools=[roll_dice],
    conversation_manager=SlidingWindowConversationManager(window_size=3),
    callback_handler=None,
)

"""An OpenAI Agents SDK input filter that starts over when the input grows: UNSAFE.

The ``call_model_input_filter`` "resets the context" once the input holds
more than ``MAX_ITEMS`` (a module constant, 30) items: it hands the model
no items at all, only the instructions.  Every result the tools returned is
gone and nothing says so; the request holds no conversation, which
Anthropic (and Bedrock, Gemini) refuse outright.  A user expects prunecheck
to grow the conversation past 30 items and judge the emptied request.

Expected: **unsafe** (the emptied request: ``provider_rejection``).
"""

from agents import Agent, RunConfig, function_tool
from agents.run import CallModelData, ModelInputData

MAX_ITEMS = 30


def start_over(data: CallModelData[None]) -> ModelInputData:
    """No items at all once the input is longer than MAX_ITEMS."""
    items = data.model_data.input
    if len(items) > MAX_ITEMS:
        items = []
    return ModelInputData(input=items, instructions=data.model_data.instructions)


@function_tool
def get_ticket(ticket_id: str) -> str:
    """Read a support ticket."""
    raise NotImplementedError("calls the helpdesk API")


@function_tool
def close_ticket(ticket_id: str, resolution: str) -> str:
    """Close a support ticket."""
    raise NotImplementedError("calls the helpdesk API")


agent = Agent(
    name="helpdesk",
    instructions="You resolve support tickets.",
    model="gpt-4.1",
    tools=[get_ticket, close_ticket],
)


def app() -> tuple[Agent[None], RunConfig]:
    """The agent and the run config the app passes to ``Runner.run``."""
    return agent, RunConfig(call_model_input_filter=start_over)

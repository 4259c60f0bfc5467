"""Held back, round 37 (written last; prunecheck not changed for it): an
AutoGen assistant whose model context keeps the last user turns, with a
hard cap on the message count that cuts inside a turn.

autogen-core's docs for custom model contexts: subclass a
``ChatCompletionContext`` (here ``UnboundedChatCompletionContext``, which
stores every message) and override ``get_messages``, what the agent sends
the model.  The app's ``RecentTurnsContext`` keeps everything from the
``KEEP_USER_TURNS = 2``-th last ``UserMessage`` on (whole turns, a cut that
is safe), then, so that a long tool loop cannot blow the request up, keeps
only the newest ``MAX_CONTEXT_MESSAGES = 9`` of those
(``messages[-MAX_CONTEXT_MESSAGES:]``).  The cap counts messages, not tool
rounds: inside a turn of several rounds (the agent runs up to
``max_tool_iterations=6`` rounds per turn) the first message kept can be a
``FunctionExecutionResultMessage`` whose ``AssistantMessage`` of calls fell
off, which OpenAI refuses ("messages with role 'tool' must be a response to
a preceeding message with 'tool_calls'") and Anthropic too.  A round is
two messages (the calls, then all their results), so the cut lands on a
result message only at the right parity: five rounds in one turn (11
messages, the first two cut), or three rounds after a turn of one round and
its answer.  The agent is a factory taking the app's model client, as
AutoGen apps pass it.

Expected (before running): exit 1, the trimming class **unsafe** with
``orphaned_result`` / ``provider_rejection`` (or ``invalid_prune``), the
configuration's, once a request would hold more than 9 messages of the
last two turns (prunecheck has to reach four or five tool rounds in a turn).
"""

from __future__ import annotations

from autogen_agentchat.agents import AssistantAgent
from autogen_core.model_context import UnboundedChatCompletionContext
from autogen_core.models import ChatCompletionClient, LLMMessage, UserMessage

KEEP_USER_TURNS = 2
MAX_CONTEXT_MESSAGES = 9


class RecentTurnsContext(UnboundedChatCompletionContext):
    """The last KEEP_USER_TURNS user turns, at most MAX_CONTEXT_MESSAGES messages."""

    async def get_messages(self) -> list[LLMMessage]:
        messages = list(await super().get_messages())
        user_turns = [i for i, m in enumerate(messages) if isinstance(m, UserMessage)]
        if len(user_turns) > KEEP_USER_TURNS:
            messages = messages[user_turns[-KEEP_USER_TURNS] :]
        if len(messages) > MAX_CONTEXT_MESSAGES:
            messages = messages[-MAX_CONTEXT_MESSAGES:]
        return messages


async def get_invoice(invoice_id: str) -> str:
    """Read an invoice with its line items and payment status."""
    raise NotImplementedError("calls the billing API")


async def list_payments(customer_id: str, months: int = 3) -> str:
    """List a customer's payments over the last months."""
    raise NotImplementedError("calls the billing API")


def agent(model_client: ChatCompletionClient) -> AssistantAgent:
    """The billing assistant on the app's model client."""
    return AssistantAgent(
        name="billing_assistant",
        model_client=model_client,
        tools=[get_invoice, list_payments],
        system_message="You answer billing questions. Read the invoice and payments first.",
        model_context=RecentTurnsContext(),
        max_tool_iterations=6,
    )

"""An AutoGen assistant whose own model context keeps a character budget
stated as a module constant: UNSAFE.

``MAX_CONTEXT_CHARS = 24_000`` at the top of the module; the context keeps
the system message and, newest first, the messages whose text fits in that
many characters, blind to an ``AssistantMessage`` of ``FunctionCall`` s and
the ``FunctionExecutionResultMessage`` after it.  The budget is far above
the harness's default tool outputs, and stated nowhere but in the constant.

Expected: the trimming class **unsafe** (``orphaned_result`` /
``provider_rejection``).
"""

from typing import Any

from autogen_agentchat.agents import AssistantAgent
from autogen_core.model_context import UnboundedChatCompletionContext
from autogen_core.models import LLMMessage, SystemMessage

MAX_CONTEXT_CHARS = 24_000


class CharBudgetContext(UnboundedChatCompletionContext):
    """The newest messages within MAX_CONTEXT_CHARS characters."""

    async def get_messages(self) -> list[LLMMessage]:
        messages = await super().get_messages()
        head = [m for m in messages if isinstance(m, SystemMessage)]
        rest = [m for m in messages if not isinstance(m, SystemMessage)]
        kept: list[LLMMessage] = []
        size = 0
        for message in reversed(rest):
            size += len(str(message.content))
            if size > MAX_CONTEXT_CHARS:
                break
            kept.append(message)
        return head + kept[::-1]


async def fetch_report(report_id: str) -> str:
    """Fetch a quarterly report."""
    raise NotImplementedError("reads the reports store")


async def search_filings(company: str) -> str:
    """Search a company's filings."""
    raise NotImplementedError("calls the filings API")


def agent(model_client: Any) -> AssistantAgent:
    """The analyst on the app's model client."""
    return AssistantAgent(
        name="analyst",
        model_client=model_client,
        tools=[fetch_report, search_filings],
        system_message="You summarize companies' financial reports.",
        model_context=CharBudgetContext(),
    )

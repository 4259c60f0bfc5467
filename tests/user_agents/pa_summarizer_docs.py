"""pydantic-ai's docs' "summarize old messages" history processor.

The processor of pydantic-ai's message-history docs: once the history holds
more than 10 messages, a second agent (``summarize_agent``, its own model by
a provider string) summarizes the oldest 10, and the processor returns the
summary and the last message.  Two things a user runs into under a checker:
the second agent's ``Agent("openai:gpt-4o-mini")`` fails at import without
``OPENAI_API_KEY``, and its model call is a real provider call, which fails
(offline, rate-limited) and raises out of the processor.

Expected: the module **loads** without a key; the summarizer's model call
never reaches a provider and its failure is a **fault prunecheck names** in
the verdict (a summarizer that raises), not a crash of the check.
"""

from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import ModelMessage

summarize_agent = Agent(
    "openai:gpt-4o-mini",
    instructions="""
Summarize this conversation, omitting small talk and unrelated topics.
Focus on the technical discussion and next steps.
""",
)


async def summarize_old_messages(messages: list[ModelMessage]) -> list[ModelMessage]:
    # Summarize the oldest 10 messages
    if len(messages) > 10:
        oldest_messages = messages[:10]
        summary = await summarize_agent.run(message_history=oldest_messages)
        # Return the last message and the summary
        return summary.new_messages() + messages[-1:]

    return messages


agent = Agent(
    "openai:gpt-4o",
    instructions="You are a data analyst. Use the tools.",
    capabilities=[ProcessHistory(summarize_old_messages)],
)


@agent.tool_plain
def run_sql(query: str) -> str:
    """Run a read-only SQL query on the warehouse."""
    raise NotImplementedError("runs the query")


@agent.tool_plain
def describe_table(table: str) -> str:
    """Describe a table's columns."""
    raise NotImplementedError("reads the schema")

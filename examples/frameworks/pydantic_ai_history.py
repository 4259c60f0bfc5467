"""History processors as pydantic-ai's documentation writes them.

``keep_recent_messages`` is the documentation's first example ("keep only
the last 5 messages to manage token usage"); ``summarize_old_messages``
follows its summarizing example, with the summarizing agent replaced by a
fixed summary so that it runs offline.  Check them with::

    prunecheck check \\
      "pydantic-ai:processor=examples/frameworks/pydantic_ai_history.py:keep_recent_messages"
"""

from __future__ import annotations

from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart

__all__ = ["keep_recent_messages", "summarize_old_messages"]


async def keep_recent_messages(messages: list[ModelMessage]) -> list[ModelMessage]:
    """Keep only the last 5 messages to manage token usage."""
    return messages[-5:] if len(messages) > 5 else messages


async def summarize_old_messages(messages: list[ModelMessage]) -> list[ModelMessage]:
    """Summarize all but the last message once there are more than 10."""
    if len(messages) > 10:
        summary = ModelRequest(
            parts=[
                UserPromptPart(
                    content=f"Summary of the {len(messages) - 1} earlier messages: the user asked "
                    "for changes; files were read and tests were run."
                )
            ]
        )
        return [summary, *messages[-1:]]
    return messages

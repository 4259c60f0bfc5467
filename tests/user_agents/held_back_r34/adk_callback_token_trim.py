"""Held back, round 34 (written last; prunecheck not changed for it): a Google
ADK agent whose ``before_model_callback`` keeps the request under a token
budget.

ADK's callbacks docs show ``before_model_callback(callback_context,
llm_request)`` inspecting and editing ``llm_request`` before it is sent.  This
one estimates the prompt at four characters a token and, while it is over
``MAX_PROMPT_TOKENS = 10_000`` (40,000 characters, far above a default tool
output), drops the oldest content of ``llm_request.contents``.  It counts
contents, not function calls: the first content left can be the
``function_response`` turn whose ``function_call`` turn was just dropped, and
Gemini (ADK's default provider; the model is named by its string) answers
400 "Please ensure that function response turn comes immediately after a
function call turn."

Expected (before running): exit 1, the trimming class **unsafe** with
``orphaned_result`` / ``provider_rejection`` (or ``invalid_prune``), once
prunecheck grows outputs or turns past 10,000 estimated tokens.
"""

from __future__ import annotations

from google.adk.agents import Agent
from google.adk.agents.callback_context import CallbackContext
from google.adk.models import LlmRequest, LlmResponse
from google.genai import types

MAX_PROMPT_TOKENS = 10_000


def _tokens(content: types.Content) -> int:
    chars = 0
    for part in content.parts or []:
        if part.text:
            chars += len(part.text)
        if part.function_call:
            chars += len(str(part.function_call.args))
        if part.function_response:
            chars += len(str(part.function_response.response))
    return chars // 4


def keep_prompt_small(
    callback_context: CallbackContext, llm_request: LlmRequest
) -> LlmResponse | None:
    """Drop the oldest contents while the prompt is over budget."""
    contents = llm_request.contents
    while len(contents) > 1 and sum(_tokens(c) for c in contents) > MAX_PROMPT_TOKENS:
        contents.pop(0)
    return None


def search_tickets(query: str) -> dict:
    """Search the helpdesk tickets."""
    raise NotImplementedError("calls the helpdesk API")


def get_ticket(ticket_id: str) -> dict:
    """Get a helpdesk ticket with its comments."""
    raise NotImplementedError("calls the helpdesk API")


root_agent = Agent(
    name="helpdesk",
    model="gemini-2.5-flash",
    instruction="You answer questions about helpdesk tickets. Look them up first.",
    tools=[search_tickets, get_ticket],
    before_model_callback=keep_prompt_small,
)

"""A Google ADK assistant whose App filters the request's context: UNSAFE.

ADK's ``ContextFilterPlugin`` keeps the last ``num_invocations_to_keep``
invocations, moving its cut so that no function response loses its call;
its ``custom_filter`` then runs on what is left, and here it keeps the last
five contents whatever they are.  Three tool calls in a row are enough: the
request starts with a ``function_response`` whose ``function_call`` was cut
away.  Check it::

    prunecheck check loop:examples/loops/adk_context_filter.py:app

The same App keeping whole invocations only (no custom filter)::

    prunecheck check loop:examples/loops/adk_context_filter.py:invocations
"""

from __future__ import annotations

from google.adk.agents import Agent
from google.adk.apps import App
from google.adk.plugins.context_filter_plugin import ContextFilterPlugin
from google.genai import types


def search(query: str) -> str:
    """Search the knowledge base."""
    raise NotImplementedError("the app's real search")


def send_email(to: str, body: str) -> str:
    """Send an email."""
    raise NotImplementedError("the app's real mailer")


def last_contents(contents: list[types.Content]) -> list[types.Content]:
    """Keep the request small: the last five contents."""
    return contents[-5:]


root_agent = Agent(
    name="support",
    model="gemini-2.5-flash",
    instruction="You are a support agent.",
    tools=[search, send_email],
)

app = App(
    name="support",
    root_agent=root_agent,
    plugins=[ContextFilterPlugin(num_invocations_to_keep=3, custom_filter=last_contents)],
)

invocations = App(
    name="support",
    root_agent=root_agent,
    plugins=[ContextFilterPlugin(num_invocations_to_keep=2)],
)

"""The agent of microsoft/autogen#3178 (AutoGen 0.2), as its user configured it.

A calculator assistant: ``ConversableAgent`` with a ``calculator`` tool the
user proxy executes, and the ``TransformMessages`` capability with
``MessageHistoryLimiter(max_messages=3)`` so that only the last 3 messages
are sent to the model (AutoGen's "handling long contexts" recipe).
AutoGen runs the capability's hook, ``process_all_messages_before_reply``,
on the conversation before every reply; prunecheck checks that hook as a
list trimmer over OpenAI messages::

    prunecheck check 'agent.py:assistant.process_all_messages_before_reply@openai'
"""

from __future__ import annotations

import os
from typing import Annotated, Literal

from autogen import ConversableAgent, register_function
from autogen.agentchat.contrib.capabilities import transform_messages, transforms

Operator = Literal["+", "-", "*", "/"]


def calculator(a: int, b: int, operator: Annotated[Operator, "operator"]) -> int:
    """A simple calculator."""
    if operator == "+":
        return a + b
    if operator == "-":
        return a - b
    if operator == "*":
        return a * b
    if operator == "/":
        return int(a / b)
    raise ValueError("Invalid operator")


assistant = ConversableAgent(
    name="Assistant",
    system_message="You are a helpful AI assistant. You can help with simple calculations. "
    "Return 'TERMINATE' when the task is done.",
    llm_config={
        "config_list": [{"model": "gpt-4o", "api_key": os.environ.get("OPENAI_API_KEY", "")}]
    },
)
user_proxy = ConversableAgent(
    name="User",
    llm_config=False,
    is_termination_msg=lambda msg: msg.get("content") is not None and "TERMINATE" in msg["content"],
    human_input_mode="NEVER",
)
register_function(
    calculator,
    caller=assistant,
    executor=user_proxy,
    name="calculator",
    description="A simple calculator",
)

context_handling = transform_messages.TransformMessages(
    transforms=[transforms.MessageHistoryLimiter(max_messages=3)]
)
context_handling.add_to_agent(assistant)

"""A call limit's messages are honest refusals (LangChain's ``ToolCallLimitMiddleware``,
langchain-34159): they say the call was not run, nothing of the world."""

from __future__ import annotations

import pytest

from prunecheck.sim.subjects.loops.placeholder import ruling


@pytest.mark.parametrize(
    "text",
    [
        "Tool call limit exceeded. Do not make additional tool calls.",
        "Tool call limit exceeded. Do not call 'search' again.",
        "Execution stopped before this tool call could run because another tool call in the "
        "same batch exceeded the limit.",
    ],
)
def test_a_call_limits_message_is_an_honest_placeholder(text: str) -> None:
    judged = ruling(text, ran="none", call_words=("search",))
    assert judged.honest, judged.why


def test_a_limit_message_is_false_of_a_call_whose_tool_ran() -> None:
    judged = ruling("Tool call limit exceeded.", ran="ok", call_words=())
    assert not judged.honest

"""The unit of a budget a user's module states as a constant, read from how its code uses it
(issue 31): ``len(text) > MAX_TOOL_CHARS`` counts characters of a text, while
``len(outputs) > KEEP`` counts the elements of a sequence.

A held-back pydantic-ai processor that cuts every tool return longer than
``MAX_TOOL_CHARS`` to its first 2,000 characters had its budget read as "2,000
text" (a count of elements of a sequence named ``text``), so the ladder never grew
an output past 2,000 characters and the class came out vacuous.
"""

from __future__ import annotations

import ast

import pytest

from prunecheck.sim.subjects.loops.constant_units import _uses

SOURCE = """\
MAX_TOOL_CHARS = 2_000
KEEP_OUTPUTS = 3
MAX_BODY = 500


def cut(messages):
    for part in messages:
        text = part.content
        if isinstance(text, str) and len(text) > MAX_TOOL_CHARS:
            part.content = text[:MAX_TOOL_CHARS]
    return messages


def keep(messages, outputs):
    if len(outputs) > KEEP_OUTPUTS:
        outputs = outputs[-KEEP_OUTPUTS:]
    return outputs


def short(_body):
    return len(_body) <= MAX_BODY
"""


@pytest.mark.parametrize(
    ("name", "unit"),
    [("MAX_TOOL_CHARS", "characters"), ("KEEP_OUTPUTS", "outputs"), ("MAX_BODY", "characters")],
)
def test_len_of_a_text_variable_counts_characters_and_of_a_sequence_its_elements(
    name: str, unit: str
) -> None:
    units = {u for u in _uses(ast.parse(SOURCE), name) if u is not None}
    assert units == {unit}

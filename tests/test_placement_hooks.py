"""When each budget-check placement fires, event by event (issue 36: the
``after_batch`` hook also fires on a user message, which the docs did not
say).  The table below is what docs/explanation/gates-placements.md and
``--check-at``'s help state; this test holds the step function to it."""

from __future__ import annotations

from pathlib import Path

import pytest

from prunecheck.model.config import CheckAt, RuntimeConfig
from prunecheck.model.events import (
    AssistantChunk,
    BudgetCheck,
    CallSpec,
    Event,
    Invoke,
    IssueBatch,
    ResultChunk,
    SystemPrompt,
    ToolFailure,
    UserMessage,
)
from prunecheck.model.policies import builtin_policy
from prunecheck.model.runtime import step
from prunecheck.model.state import initial_state
from prunecheck.sim.cli.runtime_options import CHECK_AT_HELP

ROOT = Path(__file__).resolve().parent.parent

READ = CallSpec("read_file", "a.txt")
#: (event, the placements that check after it) along one history.
HISTORY: list[tuple[Event, set[CheckAt]]] = [
    (SystemPrompt(10), {CheckAt.AFTER_APPEND, CheckAt.AFTER_BATCH}),
    (UserMessage(10), {CheckAt.AFTER_APPEND, CheckAt.AFTER_BATCH}),
    (Invoke(), {CheckAt.BEFORE_INVOKE}),
    (AssistantChunk(10, last=False), {CheckAt.AFTER_APPEND}),
    (AssistantChunk(10, last=True), {CheckAt.AFTER_APPEND, CheckAt.AFTER_BATCH}),
    (IssueBatch((READ, READ, READ), 10), {CheckAt.AFTER_APPEND}),
    (Invoke(), set()),  # blocked: calls are pending
    (ResultChunk("c1", 10, last=False), {CheckAt.AFTER_APPEND}),
    (ResultChunk("c1", 10, last=True), {CheckAt.AFTER_APPEND}),  # c2, c3 still pending
    (UserMessage(10), {CheckAt.AFTER_APPEND, CheckAt.AFTER_BATCH}),  # mid-batch, too
    (ToolFailure("c2"), {CheckAt.AFTER_APPEND}),
    (ResultChunk("c3", 10, last=True), {CheckAt.AFTER_APPEND, CheckAt.AFTER_BATCH}),
    (BudgetCheck(), set(CheckAt)),  # an explicit check: every placement
    (Invoke(), {CheckAt.BEFORE_INVOKE}),
]


@pytest.mark.parametrize("placement", list(CheckAt), ids=str)
def test_each_placement_fires_where_the_docs_say(placement: CheckAt) -> None:
    recency = builtin_policy("recency")
    assert recency is not None
    state = initial_state(RuntimeConfig(check_at=placement), recency, record=False)
    fired = []
    for event, _ in HISTORY:
        before = state.counters.get("checks", 0)
        state, _ = step(state, event)
        fired.append((type(event).__name__, state.counters.get("checks", 0) - before))
    assert fired == [(type(e).__name__, int(placement in where)) for e, where in HISTORY]


def test_the_docs_and_the_help_say_it() -> None:
    page = (ROOT / "docs" / "explanation" / "gates-placements.md").read_text(encoding="utf-8")
    flat = " ".join(page.split())
    assert "also after every user message" in flat
    assert "`after_batch`" in flat and "`before_invoke`" in flat
    help_text = " ".join(CHECK_AT_HELP.split())
    assert "user message" in help_text and "before_invoke" in help_text

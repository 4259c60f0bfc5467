"""Reading a policy's return value into a proposal."""

from __future__ import annotations

import pytest

from prunecheck.model.actions import Clear, Evict, Proposal, Summarize, proposal_from
from prunecheck.model.errors import PolicyError

KNOWN = {"m1", "m2", "m3", "m4", "m5"}


def test_ids_and_actions_normalize() -> None:
    p = proposal_from(
        ["m3", Evict("m1"), "m3", Clear("m5"), Summarize(("m2", "m1", "m2"), 7, "sum")],
        KNOWN,
        "demo",
        4,
    )
    assert p == Proposal(
        evict=("m3", "m1"), clear=("m5",), summarize=(Summarize(("m2",), 7, "sum"),)
    )
    assert p.removed() == ("m3", "m1", "m2") and not p.is_empty()


def test_overlaps_resolve_evict_then_summarize_then_clear() -> None:
    p = proposal_from(
        [Summarize(("m1", "m2")), Summarize(("m2", "m3")), Clear("m3"), Clear("m4"), "m1"],
        KNOWN,
        "demo",
        0,
    )
    assert p.evict == ("m1",)
    assert p.summarize == (Summarize(("m2",)), Summarize(("m3",)))
    assert p.clear == ("m4",)


def test_empty_results() -> None:
    assert proposal_from([], KNOWN, "x", 0).is_empty()
    assert proposal_from(iter(()), KNOWN, "x", 0) == Proposal()
    assert proposal_from([Summarize(("m1",))], KNOWN, "x", 0).removed() == ("m1",)


@pytest.mark.parametrize("action", [Summarize(("m1",), tokens=-5), Clear("m1", -1)])
def test_a_negative_size_is_refused_not_replaced(action: Summarize | Clear) -> None:
    """Issue 19: a negative size was silently replaced by 0."""
    with pytest.raises(PolicyError, match=r"tokens=-\d\); tokens must be a whole number"):
        proposal_from([action], KNOWN, "x", 3)


@pytest.mark.parametrize(
    "result, rule",
    [
        ("m1", "select() must return an iterable of message ids or actions, got str."),
        (b"m1", "select() must return an iterable of message ids or actions, got bytes."),
        ({"m1": 1}, "select() must return an iterable of message ids or actions, got dict."),
        (7, "select() must return an iterable of message ids or actions, got int."),
        ([None], "select() returned None (NoneType), which is neither a message id nor an action."),
        (["m9"], "select() returned unknown message id 'm9'; it is not in the context."),
        ([Evict("m9")], "select() returned unknown message id 'm9'; it is not in the context."),
        (
            [Summarize(("m1", "zz"))],
            "select() returned unknown message id 'zz'; it is not in the context.",
        ),
        ([Summarize(())], "Summarize() needs at least one message id."),
    ],
)
def test_garbage_is_a_policy_error_naming_policy_and_step(result: object, rule: str) -> None:
    with pytest.raises(PolicyError) as info:
        proposal_from(result, KNOWN, "salience", 12)
    assert info.value.subject == "policy 'salience' at step 12"
    assert info.value.rule == rule
    assert info.value.paragraph().startswith(f"policy 'salience' at step 12: {rule}")


def test_a_partial_clear_carries_the_tokens_left() -> None:
    p = proposal_from(
        [Clear("m1"), Clear("m2", 40), Evict("m3"), Clear("m3", 5)], {"m1", "m2", "m3"}, "demo", 0
    )
    assert p.clear == ("m1", "m2") and p.clear_to == (("m2", 40),)


def test_the_runtime_shortens_a_partially_cleared_message() -> None:
    from prunecheck.model.config import RuntimeConfig
    from prunecheck.model.events import CallSpec, IssueBatch, ResultChunk, UserMessage
    from prunecheck.model.policies import ContextView, FunctionPolicy
    from prunecheck.model.runtime import apply
    from prunecheck.model.state import initial_state

    def shorten_results(view: ContextView, need: int) -> list[Clear]:
        return [Clear(m.id, 100) for m in view.messages if m.call_id]

    state = initial_state(
        RuntimeConfig(budget=1_000, hard_ceiling=5_000), FunctionPolicy(shorten_results, "shorten")
    )
    for event in (
        UserMessage(50, "go"),
        IssueBatch((CallSpec("read_file", "a"),), 20),
        ResultChunk("c1", 1_500),
    ):
        apply(state, event)
    result = next(m for m in state.context if m.call_id == "c1")
    assert result.cleared and result.tokens == 100  # not the 8-token placeholder

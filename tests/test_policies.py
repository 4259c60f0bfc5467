"""The policy API and the built-in policies, each on a hand-built context;
``unit_safe`` never proposes an invalid prune on generated runtimes."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from strategies import POLICY_NAMES, Scenario, scenarios

from prunecheck.model.actions import Clear, Summarize
from prunecheck.model.context import Context, Message, Role
from prunecheck.model.gates import Gate
from prunecheck.model.incidents import IncidentKind
from prunecheck.model.policies import (
    BUILTINS,
    ContextView,
    FunctionPolicy,
    as_policy,
    builtin_policy,
    salience,
)
from prunecheck.model.runtime import apply


def m(
    mid: str, role: Role, tokens: int, at: float, turn: int = 1, unit: str | None = None, **kw: Any
) -> Message:
    return Message(mid, role, tokens, turn, at, unit_id=unit or mid, **kw)


def seed_view(now: float = 10.0) -> ContextView:
    """system; old user; big assistant text; user; a batch turn (c1, c2), the
    first result just in, c2 still streaming into m7."""
    ctx = Context()
    for message in (
        m("m1", Role.SYSTEM, 100, 0.0, 0),
        m("m2", Role.USER, 900, 1.0, 1, text="paste the ci log"),
        m("m3", Role.ASSISTANT, 1500, 2.0, 1, text="the log shows a failing import"),
        m("m4", Role.USER, 300, 6.0, 3, text="read the config file"),
        m("m5", Role.ASSISTANT, 60, 8.0, 3, tool_calls=("c1", "c2"), text="read_file grep"),
        m("m6", Role.TOOL, 900, 9.0, 3, "m5", call_id="c1", text="config file contents"),
        m("m7", Role.TOOL, 40, 10.0, 3, "m5", call_id="c2", closed=False, text="grep"),
    ):
        ctx.append(message)
    ctx.mark_pending("m5", "c2")
    return ContextView(ctx, pending_calls=frozenset({"c2"}), budget=3000, now=now, turn=4)


def select(name: str, need: int, view: ContextView | None = None) -> list[object]:
    policy = builtin_policy(name)
    assert policy is not None and policy.name == name
    return list(policy.select(view or seed_view(), need))


def test_builtins_are_named_and_constructible() -> None:
    assert tuple(sorted(BUILTINS)) == POLICY_NAMES
    assert len(POLICY_NAMES) == 8
    assert builtin_policy("nope") is None


def test_view_is_a_read_only_sequence() -> None:
    view = seed_view()
    assert len(view.messages) == 7 and view.messages[0].id == "m1"
    assert [x.id for x in view.messages[-2:]] == ["m6", "m7"]
    assert [x.id for x in reversed(view.messages)][:2] == ["m7", "m6"]
    assert (view.used, view.budget, view.turn, view.now) == (3800, 3000, 4, 10.0)
    assert repr(view) == "ContextView(7 messages, used=3800, budget=3000, pending=['c2'])"
    with pytest.raises(AttributeError):
        view.messages[0].tokens = 1  # type: ignore[misc]  # frozen on purpose


def test_salience_ranks_the_batch_turn_low_and_system_infinite() -> None:
    view = seed_view()
    scores = {x.id: salience(x, view.now) for x in view.messages}
    assert scores["m1"] == math.inf
    assert scores["m5"] < scores["m6"] and scores["m7"] < scores["m6"]
    assert min(scores, key=scores.__getitem__) == "m7"  # the partial trailing message


def test_recency_skips_system_and_the_latest_user() -> None:
    assert select("recency", 1) == ["m2"]
    assert select("recency", 2460) == ["m2", "m3", "m5"]


def test_lowest_salience_evicts_partial_and_batch_turn_first() -> None:
    assert select("lowest_salience", 50) == ["m7", "m5"]
    assert "m1" not in select("lowest_salience", 10_000)


def test_turn_window_ignores_need() -> None:
    assert select("turn_window", 0) == ["m2", "m3"]
    view = seed_view()
    assert list(BUILTINS["turn_window"]().select(view, 10**6)) == ["m2", "m3"]


def test_token_span_cuts_from_the_front() -> None:
    assert select("token_span", 901) == ["m2", "m3"]
    assert select("token_span", 0) == []


def test_similarity_keeps_what_matches_the_latest_user_message() -> None:
    # "read the config file" matches m6 ("config file contents") best.
    ranked = select("similarity", 10_000)
    assert ranked[-1] == "m6" and "m4" not in ranked and "m1" not in ranked
    ctx = Context()
    ctx.append(m("m1", Role.ASSISTANT, 10, 0.0))
    ctx.append(m("m2", Role.ASSISTANT, 10, 1.0))
    view = ContextView(ctx, pending_calls=frozenset(), budget=5, now=2.0, turn=1)
    assert select("similarity", 5, view) == ["m1"]  # no user message: recency


def test_clear_old_results_clears_tool_messages_even_streaming() -> None:
    assert select("clear_old_results", 10_000) == [Clear("m6"), Clear("m7")]
    assert select("clear_old_results", 100) == [Clear("m6")]


def test_summarize_prefix_is_one_group_cut_by_tokens() -> None:
    assert select("summarize_prefix", 900) == [Summarize(("m2", "m3"))]
    assert select("summarize_prefix", 0) == []


def test_unit_safe_takes_only_whole_closed_idle_units() -> None:
    assert select("unit_safe", 10_000) == ["m2", "m3"]  # m4: latest user; m5: pending
    assert select("unit_safe", 1) == ["m2"]


def test_as_policy_accepts_functions_objects_and_classes() -> None:
    def trim(view: ContextView, need: int) -> list[str]:
        return []

    class Named:
        name = "named"

        def select(self, view: ContextView, need: int) -> list[str]:
            return ["m2"]

    class Unnamed:
        def select(self, view: ContextView, need: int) -> list[str]:
            return ["m3"]

    assert as_policy(trim, "spec").name == "trim"
    named = Named()
    assert as_policy(named, "spec") is named
    from_class = as_policy(Named, "spec")
    assert isinstance(from_class, Named)
    wrapped = as_policy(Unnamed(), "mod:Unnamed")
    assert isinstance(wrapped, FunctionPolicy) and wrapped.name == "mod:Unnamed"
    assert list(wrapped.select(seed_view(), 1)) == ["m3"]
    with pytest.raises(TypeError, match="neither callable"):
        as_policy(42, "spec")


@given(scenarios(gates=(Gate.NONE,), policies=("unit_safe",)))
def test_unit_safe_never_makes_an_invalid_prune_even_without_a_gate(scenario: Scenario) -> None:
    state = scenario.run_state()
    for event in scenario.events:
        kinds = {i.kind for i in apply(state, event).incidents}
        assert IncidentKind.INVALID_PRUNE not in kinds
        assert IncidentKind.ORPHANED_RESULT not in kinds


def test_a_policy_is_named_once_where_it_is_made() -> None:
    from prunecheck.model.policies import FunctionPolicy, as_policy, policy_name

    class Named:
        name = "mine"

        def select(self, view: object, need: int) -> list[str]:
            return []

    class Unnamed:
        def select(self, view: object, need: int) -> list[str]:
            return []

    def keep_all(view: object, need: int) -> list[str]:
        return []

    assert as_policy(Named(), "attr").name == "mine"
    assert as_policy(Unnamed, "attr").name == "attr"  # a class is instantiated, then named
    assert as_policy(keep_all, "attr").name == "keep_all"
    assert policy_name(FunctionPolicy(keep_all, "x"), "d") == "x"
    assert policy_name(object(), "d") == "d"

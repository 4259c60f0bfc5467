"""Tests of prunecheck.model.provider.pairing: the pairing errors read straight
from the context equal ``validate(render(...))``, its specification."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import Scenario, scenarios
from test_provider import msg, transcripts

from prunecheck.model.context import Message, Role
from prunecheck.model.provider import Provider, render, validate
from prunecheck.model.provider.pairing import pairing_errors
from prunecheck.model.runtime import apply

PROVIDERS = (Provider.ANTHROPIC, Provider.OPENAI, Provider.DEEPSEEK)  # the fast paths


def _spec(ctx: list[Message], provider: Provider) -> object:
    return validate(render(ctx, provider), provider)


@settings(max_examples=30)
@given(transcripts(), st.data())
def test_any_cut_reorder_or_repeat_of_a_context_gives_the_errors_of_its_request(
    ctx: list[Message], data: st.DataObject
) -> None:
    picked = data.draw(st.lists(st.integers(0, len(ctx) - 1), max_size=len(ctx) + 3))
    broken = [ctx[i] for i in picked]
    for provider in PROVIDERS:
        assert pairing_errors(broken, provider) == _spec(broken, provider)


def _every_state(scenario: Scenario) -> None:
    state = scenario.run_state()
    for event in scenario.events:
        apply(state, event)
        ctx = list(state.context)
        for provider in PROVIDERS:
            assert pairing_errors(ctx, provider) == _spec(ctx, provider)


@settings(max_examples=15)
@given(scenarios(max_events=12))
def test_every_state_of_a_short_run_gives_the_errors_of_its_request(scenario: Scenario) -> None:
    _every_state(scenario)


@pytest.mark.slow
@settings(settings.get_profile("thorough"))
@given(scenarios())
def test_every_state_of_a_run_gives_the_errors_of_its_request(scenario: Scenario) -> None:
    _every_state(scenario)


def test_a_broken_history_is_found_with_the_providers_words() -> None:
    ctx = [
        msg("m1", Role.SYSTEM, "be brief"),
        msg("m2", Role.USER, "go"),
        msg("m4", Role.TOOL, "out", call_id="c1"),
        msg("m5", Role.ASSISTANT, calls=("c2", "c3")),
        msg("m6", Role.TOOL, "out", call_id="c3"),
    ]
    anthropic = pairing_errors(ctx, Provider.ANTHROPIC)
    assert [(e.kind, e.path, e.ids) for e in anthropic] == [
        ("result_without_call", "messages.0.content.0", ("c1",)),
        ("call_without_result", "messages.1", ("c2",)),
    ]
    openai = pairing_errors(ctx, Provider.OPENAI)
    assert [(e.kind, e.path, e.ids) for e in openai] == [
        ("result_without_call", "messages.2", ("c1",)),
        ("call_without_result", "messages.3", ("c2",)),
    ]
    assert anthropic == _spec(ctx, Provider.ANTHROPIC)
    assert openai == _spec(ctx, Provider.OPENAI)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_tool_message_without_a_call_is_refused_as_render_refuses_it(
    provider: Provider,
) -> None:
    ctx = [msg("m1", Role.TOOL, "out")]
    with pytest.raises(ValueError, match="answers no call") as spec:
        render(ctx, provider)
    with pytest.raises(ValueError, match="answers no call") as fast:
        pairing_errors(ctx, provider)
    assert str(fast.value) == str(spec.value)

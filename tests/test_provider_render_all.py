"""Every provider's rendering and check on any context (issue 34): the body
``render`` builds is always one the provider's validator reads (a cut,
reordered or repeated context gets rule errors, never a malformed-body
error), each error is one of the provider's rules, names only the context's
calls and carries the rule's own text; and pairing_errors answers the same."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from test_provider import transcripts

from prunecheck.model.context import Message
from prunecheck.model.provider import Provider, recognize, render, rule, rules_of, validate
from prunecheck.model.provider.pairing import pairing_errors

ALL = tuple(Provider)


@settings(max_examples=25, deadline=None)
@given(transcripts(), st.data())
def test_any_cut_of_a_context_renders_to_a_body_each_provider_reads(
    ctx: list[Message], data: st.DataObject
) -> None:
    picked = data.draw(st.lists(st.integers(0, len(ctx) - 1), max_size=len(ctx) + 2))
    broken = [ctx[i] for i in picked]
    known = {c for m in ctx for c in m.tool_calls} | {m.call_id for m in ctx if m.call_id}
    for provider in ALL:
        errors = validate(render(broken, provider), provider)  # raises on a malformed body
        ids = {r.id for r in rules_of(provider)}
        for error in errors:
            assert error.provider is provider and error.rule in ids
            assert set(error.ids) <= known, (provider, error)
            assert recognize(error.text) is rule(error.rule), error
        assert pairing_errors(broken, provider) == errors


@settings(max_examples=25, deadline=None)
@given(transcripts())
def test_a_well_formed_context_breaks_no_pairing_rule(ctx: list[Message]) -> None:
    """A well-formed context breaks no provider's pairing: Bedrock and Mistral
    may object only to a user message right after tool results (their role
    order), Bedrock to a first message not the user's, Gemini only to a call
    turn first or after another model turn."""
    order = {Provider.BEDROCK: {"user_after_result", "user_not_first"},
             Provider.MISTRAL: {"user_after_result"},
             Provider.GEMINI: {"call_out_of_place"}}  # fmt: skip
    for provider in ALL:
        kinds = {e.kind for e in validate(render(ctx, provider), provider)}
        assert kinds <= order.get(provider, set()), (provider, kinds)

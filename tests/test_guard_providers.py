"""The guard's preview reads the providers' rules (issue 34): told the
providers its runtime sends to (``provider=``), the guard refuses a prune or
spill that would leave a history one of them rejects — where it accepted
the history before — and the plan names each rejecting provider's rule,
verbatim text and request location, from the same rule objects the
validator (``prunecheck validate``, ``validate_request``) answers with.

Two histories a unit-safe prune leaves, each accepted by OpenAI Chat
Completions and rejected by others (the strictness matrix's rows "the
opening request dropped" and "user text right after the results"):

* the opening request dropped: the history starts with the assistant's
  call — Gemini (function call turn first) and Bedrock (conversation does
  not start with the user) reject it;
* the assistant's answer dropped between a tool result and the next user
  message: Bedrock merges them into one turn (conversation blocks and tool
  result blocks in the same turn) and Mistral answers its role-order rule.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from prunecheck import validate_request
from prunecheck.guard import (
    CommitGuard,
    Deferral,
    GuardError,
    HardCeilingExceeded,
    ListGuard,
    Plan,
    SpillStore,
)
from prunecheck.guard.errors import GuardConfigError, StoreError, StoreFault
from prunecheck.guard.preview import effect_of, messages_after
from prunecheck.model.actions import PLACEHOLDER_TOKENS, Proposal
from prunecheck.model.provider import (
    PROVIDERS,
    Provider,
    as_provider,
    pairing_errors,
    render,
    rule,
    validate,
)
from prunecheck.sim.cli.app import main

# ---------------------------------------------------------------- the runtime


def _call(cid: str) -> dict[str, Any]:
    return {"id": cid, "type": "function", "function": {"name": "read", "arguments": "{}"}}


HISTORY: dict[str, dict[str, Any]] = {
    "s": {"role": "system", "content": "you fix bugs"},
    "u1": {"role": "user", "content": "fix src/app.py"},
    "a1": {"role": "assistant", "content": None, "tool_calls": [_call("c1")]},
    "r1": {"role": "tool", "tool_call_id": "c1", "content": "def main(): ..."},
    "a2": {"role": "assistant", "content": "main() returned early; fixed."},
    "u2": {"role": "user", "content": "now lint it"},
}
TOKENS = {"s": 10, "u1": 60, "a1": 10, "r1": 100, "a2": 40, "u2": 20}


def _dropping(*wanted: str) -> Any:
    """A list function that drops the messages ``wanted`` names (by content)."""
    contents = {json.dumps(HISTORY[m], sort_keys=True) for m in wanted}

    def trim(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [m for m in messages if json.dumps(m, sort_keys=True) not in contents]

    return trim


def _guard(
    trimmer: Any,
    provider: Any = None,
    tokens: dict[str, int] = TOKENS,
    budget: int = 220,
    hard_ceiling: int = 400,
    **kwargs: Any,
) -> CommitGuard:
    guard = CommitGuard(
        trimmer,
        format="openai",
        budget=budget,
        hard_ceiling=hard_ceiling,
        provider=provider,
        **kwargs,
    )
    guard.message("s", "system", tokens["s"], payload=HISTORY["s"])
    guard.message("u1", "user", tokens["u1"], payload=HISTORY["u1"])
    guard.calls("a1", ["c1"], tokens["a1"], payload=HISTORY["a1"])
    guard.result_complete("c1", tokens["r1"], mid="r1", payload=HISTORY["r1"])
    guard.message("a2", "assistant", tokens["a2"], payload=HISTORY["a2"])
    guard.message("u2", "user", tokens["u2"], payload=HISTORY["u2"])
    return guard


#: The opening request is large: spilling it alone meets the budget.
BIG_OPENING = {**TOKENS, "u1": 150, "r1": 20, "a2": 10}  # 220 tokens


def _keep_all(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return messages


def _sent(plan: Plan, ids: list[str] | None = None) -> list[dict[str, Any]]:
    """The runtime's list after applying ``plan`` (or after removing ``ids``)."""
    gone = set(plan.remove if ids is None else ids)
    return [message for mid, message in HISTORY.items() if mid not in gone]


# ------------------------------------------------- one accepts, others reject


def test_without_providers_the_guard_prunes_as_before() -> None:
    guard = _guard(_dropping("u1"))
    plan = guard.check()
    assert plan.evict == ("u1",) and plan.deferred is None and plan.rejections == ()
    assert guard.providers == () and guard.stats.refused == 0


def test_the_preview_names_exactly_the_providers_that_reject_the_opening_request_dropped() -> None:
    guard = _guard(_dropping("u1"), provider="openai,gemini,bedrock")
    plan = guard.check()
    assert plan.deferred is Deferral.PROVIDER_REJECTION
    assert plan.evict == () and plan.remove == () and plan.grown == ()
    assert [(str(e.provider), e.rule, e.path) for e in plan.rejections] == [
        ("gemini", "gemini.call_out_of_place", "contents[0]"),
        ("bedrock", "bedrock.user_not_first", "messages.0"),
    ]
    texts = [e.text for e in plan.rejections]
    assert texts == [
        "Please ensure that function call turn comes immediately after a user turn or after "
        "a function response turn.",
        "A conversation must start with a user message. Try again with a conversation that "
        "starts with a user message.",
    ]
    assert guard.used == sum(TOKENS.values())  # nothing changed
    assert guard.stats.refused == 1 and guard.stats.deferred == 1
    # The same history, kept by the runtime had the guard pruned it, is what
    # OpenAI Chat Completions accepts: the guard named no OpenAI rule.
    assert validate_request(_sent(plan, ["u1"]), "openai") == ()


def test_a_prune_only_openai_sees_is_applied() -> None:
    guard = _guard(_dropping("u1"), provider=["openai", "anthropic", "mistral", "deepseek"])
    plan = guard.check()
    assert plan.evict == ("u1",) and plan.rejections == () and plan.deferred is None


def test_the_preview_names_bedrocks_mixed_turn_and_mistrals_role_order() -> None:
    guard = _guard(_dropping("a2"), provider="openai, Bedrock,gemini,mistral")
    plan = guard.check()
    assert plan.deferred is Deferral.PROVIDER_REJECTION
    found = {str(e.provider): e for e in plan.rejections}
    assert list(found) == ["bedrock", "mistral"]
    assert found["bedrock"].rule == "bedrock.user_after_result"
    assert found["bedrock"].text == (
        "messages.2.content: Conversation blocks and tool result blocks cannot be provided in "
        "the same turn."
    )
    assert found["mistral"].rule == rule("mistral.user_after_result").id
    # what Gemini and OpenAI were asked: the pruned history, which they accept
    after = _sent(plan, ["a2"])
    assert validate_request(after, "openai") == ()
    assert validate(as_provider({"messages": after}, Provider.GEMINI), Provider.GEMINI) == []


@pytest.mark.parametrize("provider", [p.value for p in PROVIDERS])
def test_the_guard_and_the_validator_give_the_same_verdict_and_text(
    provider: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """For each provider and each of the two prunes: the guard's preview
    names a rejection exactly when ``prunecheck validate`` rejects the
    request the runtime would send after the prune (its messages converted
    by the validator's own converter), with the same rule and text."""
    for dropped in ("u1", "a2"):
        guard = _guard(_dropping(dropped), provider=provider)
        plan = guard.check()
        kept = _sent(plan, [dropped])
        body = as_provider({"messages": kept}, Provider(provider))
        path = tmp_path / f"{provider}-{dropped}.json"
        path.write_text(json.dumps(body))
        code = main(["validate", str(path), "--format", provider, "--json"])
        answered = json.loads(capsys.readouterr().out)
        errors = answered["details"]["errors"]
        if plan.rejections:
            assert code == 1 and plan.deferred is Deferral.PROVIDER_REJECTION
            (error,) = plan.rejections
            first = errors[0]
            assert (error.kind, error.text, error.path, list(error.ids), error.status) == (
                first["kind"],
                first["provider_text"],
                first["path"],
                first["ids"],
                first["status"],
            )
            assert error.rule == validate(body, Provider(provider))[0].rule
        else:
            assert code == 0 and errors == [] and plan.evict == (dropped,)


def test_the_preview_is_the_model_rules_on_the_context_the_plan_leaves() -> None:
    """The preview's verdict is ``pairing_errors`` (= validate(render(...)))
    of the context the plan would leave, for every registry provider."""
    guard = _guard(_dropping("u1"), provider=",".join(p.value for p in PROVIDERS))
    ctx = guard.tracker.ctx
    after = messages_after(
        ctx, effect_of(ctx, Proposal(evict=("u1",)), PLACEHOLDER_TOKENS), (), 0, 0
    )
    expected = []
    for provider in PROVIDERS:
        errors = pairing_errors(after, provider)
        assert errors == validate(render(after, provider), provider)
        if errors and not pairing_errors(list(ctx), provider):
            expected.append(errors[0])
    assert guard.check().rejections == tuple(expected)
    assert {str(e.provider) for e in expected} == {"gemini", "bedrock"}


def test_a_rejection_the_history_already_had_does_not_block_a_prune() -> None:
    """A history Bedrock already rejects (user text right after the result,
    before any prune): pruning the opening turn's text adds nothing new."""
    guard = CommitGuard(_dropping("a2"), format="openai", budget=170, provider="bedrock")
    guard.message("u1", "user", 60, payload=HISTORY["u1"])
    guard.calls("a1", ["c1"], 10, payload=HISTORY["a1"])
    guard.result_complete("c1", 50, mid="r1", payload=HISTORY["r1"])
    guard.message("u2", "user", 20, payload=HISTORY["u2"])  # Bedrock: a mixed turn already
    guard.message("a2", "assistant", 40, payload=HISTORY["a2"])
    guard.message("u3", "user", 20, payload={"role": "user", "content": "thanks"})
    plan = guard.check()
    assert plan.evict == ("a2",) and plan.rejections == () and plan.deferred is None


# ------------------------------------------------------------ the hard ceiling


def test_a_refused_spill_fails_loudly_naming_the_rule() -> None:
    """Over the hard ceiling with the trimmer refused and the spill (the
    oldest unit: the opening request) rejected too, the guard keeps the
    context, commits nothing and raises naming Gemini's rule."""
    store = SpillStore(":memory:")
    guard = _guard(_dropping("u1"), "gemini", BIG_OPENING, 100, 200, store=store)
    with pytest.raises(HardCeilingExceeded) as caught:
        guard.check()
    plan = caught.value.plan
    assert plan.spill == () and plan.evict == () and guard.spilled == ()
    assert store.units(guard.conversation) == []
    assert [e.rule for e in plan.rejections] == ["gemini.call_out_of_place"] * 2
    assert "gemini.call_out_of_place at contents[0]: Please ensure that function call turn" in (
        str(caught.value)
    )
    assert guard.stats.refused == 2 and guard.stats.overruns == 1


def test_an_accepted_spill_goes_through_and_is_checked() -> None:
    """The same overflow for a guard told of OpenAI only (and a trimmer that
    proposes nothing): the opening request is spilled, as without providers."""
    guard = _guard(_keep_all, "openai", BIG_OPENING, 100, 200, store=":memory:")
    plan = guard.check()
    assert plan.rejections == () and plan.spill == ("u1",) and guard.spilled == ("u1",)
    gemini = _guard(_keep_all, "openai,gemini", BIG_OPENING, 100, 200, store=":memory:")
    with pytest.raises(HardCeilingExceeded):
        gemini.check()
    assert gemini.spilled == ()


def test_a_store_fault_with_providers_named_still_changes_nothing() -> None:
    """The guard's atomicity under store faults holds with providers named:
    the preview runs before the spill's commit, which fails; nothing changed."""

    class Failing(SpillStore):
        def put_many(self, *args: Any, **kwargs: Any) -> None:
            raise StoreError(StoreFault.FULL, ":memory:", "disk full")

    guard = _guard(_keep_all, "openai", BIG_OPENING, 100, 200, store=Failing(":memory:"))
    before = [m.id for m in guard.tracker.ctx]
    with pytest.raises(StoreError):
        guard.check()
    assert [m.id for m in guard.tracker.ctx] == before and guard.stats.checks == 0


# --------------------------------------------------------------- the settings


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, ()),
        ("gemini", ("gemini",)),
        ("bedrock,gemini", ("bedrock", "gemini")),
        (["GEMINI", "openai-responses", "gemini"], ("gemini", "openai-responses")),
        (Provider.ANTHROPIC, ("anthropic",)),
        ((), ()),
    ],
)
def test_provider_names_as_check_spells_them(value: Any, expected: tuple[str, ...]) -> None:
    guard = CommitGuard(lambda m: m, format="openai", budget=10, provider=value)
    assert guard.providers == expected
    assert guard.copy().providers == expected


@pytest.mark.parametrize("value", ["gpt", "gemini,,bedrock", 42, [3], b"openai"])
def test_an_unknown_provider_is_refused_naming_the_known_ones(value: Any) -> None:
    with pytest.raises(GuardConfigError) as caught:
        CommitGuard(lambda m: m, format="openai", budget=10, provider=value)
    assert "provider=" in str(caught.value) and "Hint:" in str(caught.value)
    assert isinstance(caught.value, GuardError)


def test_assigning_providers_takes_effect_at_the_next_check() -> None:
    guard = _guard(_dropping("u1"))
    guard.providers = "bedrock"
    assert [e.rule for e in guard.check().rejections] == ["bedrock.user_not_first"]
    guard.providers = None
    assert guard.check().evict == ("u1",)


def test_list_guard_passes_its_providers_on() -> None:
    messages = list(HISTORY.values())
    guarded = ListGuard(
        _dropping("u1"), format="openai", budget=40, hard_ceiling=100,
        token_counter=lambda m: 10, provider="gemini",
    )  # fmt: skip
    assert guarded(messages) == messages  # refused: the list comes back whole
    assert guarded.last_plan is not None
    assert [e.rule for e in guarded.last_plan.rejections] == ["gemini.call_out_of_place"]
    plain = ListGuard(
        _dropping("u1"), format="openai", budget=40, hard_ceiling=100, token_counter=lambda m: 10
    )
    assert HISTORY["u1"] not in plain(messages)


def test_a_guard_without_providers_does_not_load_the_rules() -> None:
    """The rules load only for a guard told its providers: the import stays light."""
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from prunecheck.guard import CommitGuard\n"
        "g = CommitGuard(lambda m: m[1:], format='openai', budget=5, hard_ceiling=50)\n"
        "for mid, role in (('u', 'user'), ('a', 'assistant'), ('v', 'user')):\n"
        "    g.message(mid, role, 3, payload={'role': role, 'content': mid})\n"
        "assert g.check().evict == ('u',)\n"
        "print('prunecheck.model.provider' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120, check=True)  # fmt: skip
    assert done.stdout.strip() == "False"

"""List-function adapters: rendering with provenance, mapping kept items back
to message ids, and clear verdicts for functions that add, reorder, rewrite,
mutate or return garbage."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.errors import PolicyError
from prunecheck.model.events import (
    AssistantChunk,
    CallSpec,
    Event,
    Invoke,
    IssueBatch,
    ResultChunk,
    SystemPrompt,
    UserMessage,
)
from prunecheck.model.incidents import IncidentKind
from prunecheck.model.model_system import ModelSystem
from prunecheck.model.policies import BUILTINS, ContextView
from prunecheck.model.provider import Provider, render
from prunecheck.model.runtime import apply
from prunecheck.model.state import initial_state
from prunecheck.model.system import incidents_of
from prunecheck.model.trace import Trace
from prunecheck.sim.subjects.cage import CagedPolicy
from prunecheck.sim.subjects.list_render import render_list
from prunecheck.sim.subjects.lists import ListPolicy, list_policy
from prunecheck.sim.subjects.loader import load_local, load_policy

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
Msgs = list[dict[str, Any]]

# m1 system, m2 user, m3 batch (c1, c2), m4 result c1, m6 result c2, m5 user
# (arrived mid-batch), m7 assistant, m8 user, m9 batch (c3), m10 streaming c3.
EVENTS: list[Event] = [
    SystemPrompt(100, "sys"),
    UserMessage(50, "hi"),
    IssueBatch((CallSpec("read_file", "a.txt"), CallSpec("grep", "src")), 40),
    ResultChunk("c1", 300),
    UserMessage(20, "also"),
    ResultChunk("c2", 100),
    AssistantChunk(30, text="done"),
    UserMessage(10, "next"),
    IssueBatch((CallSpec("stat", "x"),), 30),
    ResultChunk("c3", 50, last=False),
]


def _view() -> ContextView:
    state = initial_state(
        RuntimeConfig(budget=100_000, hard_ceiling=200_000), BUILTINS["recency"]()
    )
    for event in EVENTS:
        apply(state, event)
    return ContextView(
        state.context,
        pending_calls=frozenset(state.pending),
        budget=500,
        now=state.now,
        turn=state.turn,
    )


def _shape(messages: object) -> object:
    """A rendered list with every text replaced by a marker: its structure."""
    if isinstance(messages, list):
        return [_shape(m) for m in messages]
    if isinstance(messages, dict):
        return {
            k: "<text>" if k in ("content", "text") and isinstance(v, str) else _shape(v)
            for k, v in messages.items()
        }
    return messages


def _texts(messages: object) -> list[str]:
    if isinstance(messages, list):
        return [t for m in messages for t in _texts(m)]
    if isinstance(messages, dict):
        return [
            v if isinstance(v, str) else t
            for k, v in messages.items()
            if k in ("content", "text")
            for t in ([v] if isinstance(v, str) else _texts(v))
        ]
    return []


def test_rendered_text_is_as_long_as_the_declared_tokens() -> None:
    """4 characters per declared token, calls' JSON arguments included."""
    view = _view()
    rendered = render_list(view.messages, "openai")
    for message, item in zip(view.messages, rendered.messages, strict=True):
        chars = len(item.get("content") or "") + sum(
            len(c["function"]["name"]) + len(c["function"]["arguments"])
            for c in item.get("tool_calls", [])
        )
        assert abs(chars - 4 * message.tokens) <= 4, (message.id, chars, message.tokens)


def _ids(view: ContextView) -> list[str]:
    return [m.id for m in view.messages]


@pytest.mark.parametrize("fmt", ["openai", "anthropic"])
def test_render_list_is_the_request_body_the_runtime_sends(fmt: str) -> None:
    view = _view()
    rendered = render_list(view.messages, fmt)
    tools = {"c1": ("read_file", "a.txt"), "c2": ("grep", "src"), "c3": ("stat", "x")}
    expected = render(list(view.messages), Provider(fmt), tools=tools)["messages"]
    assert isinstance(expected, list)
    assert _shape(rendered.messages) == _shape(expected)
    for got, short in zip(_texts(rendered.messages), _texts(expected), strict=True):
        assert got.startswith(short.removeprefix("(").removesuffix(")")[:3]) or short[0] == "("
    owned = {o for owners in rendered.owners for o in owners} | rendered.hidden
    assert owned == set(_ids(view))


def test_anthropic_merged_message_maps_blocks_to_messages() -> None:
    rendered = render_list(_view().messages, "anthropic")
    assert rendered.hidden == {"m1"}
    # tool results first, then the user text that arrived mid-batch
    assert rendered.owners[2] == ("m4", "m6", "m5")
    # an assistant that issued calls is identified by its tool_use blocks only
    assert rendered.keys["m3"] == ((1, 1), (1, 2))


def test_keep_last_openai_evicts_the_front() -> None:
    view = _view()
    policy = list_policy(lambda ms: ms[-4:], "openai")
    assert policy.select(view, 100) == ["m1", "m2", "m3", "m4", "m6", "m5"]


def test_copies_map_like_the_originals() -> None:
    view = _view()
    same = list_policy(lambda ms: ms[-5:], "openai").select(view, 1)
    copied = list_policy(lambda ms: copy.deepcopy(ms[-5:]), "openai").select(view, 1)
    assert copied == same == ["m1", "m2", "m3", "m4", "m6"]


def test_equal_duplicates_prefer_the_later_message() -> None:
    view = _view()

    def keep_last_user_copy(ms: Msgs) -> Msgs:
        return [dict(m) for m in ms if m["role"] == "user"][-1:]

    evicted = list_policy(keep_last_user_copy, "openai").select(view, 1)
    assert "m8" not in evicted and "m2" in evicted


def test_anthropic_dropping_a_merged_message_evicts_every_owner() -> None:
    view = _view()
    evicted = list_policy(lambda ms: ms[3:], "anthropic").select(view, 1)
    assert evicted == ["m2", "m3", "m4", "m6", "m5"]  # m1 (system) is not in the list


def test_anthropic_block_level_trim() -> None:
    view = _view()

    def drop_text_of_batch(ms: Msgs) -> Msgs:
        out = list(ms)
        out[1] = {"role": "assistant", "content": ms[1]["content"][1:]}
        return out

    def drop_one_tool_use(ms: Msgs) -> Msgs:
        out = list(ms)
        out[1] = {"role": "assistant", "content": ms[1]["content"][:2]}
        return out

    assert list_policy(drop_text_of_batch, "anthropic").select(view, 1) == []
    assert list_policy(drop_one_tool_use, "anthropic").select(view, 1) == ["m3"]


@pytest.mark.parametrize(
    ("fn", "fmt", "words"),
    [
        (
            lambda ms: [*ms, {"role": "user", "content": "extra"}],
            "openai",
            "returned a message that is not in its input at output position 10",
        ),
        (lambda ms: [ms[4], ms[3]], "openai", "reordered messages m4 and m6"),
        (lambda ms: [ms[0], ms[0]], "openai", "returned m1 (input position 0) twice"),
        (
            lambda ms: [*ms[:3], {**ms[3], "tool_call_id": "c9"}, *ms[4:]],
            "openai",
            "returned a message that was not in its input at output position 3",
        ),
        (
            lambda ms: [*ms[:2], {**ms[2], "tool_calls": ms[2]["tool_calls"][:1]}, *ms[3:]],
            "openai",
            "rewrote the message of m3 (call c1, c2, input position 2)",
        ),
        (lambda ms: None, "openai", "returned NoneType"),
        (lambda ms: ["m1"], "openai", "returned a str at position 0"),
        (
            lambda ms: [*ms, {"role": "assistant", "content": [{"type": "text", "text": "x"}]}],
            "anthropic",
            "not in its input at output message 7, block 0",
        ),
        (
            lambda ms: [{"role": "user", "content": [ms[1]["content"][1]]}],
            "anthropic",
            "as a user message",
        ),
    ],
)
def test_bad_results_are_verdicts_naming_what_the_function_did(
    fn: Any, fmt: str, words: str
) -> None:
    with pytest.raises(PolicyError) as info:
        list_policy(fn, fmt, name="bad_trim").select(_view(), 1)
    assert words in info.value.rule
    assert info.value.subject == "policy 'bad_trim'"


def test_mutating_the_input_is_detected() -> None:
    def trim_in_place(ms: Msgs) -> Msgs:
        del ms[1:4]
        return ms

    def edit_in_place(ms: Msgs) -> Msgs:
        ms[3]["content"] = "[trimmed]"
        return ms

    with pytest.raises(PolicyError, match="mutated its input: the list it was given now has 7"):
        list_policy(trim_in_place, "openai").select(_view(), 1)
    with pytest.raises(PolicyError, match=r"changed the message at position 3 \(m4\) in place"):
        list_policy(edit_in_place, "openai").select(_view(), 1)


def test_budget_reaches_functions_that_ask_for_it() -> None:
    view = _view()
    seen: dict[str, Any] = {}

    def plain(ms: Msgs) -> Msgs:
        return ms

    def budgeted(ms: Msgs, max_tokens: int, token_counter: Any) -> Msgs:
        seen["max_tokens"] = max_tokens
        seen["all"] = token_counter(ms)
        seen["one"] = token_counter(dict(ms[3]))
        return ms

    assert list_policy(plain, "openai").select(view, 10) == []
    list_policy(budgeted, "openai").select(view, 10)
    assert seen == {"max_tokens": view.used - 10, "all": view.used, "one": 300}
    list_policy(budgeted, "anthropic").select(view, 10)
    assert seen["all"] == view.used - 100  # the system prompt is not in the list


def test_spec_forms_load_list_functions() -> None:
    policy = load_local(f"{EXAMPLES}/openai_keep_last.py:trim@openai")
    assert isinstance(policy, ListPolicy) and policy.format is Provider.OPENAI
    caged = load_policy(f"{EXAMPLES}/openai_keep_last.py:trim@openai")  # in its worker
    assert isinstance(caged, CagedPolicy) and caged.format is Provider.OPENAI
    assert caged.name == policy.name
    assert policy.name.endswith("openai_keep_last.py:trim@openai")
    with pytest.raises(PolicyError, match="list format 'gemini' is unknown"):
        load_policy(f"{EXAMPLES}/openai_keep_last.py:trim@gemini")


def test_policy_error_in_the_runtime_names_the_step() -> None:
    state = initial_state(
        RuntimeConfig(budget=150, hard_ceiling=10_000),
        list_policy(lambda ms: [*ms, ms[0]], "openai", name="dup"),
    )
    apply(state, SystemPrompt(100))
    with pytest.raises(PolicyError) as info:
        apply(state, UserMessage(100))
    assert info.value.subject == "policy 'dup' at step 2"  # steps count from 1
    assert "twice" in info.value.rule


def test_keep_last_orphans_a_result_and_the_boundary_trimmer_does_not() -> None:
    config = RuntimeConfig(budget=600, hard_ceiling=5_000, provider=Provider.OPENAI)
    events: tuple[Event, ...] = (
        SystemPrompt(50),
        UserMessage(100, "read a"),
        IssueBatch((CallSpec("read_file", "a.txt"), CallSpec("grep", "src")), 40),
        ResultChunk("c1", 150),
        ResultChunk("c2", 150),
        AssistantChunk(60, text="found it"),
        UserMessage(100, "now fix it"),
        Invoke(),
        IssueBatch((CallSpec("write_file", "a.txt"),), 40),
        ResultChunk("c3", 80),
        Invoke(),
    )
    trace = Trace("x", config, events)
    unsafe = load_policy(f"{EXAMPLES}/openai_keep_last.py:trim@openai")
    safe = load_policy(f"{EXAMPLES}/openai_commit_boundary.py:trim@openai")
    kinds = {i.kind for i in incidents_of(trace, ModelSystem(unsafe))}
    assert {IncidentKind.ORPHANED_RESULT, IncidentKind.PROVIDER_REJECTION} <= kinds
    assert not [i for i in incidents_of(trace, ModelSystem(safe)) if i.is_violation]


def test_a_shortened_tool_result_reads_as_a_partial_clear() -> None:
    from prunecheck.model.actions import Clear

    view = _view()
    short = "x" * 40  # 10 tokens left of m4's 300

    def shorten(ms: Msgs) -> Msgs:
        return [*ms[:3], {**ms[3], "content": short}, *ms[4:]]

    assert list_policy(shorten, "openai").select(view, 1) == [Clear("m4", 10)]


def test_a_summary_in_place_of_removed_messages_reads_as_summarize() -> None:
    from prunecheck.model.actions import Summarize

    view = _view()

    def summarize_front(ms: Msgs) -> Msgs:
        return [ms[0], {"role": "user", "content": "y" * 80}, *ms[6:]]

    (group,) = list_policy(summarize_front, "openai").select(view, 1)
    assert isinstance(group, Summarize)
    assert group.message_ids == ("m2", "m3", "m4", "m6", "m5") and group.tokens == 20

"""ListGuard: the commit gate for runtimes that hand over message lists."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from guard_loops import ListLoop, keep_recent

from prunecheck.guard import GuardError, HardCeilingExceeded, ListGuard, SpillStore
from prunecheck.guard.readers import count_tokens, count_words, read_anthropic, read_openai

Msg = dict[str, Any]


def _call(cid: str, path: str) -> Msg:
    return {
        "id": cid,
        "type": "function",
        "function": {"name": "read_file", "arguments": json.dumps({"path": path})},
    }


def _history() -> list[Msg]:
    return [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "w " * 50},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [_call("c1", "a.txt"), _call("c2", "b.txt")],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "a " * 100},
        {"role": "tool", "tool_call_id": "c2", "content": "b " * 100},
        {"role": "user", "content": "next"},
    ]


def words(message: Msg) -> int:
    """These scenarios are sized in words (the default counts 4 characters per token)."""
    return count_words(read_openai(message))


def keep_last(messages: list[Msg]) -> list[Msg]:
    return [m for m in messages if m["role"] == "system"] + [
        m for m in messages if m["role"] != "system"
    ][-2:]


def test_a_cut_unit_is_grown_to_the_whole_unit() -> None:
    history = _history()
    kept = ListGuard(keep_last, format="openai", budget=100, token_counter=words)(history)
    # keep_last keeps c2's result and drops its call: the guard drops the unit whole
    assert [m.get("tool_call_id") or m["role"] for m in kept] == ["system", "user"]
    assert kept[0] is history[0] and kept[1] is history[5]


def test_a_call_without_its_result_in_the_list_is_pending_and_defers() -> None:
    history = _history()[:4]  # c2 has no result yet
    guard = ListGuard(keep_last, format="openai", budget=100, hard_ceiling=300, token_counter=words)
    assert guard(history) == history
    assert guard.last_plan is not None and guard.last_plan.deferred is not None


def test_spilled_units_come_back_before_a_new_call_naming_their_file() -> None:
    store = SpillStore(":memory:")
    guard = ListGuard(
        lambda m: m,
        format="openai",
        budget=100,
        hard_ceiling=200,
        store=store,
        token_counter=words,
    )
    history = [
        *_history()[:5],
        {"role": "user", "content": "more"},
        {"role": "assistant", "content": None, "tool_calls": [_call("c3", "c.txt")]},
    ]
    kept = guard(history)  # 255 > 200 with c3 pending: spill the oldest closed units
    units = [u.unit for u in store.units(guard.conversation)]
    assert units[0].startswith("msg:1:") and units[1:] == ["calls:c1,c2"]
    assert all(m.get("tool_call_id") not in ("c1", "c2") for m in kept)
    guard.hard_ceiling = 1000
    answered = [
        *kept,
        {"role": "tool", "tool_call_id": "c3", "content": "ok"},
        {"role": "assistant", "content": None, "tool_calls": [_call("c4", "a.txt")]},
    ]
    again = guard(answered)
    ids = [
        m.get("tool_call_id") or [c["id"] for c in m.get("tool_calls") or []] or m["role"]
        for m in again
    ]
    assert ids[-4:] == [["c1", "c2"], "c1", "c2", ["c4"]]  # back, before the new call
    assert (
        store.count(guard.conversation) == 2
    )  # leaves the store on the next call, once the caller has it
    guard(again)
    assert [u.unit for u in store.units(guard.conversation)] == units[:1]


def test_past_the_ceiling_the_exception_carries_the_safe_list() -> None:
    history = _history()[:4]
    guard = ListGuard(keep_last, format="openai", budget=50, hard_ceiling=60, token_counter=words)
    with pytest.raises(HardCeilingExceeded) as caught:
        guard(history)
    assert caught.value.messages == history and caught.value.pending == ("c2",)


def test_readers_see_calls_results_and_resources() -> None:
    item = read_openai(_history()[2])
    assert item.calls == ("c1", "c2") and item.resources == {"a.txt", "b.txt"}
    assert read_openai(_history()[3]).answers == ("c1",)
    use = {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a.txt"}}
        ],
    }
    result = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x y"}],
    }
    assert read_anthropic(use).calls == ("t1",) and read_anthropic(use).resources == {"a.txt"}
    assert read_anthropic(result).answers == ("t1",) and read_anthropic(result).role == "tool"


def test_anthropic_lists_are_guarded_too() -> None:
    history: list[Msg] = [
        {"role": "user", "content": "w " * 50},
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a"}},
                {"type": "tool_use", "id": "t2", "name": "read_file", "input": {"path": "b"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "a " * 100},
                {"type": "tool_result", "tool_use_id": "t2", "content": "b " * 100},
            ],
        },
        {"role": "user", "content": "next"},
    ]
    kept = ListGuard(lambda m: m[-2:], format="anthropic", budget=100)(history)
    assert kept == [history[3]]  # the unit went whole, with the text keep-last dropped


# ------------------------------------------------------- across calls and turns
def test_a_unit_spilled_on_a_later_call_keeps_its_resources_and_comes_back() -> None:
    """Once: a unit first shown at one call and spilled at a later one was
    stored without its resources, and never came back."""
    store = SpillStore(":memory:")
    guard = ListGuard(
        lambda m: m, format="openai", budget=100, hard_ceiling=200, store=store, token_counter=words
    )
    history = _history()[:5]
    history = guard(history)  # c1, c2 seen; 252 words > 200 but nothing pending: spilled now?
    history = [*history, {"role": "user", "content": "more " * 90}]
    history = [*history, {"role": "assistant", "content": None, "tool_calls": [_call("c3", "c")]}]
    history = guard(history)
    assert "calls:c1,c2" in guard.spilled
    stored = {u.unit: u.resources for u in store.units(guard.conversation)}
    assert stored["calls:c1,c2"] == {"a.txt", "b.txt"}
    history = [*history, {"role": "tool", "tool_call_id": "c3", "content": "ok"}]
    history = [
        *history,
        {"role": "assistant", "content": None, "tool_calls": [_call("c4", "b.txt")]},
    ]
    guard.hard_ceiling = 10_000
    again = guard(history)
    assert [m.get("tool_call_id") for m in again].count("c1") == 1  # back, exactly once


@pytest.mark.parametrize(
    "turns",  # the acceptance's thousand turns in make test-all; a quarter in make test
    [250, pytest.param(1000, marks=pytest.mark.slow)],
)
def test_a_thousand_turn_loop_with_a_store_and_outputs_over_the_budget(
    tmp_path: Path, turns: int
) -> None:
    """The acceptance loop: a trimmer with no tool awareness, a store file,
    one output in four larger than the budget (5,000 characters: 1,250
    tokens over a 1,000-token budget).  Every step checks that no result is
    orphaned, units stay whole, the store holds each spilled unit, and every
    spilled unit named again comes back before the call naming it.  The
    250-turn run (make test) takes every path the 1,000-turn one does:
    spills, re-injections, and the checks after every step."""
    store = SpillStore(tmp_path / "spill.db", synchronous="NORMAL")
    guard = ListGuard(keep_recent, format="openai", budget=1000, hard_ceiling=2000, store=store)
    loop = ListLoop(guard, "T", seed=11, big=5000, resources=8)
    for _ in range(turns):
        loop.turn()
    assert loop.n == turns
    # one spill in 20 turns, one re-injection in 100 (1,000 turns: over 50 and 10)
    assert loop.figures["spilled"] > turns / 20, loop.figures
    assert loop.figures["reinjected"] > turns / 100, loop.figures
    assert loop.figures["respilled"] == 0


def test_the_list_in_the_caller_s_hands_is_not_re_injected_twice() -> None:
    """A caller that keeps its full history (ignoring what the guard removed)
    names a spilled unit's file: the unit is in its list already."""
    guard = ListGuard(
        lambda m: m,
        format="openai",
        budget=100,
        hard_ceiling=200,
        store=":memory:",
        token_counter=words,
    )
    full = [
        *_history()[:5],
        {"role": "user", "content": "more"},
        {"role": "assistant", "content": None, "tool_calls": [_call("c3", "c.txt")]},
    ]
    guard(full)
    assert "calls:c1,c2" in guard.spilled
    full += [
        {"role": "tool", "tool_call_id": "c3", "content": "ok"},
        {"role": "assistant", "content": None, "tool_calls": [_call("c4", "a.txt")]},
    ]
    guard.hard_ceiling = 10_000
    out = guard(full)
    assert [m.get("tool_call_id") for m in out].count("c1") == 1


# ---------------------------------------------------------------- bad lists
@pytest.mark.parametrize(
    ("format", "message", "rule"),
    [
        ("openai", None, "must be a dict, got None"),
        ("openai", {"role": "tool", "content": "x"}, "no tool_call_id"),
        (
            "openai",
            {"role": "tool", "tool_call_id": None, "content": "x"},
            "not a non-empty string",
        ),
        ("openai", {"role": "assistant", "tool_calls": [{"function": {}}]}, "tool call id None"),
        ("openai", {"role": "assistant", "tool_calls": "c1"}, "not a list"),
        (
            "openai",
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "input": {}}]},
            "Anthropic's format",
        ),
        ("anthropic", {"role": "assistant", "tool_calls": [_call("c1", "a")]}, "OpenAI's format"),
        ("anthropic", {"role": "tool", "tool_call_id": "c1", "content": "x"}, "OpenAI's format"),
        ("anthropic", None, "must be a dict, got None"),
        ("langchain", {"role": "user", "content": "x"}, "LangChain message object, got a dict"),
        ("autogen", None, "AutoGen LLMMessage, got None"),
    ],
)
def test_a_malformed_or_foreign_list_is_refused_naming_the_message(
    format: str, message: object, rule: str
) -> None:
    guard = ListGuard(lambda m: m, format=format, budget=100)
    with pytest.raises(GuardError, match=rule) as caught:
        guard(
            [{"role": "system", "content": "s"}, message]
            if format in ("openai", "anthropic")
            else [message]
        )
    assert "message 1 of the list" in str(caught.value) or "message 0 of the list" in str(
        caught.value
    )


def test_a_bad_token_counter_is_refused() -> None:
    guard = ListGuard(lambda m: m, format="openai", budget=100, token_counter=lambda m: math.nan)
    with pytest.raises(
        GuardError, match=r"message 0 of the list \(token_counter\): tokens must be"
    ):
        guard([{"role": "user", "content": "x"}])


def test_a_trimmer_cannot_change_the_runtime_s_own_messages() -> None:
    def truncate(messages: list[Msg]) -> list[Msg]:
        for m in messages:
            if isinstance(m.get("content"), str):
                m["content"] = m["content"][:5]  # edits what it was given
        return messages

    history = _history()
    snapshot = json.dumps(history)
    guard = ListGuard(truncate, format="openai", budget=100, hard_ceiling=1000, token_counter=words)
    kept = guard(history)  # edited copies match what they were made from: nothing dropped
    assert json.dumps(history) == snapshot  # the runtime's dicts are as they were
    assert len(kept) == len(history) and all(k is h for k, h in zip(kept, history, strict=True))


def test_the_default_counter_counts_four_characters_per_token() -> None:
    """Once: words, so an 8,000-character output counted as 1 token and the
    guard returned a list over budget."""
    output = {"role": "tool", "tool_call_id": "c1", "content": "x" * 8000}
    history = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "read it"},
        {"role": "assistant", "content": None, "tool_calls": [_call("c1", "a.txt")]},
        output,
        {"role": "user", "content": "and now?"},
    ]
    guard = ListGuard(lambda m: m[:2] + m[-1:], format="openai", budget=1000)
    kept = guard(history)
    assert guard.last_plan is not None and guard.last_plan.used < 1000
    assert output not in kept and count_tokens(read_openai(output)) == 2000


def test_a_trimmer_assigned_after_construction_is_the_one_asked() -> None:
    asked: list[str] = []

    def keep_all(messages: list[Msg]) -> list[Msg]:
        asked.append("keep_all")
        return messages

    def keep_last(messages: list[Msg]) -> list[Msg]:
        asked.append("keep_last")
        return messages[-1:]

    guard = ListGuard(keep_all, format="openai", budget=60, hard_ceiling=1_000)
    history = _history()
    assert guard(history) == history  # keep_all drops nothing
    guard.trimmer = keep_last
    assert guard.trimmer is keep_last and guard.format == "openai"
    kept = guard(history)
    assert asked == ["keep_all", "keep_last"]
    assert [m["role"] for m in kept] == ["system", "user"]  # whole units went, not half

"""ListGuard: the commit gate for runtimes that hand over message lists."""

from __future__ import annotations

import json
from typing import Any

import pytest

from prunecheck.guard import HardCeilingExceeded, ListGuard, SpillStore
from prunecheck.guard.readers import read_anthropic, read_openai

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


def keep_last(messages: list[Msg]) -> list[Msg]:
    return [m for m in messages if m["role"] == "system"] + [
        m for m in messages if m["role"] != "system"
    ][-2:]


def test_a_cut_unit_is_grown_to_the_whole_unit() -> None:
    history = _history()
    kept = ListGuard(keep_last, format="openai", budget=100)(history)
    # keep_last keeps c2's result and drops its call: the guard drops the unit whole
    assert [m.get("tool_call_id") or m["role"] for m in kept] == ["system", "user"]
    assert kept[0] is history[0] and kept[1] is history[5]


def test_a_call_without_its_result_in_the_list_is_pending_and_defers() -> None:
    history = _history()[:4]  # c2 has no result yet
    guard = ListGuard(keep_last, format="openai", budget=100, hard_ceiling=300)
    assert guard(history) == history
    assert guard.last_plan is not None and guard.last_plan.deferred is not None


def test_spilled_units_come_back_before_a_new_call_naming_their_file() -> None:
    store = SpillStore(":memory:")
    guard = ListGuard(lambda m: m, format="openai", budget=100, hard_ceiling=200, store=store)
    history = [
        *_history()[:5],
        {"role": "user", "content": "more"},
        {"role": "assistant", "content": None, "tool_calls": [_call("c3", "c.txt")]},
    ]
    kept = guard(history)  # 255 > 200 with c3 pending: spill the oldest closed units
    units = [u.unit for u in store.units()]
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
    assert len(store) == 2  # leaves the store on the next call, once the caller has it
    guard(again)
    assert [u.unit for u in store.units()] == units[:1]


def test_past_the_ceiling_the_exception_carries_the_safe_list() -> None:
    history = _history()[:4]
    guard = ListGuard(keep_last, format="openai", budget=50, hard_ceiling=60)
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

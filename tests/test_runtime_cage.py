"""A user's runtime in its cage (prunecheck.sim.subjects.runtime_cage): the
systems loaded from one ``runtime:`` spec share its worker, so each instance
they make there must be its own."""

from __future__ import annotations

from pathlib import Path

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.events import Invoke, SystemPrompt, UserMessage
from prunecheck.model.provider import Provider
from prunecheck.sim.subjects.loader import load_system

LOOP = Path(__file__).resolve().parent.parent / "examples" / "agent_loop.py"
CONFIG = RuntimeConfig(budget=1000, hard_ceiling=1500, provider=Provider.OPENAI)


def test_two_systems_of_one_runtime_spec_keep_their_own_instances() -> None:
    # A bug found in the suite's speed work: each loaded system numbered its
    # instances from 1 in the shared worker, so the second system's first
    # instance replaced the first's, which then answered with its state.
    spec = f"runtime:{LOOP}:NaiveLoop"
    first, second = load_system(spec), load_system(spec)
    mine = first.initial(CONFIG)
    for event in (SystemPrompt(50), UserMessage(80, "hello"), Invoke()):
        first.apply(mine, event)
    theirs = second.initial(CONFIG)
    second.apply(theirs, SystemPrompt(70))
    for event in (UserMessage(10, "again"), Invoke()):
        first.apply(mine, event)
    # 50, 80 and 10 tokens (as the loop alone sends them), and the other's 70
    assert _shape(first.request(mine).body) == [("system", 102), ("user", 166), ("user", 26)]
    assert _shape(second.request(theirs).body) == [("system", 142)]


def _shape(body: object) -> list[tuple[str, int]]:
    assert isinstance(body, dict)
    return [(m["role"], len(str(m.get("content", "")))) for m in body["messages"]]

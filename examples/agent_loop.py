"""A hand-written asyncio agent loop, tested as real code by prunecheck.

``NaiveLoop`` is the runtime of the domain document: the model's parallel
tool calls run at once (``asyncio.gather``), each result streams chunk by
chunk into its message as the tool produces it, a budget check fires after
*every* append and evicts the lowest-salience messages, a stream whose
message was evicted keeps appending into a new one, and after a provider
400 the retry re-runs the whole batch.  ``GuardedLoop`` is the same loop
with its trimmer wrapped in :class:`prunecheck.guard.CommitGuard`, fed the
loop's events (calls issued, result chunks, results complete, streams).

Both implement prunecheck's ``RuntimeUnderTest`` protocol
(:mod:`prunecheck.runtime`: ``feed``, ``request``, ``executions``), so
prunecheck drives the loop itself::

    prunecheck search runtime:examples/agent_loop.py:NaiveLoop      # exit 1, a reproduction
    prunecheck search runtime:examples/agent_loop.py:GuardedLoop    # exit 0
    python examples/agent_loop.py        # replays the domain document's incident on both

Offline: the "tools" and the "model" are prunecheck's stimuli — the model's
events, each rendered with the harness's ids and text.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from prunecheck.guard import CommitGuard, HardCeilingExceeded, SpillStore
from prunecheck.runtime import Call, Execution, JudgedSystem, Rejected, Stimulus, count_tokens

Message = dict[str, Any]

_WEIGHT = {"user": 1.5, "assistant": 1.0, "tool": 1.2}


def lowest_salience(messages: list[Message], max_tokens: int) -> list[Message]:
    """The salience trimmer: drop the lowest-salience messages (old or short)
    until the list fits ``max_tokens``.  Blind to tool structure."""
    n = len(messages)
    used = sum(count_tokens(m.get("content") or "") for m in messages)

    def salience(i: int) -> float:
        m = messages[i]
        if m["role"] == "system":
            return math.inf
        size = count_tokens(m.get("content") or "")
        return _WEIGHT[m["role"]] * size / (size + 200) * math.exp(-(n - 1 - i) / 20)

    dropped: set[int] = set()
    for i in sorted(range(n), key=salience):
        if used <= max_tokens or messages[i]["role"] == "system":
            break
        dropped.add(i)
        used -= count_tokens(messages[i].get("content") or "")
    return [m for i, m in enumerate(messages) if i not in dropped]


class AgentLoop:
    """The loop.  ``guard`` None: prune with the trimmer directly (naive)."""

    def __init__(self, budget: int, hard_ceiling: int, guard: CommitGuard | None) -> None:
        self.budget = budget
        self.hard_ceiling = hard_ceiling
        self.guard = guard
        self.messages: list[Message] = []
        self.ids: dict[int, str] = {}  # id(message) -> its id
        self.open: dict[str, Message] = {}  # stream (call or message id) -> message
        self.batches: dict[str, tuple[Call, ...]] = {}
        self.executed: list[Execution] = []
        self.rejected: tuple[str, ...] = ()

    # ------------------------------------------------------------ protocol
    def feed(self, stimulus: Stimulus | Rejected) -> None:
        if isinstance(stimulus, Rejected):  # the provider's 400 to the last request
            self.rejected = stimulus.calls
            return
        asyncio.run(self.handle(stimulus))

    def request(self) -> Sequence[Mapping[str, Any]]:
        return self.messages

    def executions(self) -> Sequence[Execution]:
        return self.executed

    def costs(self) -> Mapping[str, int]:
        stats = self.guard.stats if self.guard is not None else None
        return (
            {}
            if stats is None
            else {
                "deferral": stats.deferred,
                "spill": stats.spills,
                "reinjection": stats.reinjections,
            }
        )

    # ---------------------------------------------------------------- loop
    async def handle(self, st: Stimulus) -> None:
        kind = st.kind  # the model event's kind
        if kind in ("system", "user"):
            message = self.append(st.id, {"role": kind, "content": st.text})
            if self.guard is not None:
                self.guard.message(st.id, kind, count_tokens(st.text), message)
            self.budget_check()
        elif kind == "assistant":
            self.stream_text(st)
        elif kind == "batch":
            await self.tool_calls(st)
        elif kind == "result":
            await self.result_chunk(st)
        elif kind == "failure":
            await self.tool_failed(st)
        elif kind == "retry":
            await self.retry()
        elif kind == "check":
            self.budget_check()
        elif kind == "session":  # a fresh session: an empty context
            self.messages, self.open, self.rejected = [], {}, ()
            if self.guard is not None:
                self.guard = CommitGuard(
                    self.guard.trimmer,
                    budget=self.budget,
                    hard_ceiling=self.hard_ceiling,
                    store=SpillStore(":memory:"),
                )

    async def tool_calls(self, st: Stimulus) -> None:
        message = {
            "role": "assistant",
            "content": st.text,
            "tool_calls": [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.tool, "arguments": json.dumps(dict(c.arguments))},
                }
                for c in st.calls
            ],
        }
        if self.guard is not None:
            paths = [c.arguments["path"] for c in st.calls if c.arguments.get("path")]
            for unit in self.guard.calls(
                st.id, [c.id for c in st.calls], count_tokens(st.text), message, resources=paths
            ):
                for mid, payload in zip(unit.ids, unit.payloads, strict=True):
                    self.append(mid, dict(payload))  # type: ignore[call-overload]
        self.append(st.id, message)
        self.batches[st.id] = st.calls
        await asyncio.gather(*(self.run_tool(c) for c in st.calls))  # parallel tool calls
        self.budget_check()

    async def run_tool(self, call: Call) -> None:
        """Start a tool (its output arrives later, chunk by chunk)."""
        await asyncio.sleep(0)
        self.executed.append(
            Execution(call.id, call.tool, call.arguments.get("path", ""), call.effect)
        )

    async def result_chunk(self, chunk: Stimulus) -> None:
        """Stream a result into its message, checking the budget after each append."""
        call = chunk.id
        message = self.open.get(call)
        tokens = count_tokens(chunk.text)
        if message is None or not self.present(message):
            # first chunk, or its message was evicted: the stream goes on in a new one
            message = self.answer(
                call, {"role": "tool", "tool_call_id": call, "content": chunk.text}
            )
            self.open[call] = message
            if self.guard is not None:
                self.guard.result_chunk(call, tokens, f"result:{call}", message)
        else:
            message["content"] += " " + chunk.text
            if self.guard is not None:
                self.guard.result_chunk(call, tokens)
        if chunk.last:
            del self.open[call]
            if self.guard is not None:
                self.guard.result_complete(call)
        self.budget_check()

    async def tool_failed(self, st: Stimulus) -> None:
        call = st.id
        partial = self.open.pop(call, None)
        if partial is not None and self.present(partial):
            self.remove([f"result:{call}"])
            if self.guard is not None:
                self.guard.removed([f"result:{call}"])
        message = self.answer(call, {"role": "tool", "tool_call_id": call, "content": st.text})
        if self.guard is not None:
            self.guard.result_complete(call, count_tokens(st.text), f"result:{call}", message)
        self.budget_check()

    def stream_text(self, st: Stimulus) -> None:
        message = self.open.get(st.id)
        tokens = count_tokens(st.text)
        if message is None or not self.present(message):
            message = self.append(
                st.id if message is None else st.id + "+", {"role": "assistant", "content": st.text}
            )
            self.open[st.id] = message
            if self.guard is not None:
                self.guard.stream_opened(st.id, "assistant", tokens, message)
        else:
            message["content"] += " " + st.text
            if self.guard is not None:
                self.guard.stream_chunk(st.id, tokens)
        if st.last:
            del self.open[st.id]
            if self.guard is not None:
                self.guard.stream_closed(st.id)
        self.budget_check()

    async def retry(self) -> None:
        """The naive retry: unaware of the cause, re-run the entire batch."""
        named = set(self.rejected)
        for calls in self.batches.values():
            if named & {c.id for c in calls}:
                await asyncio.gather(*(self.run_tool(c) for c in calls))
        self.rejected = ()

    # -------------------------------------------------------------- budget
    def budget_check(self) -> None:
        if self.guard is None:
            used = sum(count_tokens(m.get("content") or "") for m in self.messages)
            if used > self.budget:
                kept = {id(m) for m in lowest_salience(self.messages, self.budget)}
                self.remove([self.ids[id(m)] for m in self.messages if id(m) not in kept])
            return
        try:
            plan = self.guard.check()
        except HardCeilingExceeded as exc:  # fail loudly: the next invocation waits
            plan = exc.plan
        self.remove(plan.remove)

    # ------------------------------------------------------------- helpers
    def append(self, mid: str, message: Message) -> Message:
        self.messages.append(message)
        self.ids[id(message)] = mid
        return message

    def answer(self, call: str, message: Message) -> Message:
        """A result goes right after its call message and earlier results."""
        self.ids[id(message)] = f"result:{call}"
        at = None
        for i, m in enumerate(self.messages):
            calls = [c["id"] for c in m.get("tool_calls", [])]
            follows = (
                at is not None and m["role"] == "tool" and m["tool_call_id"] in self.sibling(call)
            )
            if call in calls or follows:
                at = i
        if at is None:
            self.messages.append(message)
        else:
            self.messages.insert(at + 1, message)
        return message

    def sibling(self, call: str) -> set[str]:
        for calls in self.batches.values():
            ids = {c.id for c in calls}
            if call in ids:
                return ids
        return set()

    def present(self, message: Message) -> bool:
        return any(m is message for m in self.messages)

    def remove(self, ids: Sequence[str]) -> None:
        gone = set(ids)
        self.messages = [m for m in self.messages if self.ids.get(id(m)) not in gone]


class NaiveLoop(AgentLoop):
    """The loop as the domain document's runtime had it."""

    def __init__(self, budget: int = 32_000, hard_ceiling: int = 40_000) -> None:
        super().__init__(budget, hard_ceiling, None)


class GuardedLoop(AgentLoop):
    """The same loop, its trimmer behind the commit gate (spilling to SQLite)."""

    def __init__(
        self, budget: int = 32_000, hard_ceiling: int = 40_000, store: str = ":memory:"
    ) -> None:
        guard = CommitGuard(
            lowest_salience,
            format="openai",
            budget=budget,
            hard_ceiling=hard_ceiling,
            store=SpillStore(store),
        )
        super().__init__(budget, hard_ceiling, guard)


def judged(name: str, loop: Callable[[int, int], AgentLoop]) -> JudgedSystem:
    """The loop as a System the drivers drive (``runtime:FILE.py:CLASS`` does the same)."""
    return JudgedSystem(
        f"runtime:{__file__}:{name}", lambda config: loop(config.budget, config.hard_ceiling)
    )


def main() -> None:
    from pathlib import Path

    from prunecheck.model.system import incidents_of
    from prunecheck.model.trace import loads

    corpus = Path(__file__).resolve().parent.parent / "tests" / "corpus"
    trace = loads((corpus / "seed_parallel_batch.json").read_text())
    for name, loop in (("NaiveLoop", NaiveLoop), ("GuardedLoop", GuardedLoop)):
        found = [i for i in incidents_of(trace, judged(name, loop)) if i.is_violation]
        kinds = sorted({i.kind.label for i in found})
        print(
            f"{name}: {len(found)} violation(s) on the domain document's parallel batch"
            + (f" ({', '.join(kinds)})" if kinds else "")
        )


if __name__ == "__main__":
    main()

"""A tiny in-repo agent "framework" and its adapter, to test the loop harness
without any framework installed.

:class:`FakeAgent` is a minimal asyncio agent loop in the manner of the real
ones: it sends the history to the model, runs a reply's calls in parallel,
appends their results, and persists its history to a JSON file in the
harness's store.  Its knobs put the bugs real loops have:

* ``persist="eager"`` writes the assistant's calls before their results
  (a crash then leaves calls without results on disk), ``"commit"`` writes
  only whole turns' units (after every result);
* ``cancel="drop"`` forgets the batch on a cancel, although its tools ran
  (silent loss); ``"record"`` keeps finished results and writes honest
  "cancelled" placeholders;
* ``repair=True`` answers calls found without results after a crash with
  an invented ``"ok"`` result (synthesized);
* ``resume="rerun"`` runs the saved calls without results again;
* ``keep_last`` trims to the last N messages at the framework's hook,
  whole units or not (``trim_units``); ``keep_first`` keeps the first
  message too (the trim then removes from the middle);
* ``guard_budget`` puts that trim behind prunecheck's ``ListGuard`` (list
  mode, OpenAI messages) with this budget: only whole, closed units go;
* ``tool_timeout`` gives up on a tool call after that many (virtual)
  seconds, with ``asyncio.wait_for``: a timer the clock's jumps fire;
* ``release="drops_on_cancel"`` is a release of the fake framework whose
  loop forgets a cancelled batch whatever the agent's ``cancel`` says: a
  framework bug every configuration shares; ``release="raises_on_fail"``
  lets a failed tool raise out of the turn, leaving its batch's calls
  without results in the history (the next request is rejected), as
  LangGraph's ``ToolNode`` does without error handling.

The fake framework's plain agent (:meth:`FakeAdapter.without_trimming`) is
its default agent with the same tools, tool timeout and release: every knob
above is the user's configuration, the release is the framework's.
* ``keep_chars`` / ``keep_tokens`` trim to the newest messages within that
  many characters / tokens (the fake's counter: 4 characters a token),
  whole units or not (``trim_units``); ``states_budget`` lets the adapter
  read that budget (as from a framework's own trimmer), else it is unknown.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prunecheck.sim.subjects.loops.contract import (
    Capability,
    Harness,
    ToolCall,
    ToolFailed,
    ToolSpec,
)
from prunecheck.sim.subjects.loops.reach import Budget

__all__ = ["FakeAdapter", "FakeAgent", "buggy", "careful"]

_TOOLS = (
    ToolSpec("read_file", "Read a file.", {"type": "object", "properties": {
        "path": {"type": "string"}}, "required": ["path"]}),
    ToolSpec("write_file", "Write a file.", {"type": "object", "properties": {
        "path": {"type": "string"}, "text": {"type": "string"}}, "required": ["path", "text"]}),
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class FakeAgent:
    """A configured agent of the fake framework (see the module's docs)."""

    persist: str = "commit"
    cancel: str = "record"
    repair: bool = False
    resume: str = "placeholder"
    keep_last: int | None = None
    trim_units: bool = True
    keep_first: bool = False
    guard_budget: int | None = None
    tools: tuple[ToolSpec, ...] = field(default=_TOOLS)
    tool_timeout: float | None = None
    release: str = "fixed"
    keep_chars: int | None = None
    keep_tokens: int | None = None
    states_budget: bool = False

    @property
    def trims(self) -> bool:
        return (
            self.keep_last is not None
            or self.keep_chars is not None
            or (self.keep_tokens is not None)
        )


def _size(message: dict[str, Any]) -> int:
    return len(str(message.get("content") or ""))


class _FakeLoop:
    def __init__(self, agent: FakeAgent, harness: Harness) -> None:
        self.agent, self.harness = agent, harness
        self.file: Path = harness.store / "fake-history.json"
        self.guard: Any = None
        if agent.guard_budget is not None:
            from prunecheck.guard import ListGuard

            self.guard = ListGuard(self._trim, format="openai", budget=agent.guard_budget)
        self.messages: list[dict[str, Any]] = (
            json.loads(self.file.read_text()) if self.file.exists() else []
        )

    # persistence ----------------------------------------------------------
    def _save(self, messages: list[dict[str, Any]]) -> None:
        self.file.write_text(json.dumps(messages))

    def _committed(self) -> list[dict[str, Any]]:
        """The history without a trailing batch whose results are not all in."""
        out = list(self.messages)
        for i in range(len(out) - 1, -1, -1):
            calls = out[i].get("tool_calls")
            if calls:
                ids = {c["id"] for c in calls}
                have = {m.get("tool_call_id") for m in out[i + 1 :]}
                if not ids <= have:
                    return out[:i]
                break
        return out

    def _persist(self) -> None:
        self._save(self.messages if self.agent.persist == "eager" else self._committed())

    # the loop -------------------------------------------------------------
    def _budget_cut(self, messages: list[dict[str, Any]]) -> int:
        """The first message kept within ``keep_chars`` / ``keep_tokens``."""
        chars, tokens = self.agent.keep_chars, self.agent.keep_tokens
        used, cut = 0, len(messages)
        while cut > 0:
            size = _size(messages[cut - 1])
            used += size if chars is not None else size // 4
            if used > (chars if chars is not None else tokens or 0):
                break
            cut -= 1
        return cut

    def _trim(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        n = self.agent.keep_last
        if self.agent.keep_chars is not None or self.agent.keep_tokens is not None:
            cut = self._budget_cut(messages)
            if cut == 0:
                return messages
        elif n is None or len(messages) <= n:
            return messages
        else:
            cut = len(messages) - n
        if self.agent.trim_units:  # keep the call the first kept result answers
            while 0 < cut < len(messages) and messages[cut]["role"] == "tool":
                cut -= 1
        first = messages[:1] if self.agent.keep_first and cut > 0 else []
        return first + messages[cut:]

    def _request(self) -> dict[str, object]:
        messages = (
            self.guard(self.messages) if self.guard is not None else self._trim(self.messages)
        )
        tools = [{"type": "function", "function": {"name": t.name, "description": t.description,
                  "parameters": dict(t.parameters)}} for t in self.agent.tools]  # fmt: skip
        return {"messages": [dict(m) for m in messages], "tools": tools}

    async def _run(self) -> None:
        while True:
            reply = await self.harness.model(self._request())
            calls = [{"id": c.id, "type": "function",
                      "function": {"name": c.name, "arguments": c.arguments}}
                     for c in reply.calls]  # fmt: skip
            message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
            if calls:
                message["tool_calls"] = calls
            self.messages.append(message)
            self._persist()
            if not reply.calls:
                return
            await self._batch(list(reply.calls))

    async def _batch(self, calls: list[ToolCall]) -> None:
        tasks = [asyncio.ensure_future(self._one(c)) for c in calls]
        try:
            results = await asyncio.gather(*tasks)
        except asyncio.CancelledError:
            for t in tasks:
                t.cancel()
            if self.agent.cancel == "drop" or self.agent.release == "drops_on_cancel":
                self.messages.pop()  # the batch, and what its tools did, forgotten
            else:
                for c, t in zip(calls, tasks, strict=True):
                    done = t.done() and not t.cancelled() and t.exception() is None
                    text = t.result() if done else "cancelled before it finished"
                    self.messages.append({"role": "tool", "tool_call_id": c.id, "content": text})
            self._persist()
            raise
        for c, text in zip(calls, results, strict=True):
            self.messages.append({"role": "tool", "tool_call_id": c.id, "content": text})
        self._persist()

    async def _one(self, call: ToolCall) -> str:
        try:
            if self.agent.tool_timeout is not None:
                return await asyncio.wait_for(self.harness.tool(call), self.agent.tool_timeout)
            return await self.harness.tool(call)
        except ToolFailed as exc:
            if self.agent.release == "raises_on_fail":
                raise  # the turn raises: the batch's calls stay without results
            return f"error: {exc}"
        except TimeoutError:
            return "error: timed out"

    def _unanswered(self) -> list[ToolCall]:
        for i in range(len(self.messages) - 1, -1, -1):
            calls = self.messages[i].get("tool_calls")
            if calls:
                have = {m.get("tool_call_id") for m in self.messages[i + 1 :]}
                return [ToolCall(c["id"], c["function"]["name"], c["function"]["arguments"])
                        for c in calls if c["id"] not in have]  # fmt: skip
        return []

    def _patch(self) -> None:
        for c in self._unanswered():
            text = "ok" if self.agent.repair else "interrupted: the process stopped"
            self.messages.append({"role": "tool", "tool_call_id": c.id, "content": text})

    # the contract ---------------------------------------------------------
    async def send(self, text: str) -> None:
        if self.agent.repair or self.agent.persist == "commit":
            self._patch()
        self.messages.append({"role": "user", "content": text})
        self._persist()
        await self._run()

    async def cancel(self, turn: asyncio.Task[None]) -> None:
        turn.cancel()

    async def resume(self) -> None:
        missing = self._unanswered()
        if self.agent.resume == "rerun" and missing:
            await self._batch(missing)
        else:
            self._patch()
        if self.messages and self.messages[-1]["role"] != "assistant":
            await self._run()

    async def approve(self, call_id: str, approved: bool) -> None:
        raise NotImplementedError("the fake framework has no approvals")

    def history(self) -> list[dict[str, object]]:
        return [dict(m) for m in self.messages]

    def abandon(self) -> None:
        return None


class FakeAdapter:
    """The adapter of the fake framework."""

    framework = "fake"

    def accepts(self, target: object) -> bool:
        return isinstance(target, FakeAgent)

    def capabilities(self, target: object) -> frozenset[Capability]:
        assert isinstance(target, FakeAgent)
        caps = {Capability.CANCEL, Capability.CRASH_RESUME, Capability.CRASH_NEW_MESSAGE}
        if target.trims:
            caps.add(Capability.TRIM_HOOK)
        if target.tool_timeout is not None:
            caps.add(Capability.TOOL_TIMEOUT)
        return frozenset(caps)

    def tools(self, target: object) -> list[ToolSpec]:
        assert isinstance(target, FakeAgent)
        return list(target.tools)

    #: The fake framework's own token counter (4 characters of content a token).
    token_counter = "the fake framework's counter"

    def count_tokens(self, messages: list[dict[str, Any]]) -> int:
        return sum(_size(m) // 4 for m in messages)

    def budget(self, target: object) -> Budget | None:
        assert isinstance(target, FakeAgent)
        if not target.states_budget:
            return None
        if target.keep_chars is not None:
            return Budget(target.keep_chars, "characters", f"keep_chars={target.keep_chars}")
        if target.keep_tokens is not None:
            return Budget(target.keep_tokens, "tokens", f"keep_tokens={target.keep_tokens}")
        return None

    def open(self, target: object, harness: Harness) -> _FakeLoop:
        assert isinstance(target, FakeAgent)
        return _FakeLoop(target, harness)

    def script(self, target_spec: str, schedule_json: str, *, folder: Path | None = None) -> str:
        return _SCRIPT.format(schedule=json.dumps(json.loads(schedule_json)["steps"]))

    def without_trimming(self) -> FakeAdapter:
        """The adapter of the fake framework's plain agent: each agent opened
        as the framework's default with the same tools, timeout and release."""
        return _PlainFakeAdapter()


class _PlainFakeAdapter(FakeAdapter):
    def _plain(self, target: object) -> FakeAgent:
        assert isinstance(target, FakeAgent)
        return FakeAgent(tools=target.tools, tool_timeout=target.tool_timeout,
                         release=target.release)  # fmt: skip

    def capabilities(self, target: object) -> frozenset[Capability]:
        return super().capabilities(self._plain(target))

    def open(self, target: object, harness: Harness) -> _FakeLoop:
        return super().open(self._plain(target), harness)


def options(**kwargs: Mapping[str, Any]) -> FakeAgent:
    return FakeAgent(**kwargs)  # type: ignore[arg-type]


#: The deliberately buggy configuration, and the careful one.
buggy = FakeAgent(persist="eager", cancel="drop", repair=False, resume="rerun")
careful = FakeAgent()
prunecheck_loop_adapter = FakeAdapter()

_SCRIPT = '''"""Replays a schedule against the fake framework (a test double: no real framework)."""
import json
STEPS = json.loads({schedule!r})
print(len(STEPS), "steps")
'''

#: Trimming at the fake framework's hook: to the last 3 messages, cutting
#: through units (buggy) or only at a unit's edge (careful).
trimming_buggy = FakeAgent(keep_last=3, trim_units=False)
trimming_careful = FakeAgent(keep_last=3)
#: A trim that keeps the first message and the last 3, behind ListGuard
#: (budget 60 tokens): whole, closed units go from the middle.
guarded_middle = FakeAgent(keep_last=3, keep_first=True, trim_units=False, guard_budget=60)
#: A cancel that forgets the batch (its tools ran), in a configuration that trims.
trimming_dropping = FakeAgent(cancel="drop", keep_last=1)
#: A repair layer that answers calls left without results by "ok".
repairing = FakeAgent(persist="eager", repair=True)
#: Tool calls that time out after a minute of the virtual clock.
timing = FakeAgent(tool_timeout=60.0)
#: A careful agent, trimming whole units, on a release that drops a cancelled
#: batch: its cancel findings are the framework's.
on_flawed_release = FakeAgent(keep_last=3, release="drops_on_cancel")
#: A trim that never fires in a schedule (50 messages) on a release whose failed
#: tool raises out of the turn: the trimming class has no finding of its own (the
#: failed tool's is the framework's).
idle_on_raising_release = FakeAgent(keep_last=50, release="raises_on_fail")
#: The same release, trimming through units: the trim's findings are the configuration's.
trimming_on_flawed_release = FakeAgent(keep_last=3, trim_units=False, release="drops_on_cancel")
#: Budget trimmers far above the default tool output (~45 characters), blind
#: to units: 20,000 characters, 8,000 tokens; and one that never fires.
char_budget = FakeAgent(keep_chars=20_000, trim_units=False)
token_budget = FakeAgent(keep_tokens=8_000, trim_units=False)
never_fires = FakeAgent(keep_chars=10**9, trim_units=False)
never_fires_stated = FakeAgent(keep_chars=10**9, trim_units=False, states_budget=True)

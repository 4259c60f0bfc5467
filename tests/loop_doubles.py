"""A tiny deterministic harness for the framework adapters' tests.

It implements :class:`prunecheck.sim.loops.contract.Harness` with futures
the test resolves step by step (``reply``, ``complete``, ``fail`` …) and
waits for quiescence (no ready callback on the event loop) after each step,
so the framework's own loop runs as far as it can and then waits on the
harness.  The core's scheduler (``sim/loops``) is the real one; this one is
small enough to read in a test failure.  No sleeps, no clock, no threads.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from prunecheck import validate_request
from prunecheck.sim.loops.contract import Adapter, Loop, Reply, ToolCall, ToolFailed

__all__ = ["Drive", "TinyHarness", "call", "errors", "roles", "settle"]


async def settle() -> None:
    """Run the event loop until nothing but the harness's futures is left to wait on."""
    loop = asyncio.get_running_loop()
    idle = 0
    while idle < 3:
        await asyncio.sleep(0)
        idle = idle + 1 if not loop._ready else 0  # type: ignore[attr-defined]


def call(n: int, name: str = "search", **args: object) -> ToolCall:
    """The ``n``-th call the model double issues (``call_n``)."""
    return ToolCall(f"call_{n}", name, json.dumps(args or {"query": f"q{n}"}))


def errors(request: Mapping[str, object]) -> list[str]:
    """The OpenAI errors a provider would answer ``request`` with."""
    return [e.text for e in validate_request(dict(request), "openai")]


def roles(request: Mapping[str, object]) -> list[str]:
    """A compact picture of a request: ``user``, ``assistant[call_1,call_2]``, ``tool:call_1``."""
    out = []
    messages = request["messages"]
    assert isinstance(messages, list)
    for m in messages:
        if m.get("tool_calls"):
            out.append("assistant[" + ",".join(c["id"] for c in m["tool_calls"]) + "]")
        elif m["role"] == "tool":
            out.append(f"tool:{m['tool_call_id']}")
        else:
            out.append(str(m["role"]))
    return out


class TinyHarness:
    """The harness side: records requests and tool bodies, answers when told."""

    def __init__(self, store: Path) -> None:
        self.store = store
        self.requests: list[dict[str, Any]] = []
        self.started: list[str] = []
        self.finished: list[str] = []
        self.cancelled: list[str] = []
        self.approvals: list[str] = []
        self._models: list[asyncio.Future[Reply]] = []
        self._tools: dict[str, asyncio.Future[str]] = {}

    async def model(self, request: Mapping[str, object]) -> Reply:
        self.requests.append(json.loads(json.dumps(request)))
        future: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
        self._models.append(future)
        try:
            return await future
        finally:
            if future in self._models:
                self._models.remove(future)

    async def tool(self, call: ToolCall) -> str:
        self.started.append(call.id)
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._tools[call.id] = future
        try:
            out = await future
        except asyncio.CancelledError:
            self.cancelled.append(call.id)
            raise
        finally:
            if self._tools.get(call.id) is future:
                del self._tools[call.id]
        self.finished.append(call.id)
        return out

    def now(self) -> float:
        return 0.0

    def awaiting_approval(self, call_id: str) -> None:
        self.approvals.append(call_id)

    @property
    def pending_models(self) -> int:
        return len(self._models)

    @property
    def running_tools(self) -> list[str]:
        return sorted(self._tools)

    def forget(self) -> None:
        """A crash: whatever waited on the harness waits forever."""
        self._models = []
        self._tools = {}


class Drive:
    """One schedule being applied to one adapter's loop."""

    def __init__(self, adapter: Adapter, target: object, store: Path) -> None:
        self.adapter = adapter
        self.target = target
        self.harness = TinyHarness(store)
        self.loop: Loop = adapter.open(target, self.harness)
        self.turn: asyncio.Task[None] | None = None
        self.dropped: list[asyncio.Task[None]] = []

    @staticmethod
    def harness_for(store: Path) -> TinyHarness:
        """A harness alone (for an adapter's ``open`` outside a drive)."""
        return TinyHarness(store)

    async def _start(self, coro: Any) -> None:
        self.turn = asyncio.ensure_future(coro)
        await settle()

    async def user(self, text: str) -> None:
        await self._start(self.loop.send(text))

    async def reply(
        self, text: str = "", calls: tuple[ToolCall, ...] = (), chunks: int = 1
    ) -> None:
        future = self.harness._models[0]
        future.set_result(Reply(text=text, calls=calls, chunks=chunks))
        await settle()

    async def complete(self, call_id: str, output: str = "ok") -> None:
        self.harness._tools[call_id].set_result(output)
        await settle()

    async def fail(self, call_id: str, error: str = "tool failed") -> None:
        self.harness._tools[call_id].set_exception(ToolFailed(error))
        await settle()

    async def timeout(self, call_id: str) -> None:
        self.harness._tools[call_id].set_exception(TimeoutError())
        await settle()

    async def cancel(self) -> None:
        assert self.turn is not None
        await self.loop.cancel(self.turn)
        await settle()

    async def crash(self) -> None:
        """Drop the loop and its task without running any of its code; reopen on the store."""
        self.loop.abandon()
        if self.turn is not None:
            self.dropped.append(self.turn)
        self.turn = None
        self.harness.forget()
        self.loop = self.adapter.open(self.target, self.harness)

    async def resume(self) -> None:
        await self._start(self.loop.resume())

    async def approve(self, call_id: str, approved: bool = True) -> None:
        await self._start(self.loop.approve(call_id, approved))

    @property
    def done(self) -> bool:
        return self.turn is not None and self.turn.done()

    def outcome(self) -> str:
        """``returned``, ``cancelled``, ``raised <Type>`` or ``running``."""
        if self.turn is None or not self.turn.done():
            return "running"
        if self.turn.cancelled():
            return "cancelled"
        exc = self.turn.exception()
        return "returned" if exc is None else f"raised {type(exc).__name__}"

    @property
    def last(self) -> dict[str, Any]:
        return self.harness.requests[-1]

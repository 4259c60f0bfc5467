"""Loop adapters that misbehave, for the bad-input suite: one spins without
ever waiting on the harness, one cannot open its agent."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from prunecheck.sim.subjects.loops.contract import Capability, Harness, ToolSpec


class _Spinner:
    async def send(self, text: str) -> None:
        while True:
            await asyncio.sleep(0)

    async def cancel(self, turn: asyncio.Task[None]) -> None:
        turn.cancel()

    async def resume(self) -> None:
        return None

    async def approve(self, call_id: str, approved: bool) -> None:
        return None

    def history(self) -> list[dict[str, object]]:
        return []

    def abandon(self) -> None:
        return None


class BadAdapter:
    framework = "bad"

    def accepts(self, target: object) -> bool:
        return target in ("spins", "cannot open")

    def capabilities(self, target: object) -> frozenset[Capability]:
        return frozenset()

    def tools(self, target: object) -> list[ToolSpec]:
        return [ToolSpec("t", "", {"type": "object"})]

    def open(self, target: object, harness: Harness) -> Any:
        if target == "cannot open":
            raise RuntimeError("no API key")
        return _Spinner()

    def script(self, target_spec: str, schedule_json: str, *, folder: Path | None = None) -> str:
        return ""


spins = "spins"
cannot_open = "cannot open"
not_an_agent = 42
prunecheck_loop_adapter = BadAdapter()

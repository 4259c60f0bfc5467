"""The tool bodies the MCP tool server runs: each does what its plan says.

:class:`ToolBodies` runs one call of a planned tool (:mod:`.tool_plan`):
it records the start, waits the chosen latency, then returns the output
(of the chosen size), fails, reports a timeout, or hangs until cancelled,
and records the end (``cancelled`` when the client cancelled it or hung
up).  The record file is the ledger of tool bodies that really ran; run
numbers go on from the records already in it, so a server restarted with
the agent counts on where the killed one stopped.  When the plan came from
a file, the file is read again whenever it changed, so the harness can
change what the next runs do while the server runs.

No MCP here: :mod:`.mcp_server` puts these bodies behind the protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .tool_plan import (
    OutcomeKind,
    RunRecord,
    ServerPlan,
    append_record,
    filler,
    load_plan,
    read_records,
)

__all__ = ["ToolBodies", "ToolResult"]


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What one run answers: its text and whether it is an error result."""

    text: str
    is_error: bool = False


class ToolBodies:
    """Runs planned tool bodies and records each run.

    Parameters
    ----------
    plan :
        The tools and their outcomes.
    plan_file :
        Where the plan came from, read again when it changes (None: fixed).
    """

    def __init__(self, plan: ServerPlan, plan_file: Path | None = None) -> None:
        self.plan = plan
        self.plan_file = plan_file
        self.records: list[RunRecord] = []
        self._stamp = self._mtime()
        earlier = read_records(plan.record) if plan.record else []
        starts = [r for r in earlier if r.event == "start"]
        self._next_run = 1 + max((r.run for r in starts), default=-1)
        self._runs_of: dict[str, int] = {}
        for r in starts:
            self._runs_of[r.tool] = self._runs_of.get(r.tool, 0) + 1

    def _mtime(self) -> int | None:
        if self.plan_file is None:
            return None
        with contextlib.suppress(OSError):
            return self.plan_file.stat().st_mtime_ns
        return None

    def current_plan(self) -> ServerPlan:
        """The plan now (re-read from its file if that changed)."""
        stamp = self._mtime()
        if self.plan_file is not None and stamp != self._stamp:
            self.plan = load_plan(self.plan_file)
            self._stamp = stamp
        return self.plan

    def _record(self, record: RunRecord) -> None:
        self.records.append(record)
        if self.plan.record is not None:
            append_record(self.plan.record, record)

    async def run(self, name: str, arguments: Mapping[str, object]) -> ToolResult:
        """One run of tool ``name``: its planned outcome, recorded.

        Raises
        ------
        asyncio.CancelledError
            When the client cancels the run (recorded as ``cancelled``).
        """
        plan = self.current_plan()
        tool = plan.tool(name)
        if tool is None:
            known = ", ".join(t.name for t in plan.tools)
            return ToolResult(f"Unknown tool: {name} (this server has {known})", True)
        run, nth = self._next_run, self._runs_of.get(name, 0)
        self._next_run += 1
        self._runs_of[name] = nth + 1
        outcome = tool.outcome(nth)
        self._record(RunRecord(run, "start", name, dict(arguments)))
        try:
            if outcome.kind is OutcomeKind.HANG:
                await asyncio.Event().wait()  # until cancelled
            await asyncio.sleep(outcome.latency)
        except asyncio.CancelledError:
            self._record(RunRecord(run, "end", name, outcome="cancelled"))
            raise
        if outcome.kind is OutcomeKind.OK:
            if outcome.text is not None:
                text = outcome.text
            elif outcome.size is not None:
                text = filler(plan.seed, name, nth, outcome.size)
            else:
                text = f"{name} ran (run {nth})"
            result = ToolResult(text)
        elif outcome.kind is OutcomeKind.FAIL:
            result = ToolResult(outcome.text or f"{name} failed (run {nth})", True)
        else:
            result = ToolResult(
                outcome.text or f"{name} timed out after {outcome.latency:g} s", True
            )
        self._record(
            RunRecord(run, "end", name, outcome=outcome.kind.value, output_chars=len(result.text))
        )
        return result

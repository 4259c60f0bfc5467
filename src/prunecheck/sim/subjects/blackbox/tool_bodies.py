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

With a **hook** (the URL of the loop harness's tool hook,
:mod:`.tool_hook`), the plan's outcomes are not used: each body posts its
call to the hook and returns what the harness answers, when it answers, so
the harness decides every body step by step and its ledger holds each one.
A body the client cancels closes its connection to the hook, which the
harness sees as the body cancelled.

No MCP here: :mod:`.mcp_server` puts these bodies behind the protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from .tool_plan import (
    OutcomeKind,
    RunRecord,
    ServerPlan,
    append_record,
    filler,
    load_plan,
    read_records,
)

__all__ = ["ToolBodies", "ToolResult", "post_json"]


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

    def __init__(
        self, plan: ServerPlan, plan_file: Path | None = None, hook: str | None = None
    ) -> None:
        self.plan = plan
        self.plan_file = plan_file
        self.hook = hook
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
        if self.hook is not None:
            return await self._hooked(run, name, arguments)
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

    async def _hooked(self, run: int, name: str, arguments: Mapping[str, object]) -> ToolResult:
        assert self.hook is not None
        try:
            answer = await post_json(self.hook, {"name": name, "arguments": dict(arguments)})
        except asyncio.CancelledError:
            self._record(RunRecord(run, "end", name, outcome="cancelled"))
            raise
        except (OSError, ValueError) as exc:
            answer = {"ok": False, "error": f"the harness's tool hook failed: {exc}"}
        if answer.get("ok"):
            result, kind = ToolResult(str(answer.get("output", ""))), "ok"
        else:
            kind = "timeout" if answer.get("timeout") else "fail"
            result = ToolResult(str(answer.get("error", "")), True)
        self._record(RunRecord(run, "end", name, outcome=kind, output_chars=len(result.text)))
        return result


async def post_json(url: str, doc: Mapping[str, object]) -> dict[str, object]:
    """POST ``doc`` as JSON to a loopback ``http://HOST:PORT/PATH`` and read
    the JSON answer, on asyncio's own sockets: cancelling the caller closes
    the connection at once (the server sees the hang-up)."""
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname or not parts.port:
        raise ValueError(f"the hook URL {url!r} is not http://HOST:PORT/PATH")
    data = json.dumps(doc).encode()
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    try:
        head = (
            f"POST {parts.path or '/'} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n"
            "Connection: close\r\n\r\n"
        )
        writer.write(head.encode() + data)
        await writer.drain()
        raw = await reader.read()
    finally:
        writer.close()
    body = raw.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in raw else b""
    answer = json.loads(body or b"{}")
    if not isinstance(answer, dict):
        raise ValueError("the hook answered no JSON object")
    return answer

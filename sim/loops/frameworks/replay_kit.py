"""The engine of an adapter's standalone script: replay a schedule in order
with the framework alone and print the broken request or the ledger mismatch.

A bundle's ``reproduce.py`` must run where only the framework is installed,
so the script is assembled from source: :func:`standalone_script` takes this
module, the adapter's modules and a few stand-ins for the contract's records
(:data:`_PRELUDE`), drops every ``prunecheck`` and relative import, and
appends the target, the schedule and a call to :func:`main`.  The same code
therefore runs in prunecheck (tests import it) and in the script: no second
copy to drift.

The replay is sequential, as the schedule says: after each step the event
loop runs until nothing but the harness's futures is left to wait on (no
clock, no threads).  It checks every request the framework sends against
the OpenAI Chat Completions pairing rules (the provider's exact error texts),
a turn still running after a cancel with nothing pending on the harness (a
hang) and, at the end, the ledger: a call whose body ran twice, a call whose
body finished but whose result never reached the model.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from prunecheck.sim.loops.contract import Reply, ToolCall, ToolFailed

__all__ = ["ScriptHarness", "openai_errors", "replay", "standalone_script"]

_RESULT_WITHOUT_CALL = (
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
    "message with 'tool_calls'."
)
_CALL_WITHOUT_RESULT = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to "
    "each 'tool_call_id'. The following tool_call_ids did not have response messages: "
)


def openai_errors(request: Mapping[str, Any]) -> list[str]:
    """The pairing errors OpenAI Chat Completions answers ``request`` with (HTTP 400).

    >>> openai_errors({"messages": [{"role": "tool", "tool_call_id": "c", "content": ""}]})[0][:40]
    "Invalid parameter: messages with role 't"
    """
    found: list[tuple[int, str]] = []  # (message index, error), reported in message order
    batch_at = -1
    open_ids: list[str] = []
    answered: set[str] = set()

    def close_batch() -> None:
        missing = [i for i in open_ids if i not in answered]
        if missing:
            found.append((batch_at, _CALL_WITHOUT_RESULT + ", ".join(missing)))

    for n, message in enumerate(request.get("messages", [])):
        if message.get("role") == "tool":
            if message.get("tool_call_id") not in open_ids:
                found.append((n, _RESULT_WITHOUT_CALL))
            answered.add(str(message.get("tool_call_id")))
            continue
        close_batch()
        batch_at, open_ids, answered = (
            n,
            [str(c["id"]) for c in message.get("tool_calls") or []],
            set(),
        )
    close_batch()
    return [error for _, error in sorted(found, key=lambda item: item[0])]


async def _settle() -> None:
    loop = asyncio.get_running_loop()
    idle = 0
    while idle < 3:
        await asyncio.sleep(0)
        idle = idle + 1 if not loop._ready else 0  # type: ignore[attr-defined]


class ScriptHarness:
    """The harness of a replay: futures the schedule's steps resolve in order."""

    def __init__(self, store: Path) -> None:
        self.store = store
        self.requests: list[dict[str, Any]] = []
        self.started: list[str] = []
        self.finished: list[str] = []
        self.awaiting: list[str] = []
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
        finally:
            if self._tools.get(call.id) is future:
                del self._tools[call.id]
        self.finished.append(call.id)
        return out

    def now(self) -> float:
        return 0.0

    def awaiting_approval(self, call_id: str) -> None:
        self.awaiting.append(call_id)

    def forget(self) -> None:
        self._models, self._tools = [], {}


async def _apply(step: Mapping[str, Any], state: dict[str, Any]) -> str:
    """Apply one step; return a note when it could not be applied."""
    harness: ScriptHarness = state["harness"]
    kind = step["kind"]
    turn = None
    if kind == "user":
        turn = state["loop"].send(step["text"])
    elif kind == "reply":
        if not harness._models:
            return "no model request is pending"
        calls = tuple(ToolCall(c["id"], c["name"], c["arguments"]) for c in step.get("calls", []))
        harness._models[0].set_result(Reply(text=step.get("text", ""), calls=calls))
    elif kind in ("complete", "fail", "timeout"):
        future = harness._tools.get(step["call"])
        if future is None:
            return f"the body of {step['call']} is not running"
        if kind == "complete":
            future.set_result(step["output"])
        elif kind == "fail":
            future.set_exception(ToolFailed(step.get("error", "tool failed")))
        else:
            future.set_exception(TimeoutError())
    elif kind == "cancel":
        if state["turn"] is None:
            return "no turn runs"
        await state["loop"].cancel(state["turn"])
    elif kind == "crash":
        state["loop"].abandon()
        state["dropped"].append(state["turn"])
        state["turn"] = None
        harness.forget()
        state["loop"] = state["open"](harness)
    elif kind == "resume":
        turn = state["loop"].resume()
    elif kind == "new_message":
        turn = state["loop"].send(step["text"])
    elif kind == "approve":
        turn = state["loop"].approve(step["call"], bool(step.get("approved", True)))
    elif kind != "advance":  # no clock of the framework's is used here
        return f"unknown step kind {kind!r}"
    if turn is not None:
        state["turn"] = asyncio.ensure_future(turn)
    await _settle()
    return ""


def replay(open_loop: Callable[[Any], Any], steps: Sequence[Mapping[str, Any]], store: Path) -> int:
    """Replay ``steps`` on ``open_loop(harness)``; print what was found; return 1 if anything.

    Parameters
    ----------
    open_loop : Callable
        Builds a fresh loop of the agent on a harness (again after a crash).
    steps : Sequence[Mapping]
        The schedule's steps, as JSON objects.
    store : Path
        The directory the framework persists in.
    """

    async def run() -> int:
        harness = ScriptHarness(store)
        state: dict[str, Any] = {
            "harness": harness, "open": open_loop, "loop": open_loop(harness),
            "turn": None, "dropped": [],
        }  # fmt: skip
        found = 0
        seen = 0
        for n, step in enumerate(steps, 1):
            note = await _apply(step, state)
            print(
                f"step {n:2}: {json.dumps(step)[:100]}" + (f"  (skipped: {note})" if note else "")
            )
            turn = state["turn"]
            if turn is not None and turn.done() and not turn.cancelled() and turn.exception():
                print(f"         the turn raised {type(turn.exception()).__name__}")
            idle = not harness._models and not harness._tools
            if step["kind"] == "cancel" and turn is not None and not turn.done() and idle:
                found += 1
                print("HANG: the turn neither returned nor raised after the cancel, and it waits")
                print("      on nothing the harness holds (no model request, no tool body)")
            for i in range(seen, len(harness.requests)):
                for error in openai_errors(harness.requests[i]):
                    found += 1
                    print(f"BROKEN REQUEST {i + 1} (after step {n}): 400 {error}")
                    print(json.dumps(harness.requests[i]["messages"], indent=1))
            seen = len(harness.requests)
        shown = {
            str(m.get("tool_call_id"))
            for r in harness.requests
            for m in r["messages"]
            if m.get("role") == "tool"
        }
        for call_id in sorted(set(harness.started)):
            if harness.started.count(call_id) > 1:
                found += 1
                times = harness.started.count(call_id)
                print(f"LEDGER MISMATCH: the body of {call_id} ran {times} times")
        for call_id in dict.fromkeys(harness.finished):
            if call_id not in shown:
                found += 1
                print(f"LEDGER MISMATCH: {call_id} finished, its result never reached the model")
        if not found:
            print("no broken request, no ledger mismatch")
        return 1 if found else 0

    return asyncio.run(run())


_PRELUDE = """
# Stand-ins for prunecheck's contract records (the script imports no prunecheck).
from dataclasses import dataclass as _dataclass
from enum import StrEnum as _StrEnum


@_dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str


@_dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict


@_dataclass(frozen=True)
class Reply:
    text: str = ""
    calls: tuple = ()
    chunks: int = 1


class ToolFailed(Exception):
    pass


class Capability(_StrEnum):
    CANCEL = "cancel"
    CRASH_RESUME = "crash_resume"
    CRASH_NEW_MESSAGE = "crash_new_message"
    INTERRUPT = "interrupt"
    TRIM_HOOK = "trim_hook"
    TOOL_TIMEOUT = "tool_timeout"


class PolicyError(Exception):
    pass


Harness = Loop = object
"""

# The script's own loader of the user's agent (a string: in prunecheck, user files
# are imported by prunecheck.sim.adapters.user_code alone).
_LOADER = """
import importlib
import importlib.util


def load_target(spec):
    \"\"\"``path/to/file.py:name`` or ``package.module:name``, imported.\"\"\"
    where, _, name = spec.rpartition(":")
    if where.endswith(".py"):
        path = Path(where).resolve()
        sys.path.insert(0, str(path.parent))
        module_spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[path.stem] = module
        module_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(where)
    return getattr(module, name)
"""


def _strip(source: str) -> str:
    out: list[str] = []
    skipping = False
    for line in source.splitlines():
        stripped = line.strip()
        if skipping:
            skipping = not stripped.endswith(")")
            continue
        if stripped.startswith(("from prunecheck", "from .", "from __future__")):
            skipping = stripped.endswith("(")
            if line.startswith((" ", "\t")):
                out.append(line[: len(line) - len(line.lstrip())] + "pass")
            continue
        out.append(line)
    return "\n".join(out)


def standalone_script(
    framework: str,
    modules: Sequence[ModuleType],
    open_expr: str,
    target_spec: str,
    schedule_json: str,
) -> str:
    """The text of a standalone replay script.

    Parameters
    ----------
    framework : str
        Named in the script's docstring.
    modules : Sequence[ModuleType]
        The adapter's modules, in dependency order; their source is inlined.
    open_expr : str
        An expression of ``target`` and ``harness`` that opens a loop
        (e.g. ``"LangGraphAdapter().open(target, harness)"``).
    target_spec : str
        ``file.py:name`` or ``module:name`` of the user's agent.
    schedule_json : str
        The schedule (``prunecheck-loop-schedule/1``).
    """
    import textwrap

    steps = json.loads(schedule_json)["steps"]
    parts = [
        "#!/usr/bin/env python3\n"
        f'"""Replay a prunecheck loop schedule against {target_spec} with {framework} alone.\n\n'
        "Prints every request that breaks OpenAI's tool pairing rules and every ledger\n"
        "mismatch; exits 1 if it found one.  Generated by prunecheck: the harness code is\n"
        'inlined below, nothing here imports prunecheck.\n"""\n\n'
        "from __future__ import annotations\n",
        _PRELUDE,
    ]
    for module in (*modules, sys.modules[__name__]):
        parts.append(f"\n# ---- {module.__name__.rsplit('.', 1)[-1]} ----\n")
        parts.append(_strip(inspect.getsource(module)))
    parts.append("\n# ---- the user's agent ----\n" + _LOADER)
    parts.append(
        textwrap.dedent(
            f"""

            # ---- the schedule ----
            TARGET = {target_spec!r}
            STEPS = json.loads({json.dumps(steps, sort_keys=True)!r})

            if __name__ == "__main__":
                import tempfile

                target = load_target(sys.argv[1] if len(sys.argv) > 1 else TARGET)
                with tempfile.TemporaryDirectory() as store:
                    sys.exit(replay(lambda harness: {open_expr}, STEPS, Path(store)))
            """
        )
    )
    return "".join(parts)

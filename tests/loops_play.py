"""Helpers of the framework adapters' tests: load an example agent, play a
schedule through the core's harness (:class:`LoopRun`) at once (:func:`play`)
or step by step (:class:`Drive`), read its requests, run a standalone script
with the framework alone (:func:`run_script`)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import pytest

from prunecheck import validate_request
from prunecheck.sim.subjects.loops.contract import Adapter, Reply, ToolCall
from prunecheck.sim.subjects.loops.steps import (
    Approve,
    Cancel,
    Complete,
    Crash,
    Fail,
    NewMessage,
    ReplyStep,
    Resume,
    Step,
    Timeout,
    User,
)

__all__ = [
    "CALLS_WITHOUT_RESULTS",
    "EXAMPLES",
    "RESULT_WITHOUT_CALL",
    "Drive",
    "call",
    "errors",
    "kinds",
    "load_example",
    "play",
    "played",
    "replay_script",
    "roles",
    "run_script",
    "search_call",
    "tool_text",
]

EXAMPLES = Path(__file__).parent.parent / "examples" / "loops"
CALLS_WITHOUT_RESULTS = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding "
    "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
)
RESULT_WITHOUT_CALL = (
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
    "message with 'tool_calls'."
)


def load_example(name: str, attr: str = "agent") -> Any:
    """``examples/loops/<name>.py:<attr>``, imported from its file."""
    spec = importlib.util.spec_from_file_location(f"loops_example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # frameworks resolve annotations through it
    spec.loader.exec_module(module)
    return getattr(module, attr)


_KEYS = {"read_file": "path", "delete_file": "path", "run_tests": "target", "search": "query"}


def call(n: int, name: str = "read_file", **arguments: object) -> ToolCall:
    """The n-th call the model double issues (``call_<n>``): ``arguments``, or
    valid ones for the examples' tools."""
    args = arguments or {_KEYS[name]: f"f{n}"}
    return ToolCall(f"call_{n}", name, json.dumps(args))


def search_call(n: int) -> ToolCall:
    """The n-th call of the LangGraph and AutoGen examples' ``search`` tool."""
    return call(n, "search", query=f"q{n}")


def errors(body: Mapping[str, object]) -> list[str]:
    """The OpenAI errors a provider answers the request ``body`` with."""
    return [e.text for e in validate_request(dict(body), "openai")]


@contextmanager
def play(adapter: Adapter, target: object, steps: Sequence[object]) -> Iterator[Any]:
    """The core's ``LoopRun`` after ``steps`` (schedule steps) applied one by
    one; a refused step fails the test.  Skips where the core's harness
    (``prunecheck.sim.subjects.loops.scheduler``) is not installed."""
    scheduler = pytest.importorskip("prunecheck.sim.subjects.loops.scheduler")
    with scheduler.LoopRun(adapter, target) as run:
        for step in steps:
            run.apply(cast(Step, step))
        yield run


def roles(run: Any, index: int = -1) -> list[str]:
    """A request's messages in short: ``S``, ``U``, ``A``, ``A(call_1,call_2)``, ``T(call_1)``.

    ``run`` is a ``LoopRun`` (its ``index``-th request) or a request body."""
    body = run if isinstance(run, Mapping) else run.ledger.requests[index].body
    out = []
    for m in body["messages"]:
        if m.get("tool_calls"):
            out.append("A(" + ",".join(c["id"] for c in m["tool_calls"]) + ")")
        elif m["role"] == "tool":
            out.append(f"T({m['tool_call_id']})")
        else:
            out.append(str(m["role"])[0].upper())
    return out


def kinds(run: Any) -> list[tuple[str, tuple[str, ...]]]:
    """The run's incidents: kind and call ids."""
    return [(i.kind.value, i.ids) for i in run.incidents]


def tool_text(run: Any, call_id: str, index: int = -1) -> str:
    """The content of ``call_id``'s tool message in a request."""
    for m in run.ledger.requests[index].body["messages"]:
        if m.get("role") == "tool" and m.get("tool_call_id") == call_id:
            return str(m.get("content"))
    raise AssertionError(f"no tool message for {call_id}")


def run_script(
    text: str, tmp: Path, framework: str, *, guarded: bool = False
) -> subprocess.CompletedProcess[str]:
    """Run a standalone reproduction script from ``tmp`` (outside the
    repository) with its framework alone: prunecheck's harness, its
    dependencies and the other frameworks unimportable (``guarded``: an agent
    built on prunecheck's guard keeps the guard)."""
    from prunecheck.sim.reports.alone import run_alone

    script = tmp / "repro.py"
    script.write_text(text)
    return run_alone(script, framework, tmp, keep_guard=guarded, timeout=120)


def replay_script(
    adapter: Adapter, spec: str, steps: Sequence[Step], tmp: Path
) -> subprocess.CompletedProcess[str]:
    """The adapter's standalone script of ``steps`` on ``spec`` (a path from the
    repository's root), written to ``tmp`` and run from there with the
    framework alone (:func:`run_script`; an agent that imports prunecheck's
    guard keeps it)."""
    from prunecheck.sim.subjects.loops.steps import schedule_to_json
    from prunecheck.sim.subjects.policy_spec import split_reference

    where, attr = split_reference(spec)
    path = EXAMPLES.parent.parent / where
    schedule = schedule_to_json(steps, target=f"{path}:{attr}", framework=adapter.framework,
                                seed=1)  # fmt: skip
    text = adapter.script(f"{path}:{attr}", schedule, folder=tmp)
    code = [ln.strip() for ln in text.splitlines()]
    assert not [
        ln for ln in code if ln.startswith(("from prunecheck.sim", "import prunecheck.sim"))
    ]
    guarded = "prunecheck.guard" in path.read_text()
    return run_script(text, tmp, adapter.framework, guarded=guarded)


class Drive:
    """A schedule applied step by step to the core's ``LoopRun``, with short
    reads of its ledger (what tests of one framework assert on).

    Parameters
    ----------
    adapter, target
        As :class:`~prunecheck.sim.subjects.loops.scheduler.LoopRun` takes them.
    store : Path
        The framework's store (tests read its files).
    """

    def __init__(self, adapter: Adapter, target: object, store: Path) -> None:
        scheduler = pytest.importorskip("prunecheck.sim.subjects.loops.scheduler")
        self.run: Any = scheduler.LoopRun(adapter, target, store=store)
        self._held: list[dict[str, object]] = []

    def __enter__(self) -> Drive:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.run.loop is not None:
            self._held = list(self.run.loop.history())
        self.run.close()

    def step(self, *steps: Step) -> None:
        for s in steps:
            self.run.apply(s)

    def user(self, text: str) -> None:
        self.step(User(text))

    def reply(self, text: str = "", calls: tuple[ToolCall, ...] = (), chunks: int = 1) -> None:
        """The model's reply.  Schedules answer in one chunk; ``chunks`` > 1 (a
        test of an adapter's streaming path) answers the pending request
        directly, outside the schedule, and settles the loop."""
        if chunks == 1:
            self.step(ReplyStep(text, calls))
            return
        assert not calls, "a chunked reply carries text only"
        pending = next(f for f in self.run._requests if not f.done())
        pending.set_result(Reply(text, calls, chunks))
        self.run._run(self.run._clock.settle)

    def complete(self, call_id: str, output: str = "ok") -> None:
        self.step(Complete(call_id, output))

    def fail(self, call_id: str, error: str = "tool failed") -> None:
        self.step(Fail(call_id, error))

    def timeout(self, call_id: str) -> None:
        self.step(Timeout(call_id))

    def cancel(self) -> None:
        self.step(Cancel())

    def crash(self) -> None:
        self.step(Crash())

    def resume(self) -> None:
        self.step(Resume())

    def new_message(self, text: str) -> None:
        self.step(NewMessage(text))

    def approve(self, call_id: str, approved: bool = True) -> None:
        self.step(Approve(call_id, approved))

    # ------------------------------------------------------------- reads
    @property
    def requests(self) -> list[dict[str, Any]]:
        return [dict(r.body) for r in self.run.ledger.requests]

    @property
    def last(self) -> dict[str, Any]:
        return self.requests[-1]

    @property
    def started(self) -> list[str]:
        """Call ids in the order their tool bodies started (a re-run twice)."""
        return [b.call for b in self.run.ledger.bodies]

    @property
    def finished(self) -> list[str]:
        """Call ids in the order their tool bodies returned."""
        done = [(b.ended, n, b.call) for n, b in enumerate(self.run.ledger.bodies)
                if b.end.value == "ok"]  # fmt: skip
        return [cid for _, _, cid in sorted(done)]

    @property
    def cancelled(self) -> list[str]:
        return [b.call for b in self.run.ledger.bodies if b.end.value == "cancelled"]

    @property
    def running_tools(self) -> list[str]:
        return list(self.run.waiting_calls())

    @property
    def pending_models(self) -> int:
        return int(self.run.pending_requests())

    def history(self) -> list[dict[str, object]]:
        """What the framework holds (as it held it at the drive's end, once closed)."""
        if self.run.loop is None:
            return self._held
        return list(self.run.loop.history())

    def outcome(self) -> str:
        """The last turn's: ``returned``, ``cancelled``, ``raised <Type>`` or ``running``."""
        if self.run.turn_running or not self.run.ledger.outcomes:
            return "running"
        text = str(self.run.ledger.outcomes[-1][1])
        what = text.split(" ", 1)[1]
        return {"was cancelled": "cancelled"}.get(what, what.split(":", 1)[0])


def played(
    adapter: Adapter, target: object, store: Path, scenario: Callable[[Drive], None]
) -> Drive:
    """``scenario`` played on a :class:`Drive` of ``target``; the drive, closed
    (its reads of the ledger and of the framework's last history stay)."""
    with Drive(adapter, target, store) as drive:
        scenario(drive)
    return drive

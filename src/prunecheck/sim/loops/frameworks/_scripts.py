"""Standalone reproduction scripts: the one script engine of every adapter.

A bundle's ``reproduce.py`` must run with the framework alone installed (no
prunecheck).  The script is built from the very code that found the failure:
it embeds the contract's records, the adapters' shared helpers and the
adapter's modules (their source text, every prunecheck and relative import
cut), then a small harness: a virtual-time event loop settled to quiescence
after each step, a scripted model, fake tool bodies, and a judge of every
request — the OpenAI pairing rules with their exact texts, and the ledger
under the core judge's rules (:mod:`prunecheck.sim.loops.judge`): a body
that ran twice, a result that is not what the tool returned or that no tool
body produced, an executed call the model no longer sees when no trim
removed its whole, closed unit, a turn that does not return after a cancel.
It prints the schedule step by step, every request in short, each finding,
and exits 1 if there is one.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Sequence
from types import ModuleType

__all__ = ["script_text", "strip_imports"]

_RECORDS = ("ToolSpec", "ToolCall", "Reply", "ToolFailed", "Capability")

#: What the contract's protocols, prunecheck's error and its incident record
#: stand for in a script (the ledger judge's incidents carry their kind and detail).
_STAND_INS = '''

Harness = Loop = Adapter = object  # the contract's protocols: annotations only


class PolicyError(Exception):
    """prunecheck's error of a configuration it cannot check (subject, rule, hint)."""


class IncidentKind(StrEnum):
    """The incident classes (prunecheck.model.incidents)."""

{kinds}


@dataclass(frozen=True)
class Incident:
    """One finding of the ledger judge (prunecheck.model.incidents.Incident)."""

    kind: IncidentKind
    step: int
    ids: tuple
    detail: str
    reason: str = ""
    text: str = ""
'''

_CUT_PREFIXES = ("from prunecheck", "import prunecheck", "from .", "from __future__")

_HARNESS = r'''
# ---------------------------------------------------------------- the harness
import asyncio as _asyncio
import heapq as _heapq
import importlib.util as _ilu
import json as _json
import sys as _sys
import tempfile as _tempfile
from pathlib import Path as _Path

_TEXT_ORPHAN = ("Invalid parameter: messages with role 'tool' must be a response to a "
                "preceeding message with 'tool_calls'.")
_TEXT_UNANSWERED = ("An assistant message with 'tool_calls' must be followed by tool messages "
                    "responding to each 'tool_call_id'. The following tool_call_ids did not "
                    "have response messages: {ids}")


class VirtualLoop(_asyncio.SelectorEventLoop):
    """An event loop whose clock moves only on an ``advance`` step."""

    made = []

    def __init__(self, start=0.0):
        super().__init__()
        self.now = start
        VirtualLoop.made.append(self)

    def time(self):
        return self.now

    def settle(self):
        for _ in range(200_000):
            self.call_soon(self.stop)
            self.run_forever()
            timers = self._scheduled
            while timers and timers[0].cancelled():
                _heapq.heappop(timers)
            if not self._ready and not (timers and timers[0].when() <= self.now):
                return
        raise RuntimeError("the loop never went quiescent")

    def advance(self, seconds):
        target = self.now + seconds
        while True:
            live = [h.when() for h in self._scheduled if not h.cancelled()]
            if not live or min(live) > target:
                break
            self.now = max(self.now, min(live))
            self.settle()
        self.now = target
        self.settle()


class ScriptHarness:
    """What the adapter's loop calls back into; holds the core's ledger."""

    def __init__(self, store):
        self.store = store
        self.clock = VirtualLoop()
        self.ledger = Ledger()
        self.findings, self.approvals = [], []
        self.replies, self.waiting = [], {}
        self.trims = False
        self.step = 0
        self.epoch = 0

    def now(self):
        return self.clock.time()

    def awaiting_approval(self, call_id):
        if call_id not in self.approvals:
            self.approvals.append(call_id)

    async def model(self, request):
        body = _json.loads(_json.dumps(request, sort_keys=True, default=str))
        self.ledger.requests.append(Received(self.step, body))
        print(f"  request {len(self.ledger.requests)}: {short(body)}")
        self.judge(body)
        future = _asyncio.get_running_loop().create_future()
        self.replies.append(future)
        return await future

    async def tool(self, call):
        body = Body(self.ledger.match(call), self.step, epoch=self.epoch)
        self.ledger.bodies.append(body)
        future = _asyncio.get_running_loop().create_future()
        self.waiting.setdefault(body.call, []).append((future, body))
        try:
            return await future
        except _asyncio.CancelledError:
            if body.end is BodyEnd.RUNNING:
                body.end, body.ended = BodyEnd.CANCELLED, self.step
            raise

    def find(self, text):
        if text not in self.findings:
            print("  >>> " + text)
            self.findings.append(text)

    def judge(self, body):
        """The provider's pairing rules (OpenAI's texts), then the core judge's
        ledger rules: a result no tool returned, arguments not as issued, an
        executed call the model is no longer told of."""
        messages = body["messages"]
        for i, m in enumerate(messages):
            if m.get("role") == "tool":
                j = i - 1
                while j >= 0 and messages[j].get("role") == "tool":
                    j -= 1
                prior = (messages[j].get("tool_calls") or []) if j >= 0 else []
                if m.get("tool_call_id") not in {c["id"] for c in prior}:
                    self.find(f"BROKEN REQUEST (HTTP 400): messages.{i}: {_TEXT_ORPHAN}")
            calls = m.get("tool_calls") or []
            if calls:
                answered = set()
                for n in messages[i + 1:]:
                    if n.get("role") != "tool":
                        break
                    answered.add(n.get("tool_call_id"))
                missing = [c["id"] for c in calls if c["id"] not in answered]
                if missing:
                    self.find(f"BROKEN REQUEST (HTTP 400): messages.{i}: "
                              + _TEXT_UNANSWERED.format(ids=", ".join(missing)))
        calls, results = calls_and_results(body)
        found = []
        for cid, text in results.items():
            found += _judge_result(cid, text, self.ledger, self.step)
        for cid, (_, arguments) in calls.items():
            issued = self.ledger.issued.get(cid)
            if issued is not None and _loads(arguments) != _loads(issued.call.arguments):
                self.find(f"LEDGER MISMATCH: the arguments of {cid} differ from those the "
                          "model issued")
        found += _silent_losses(calls, results, self.ledger, self.step, trims=self.trims)
        for incident in found:
            self.find(f"LEDGER MISMATCH: {incident.detail}")
        if self.trims:
            for unit in removed_by_trim(body, self.ledger):
                self.ledger.note_trim(self.step, unit)
        self.ledger.witness(calls, results)

    def witness_history(self, loop):
        """What the loop holds after a disruption, or on reopening from the store."""
        try:
            history = loop.history()
        except Exception:
            return
        self.ledger.witness(*calls_and_results({"messages": history}))

    def body(self, cid):
        return next(w for w in self.waiting.get(cid, []) if not w[0].done())


def short(request):
    out = []
    for m in request["messages"]:
        if m.get("tool_calls"):
            out.append("assistant(" + ",".join(c["id"] for c in m["tool_calls"]) + ")")
        elif m.get("role") == "tool":
            out.append(f"tool({m.get('tool_call_id')})")
        else:
            out.append(str(m.get("role")))
    return " ".join(out)


def load_target(spec):
    """``path/to/file.py:attr`` or ``package.module:attr``."""
    where, _, attr = spec.rpartition(":")
    if where.endswith(".py"):
        path = _Path(where).resolve()
        _sys.path.insert(0, str(path.parent))
        module_spec = _ilu.spec_from_file_location(path.stem, path)
        module = _ilu.module_from_spec(module_spec)
        _sys.modules[module_spec.name] = module
        module_spec.loader.exec_module(module)
    else:
        module = __import__(where, fromlist=[attr])
    return getattr(module, attr)


def run_schedule(adapter, target, steps):
    """Apply ``steps`` in order to a fresh loop of ``target``; the harness, findings in it."""
    h = ScriptHarness(_Path(_tempfile.mkdtemp(prefix="reproduce-")))
    h.trims = Capability.TRIM_HOOK in adapter.capabilities(target)
    ledger = h.ledger
    _asyncio.set_event_loop(h.clock)
    loop = adapter.open(target, h)
    turn = None

    def start(coro, what):
        async def run():
            try:
                await coro
                print(f"  ({what} returned)")
            except _asyncio.CancelledError:
                print(f"  ({what} was cancelled)")
            except Exception as exc:
                ledger.raised.append(h.step)
                print(f"  ({what} raised {type(exc).__name__}: {exc})")
        return h.clock.create_task(run())

    def end(step, kind, output=""):
        future, body = h.body(step["call"])
        body.end, body.ended, body.output = kind, h.step, output
        return future

    for n, step in enumerate(steps):
        kind = step["kind"]
        h.step = n
        disruptions = ledger.disruptions
        print(f"step {n}: {_json.dumps(step, sort_keys=True)}")
        if kind == "user":
            ledger.users.append((n, step["text"]))
            turn = start(loop.send(step["text"]), "send")
        elif kind == "reply":
            calls = tuple(ToolCall(c["id"], c["name"], c["arguments"])
                          for c in step.get("calls", []))
            ledger.issue(calls, n)
            pending = next(f for f in h.replies if not f.done())
            pending.set_result(Reply(step.get("text", ""), calls))
        elif kind == "complete":
            future = end(step, BodyEnd.OK, step["output"])
            if sum(1 for b in ledger.bodies_of(step["call"]) if b.end is BodyEnd.OK) > 1:
                h.find(f"LEDGER MISMATCH: the tool body of {step['call']} ran twice")
            future.set_result(step["output"])
        elif kind == "fail":
            error = step.get("error", "tool failed")
            end(step, BodyEnd.FAILED, error).set_exception(ToolFailed(error))
        elif kind == "timeout":
            end(step, BodyEnd.TIMED_OUT).set_exception(
                TimeoutError(f"the tool of {step['call']} timed out"))
        elif kind == "advance":
            h.clock.advance(float(step["seconds"]))
        elif kind == "cancel":
            ledger.cancels.append(n)
            h.clock.create_task(loop.cancel(turn))
            h.clock.settle()
            if not turn.done():
                h.clock.advance(60.0)
            if not turn.done():
                h.find("HANG: the turn did not return within 60 s after the cancel")
        elif kind == "crash":
            ledger.crashes.append(n)
            for queue in h.waiting.values():
                for _, body in queue:
                    if body.end is BodyEnd.RUNNING:
                        body.end, body.ended = BodyEnd.DROPPED, n
            h.waiting, h.replies, h.approvals = {}, [], []
            loop.abandon()  # the dropped loop's tasks are never run again
            h.clock = VirtualLoop(h.clock.now)
            h.epoch += 1
            _asyncio.set_event_loop(h.clock)
            loop = adapter.open(target, h)
            print("  (the process died; a new one opens the agent on the same store)")
            continue
        elif kind in ("resume", "new_message"):
            h.witness_history(loop)  # what survived the crash
            if kind == "resume":
                turn = start(loop.resume(), "resume")
            else:
                ledger.users.append((n, step["text"]))
                turn = start(loop.send(step["text"]), "send")
        elif kind == "approve":
            h.approvals.remove(step["call"])
            if not step.get("approved", True):
                ledger.denied.add(step["call"])
            turn = start(loop.approve(step["call"], step.get("approved", True)), "approve")
        h.clock.settle()
        if ledger.disruptions != disruptions:
            h.witness_history(loop)  # what the loop still holds after a cancel or a raise
    return h


def _quiet_exit(code):
    """Exit without the debris of the dropped tasks (their ``finally`` clauses
    run at collection, on loops that are gone): it is not the schedule's."""
    import logging

    _sys.stdout.flush()
    logging.disable(logging.CRITICAL)
    _sys.unraisablehook = lambda _: None
    for clock in VirtualLoop.made:
        clock.set_exception_handler(lambda loop, context: None)
    _sys.exit(code)


if __name__ == "__main__":
    replayed = run_schedule(ADAPTER, load_target(TARGET), SCHEDULE["steps"])
    if replayed.findings:
        print(f"{len(replayed.findings)} finding(s); the first: {replayed.findings[0]}")
        _quiet_exit(1)
    print("no broken request and no ledger mismatch")
    _quiet_exit(0)
'''


def strip_imports(source: str) -> str:
    r"""``source`` without its prunecheck, relative and ``__future__`` imports.

    A cut import inside a function becomes ``pass`` at its indentation (the
    block stays a block); a parenthesized import is cut whole.

    >>> text = "import os\nfrom . import a\ndef f():\n    from .b import (\n  c)\n    return c"
    >>> print(strip_imports(text), end="")
    import os
    def f():
        pass
        return c
    """
    out: list[str] = []
    skipping = False
    for line in source.splitlines():
        stripped = line.strip()
        if skipping:
            skipping = not stripped.endswith(")")
            continue
        if stripped.startswith(_CUT_PREFIXES):
            skipping = stripped.endswith("(")
            if line[:1].isspace():
                out.append(line[: len(line) - len(line.lstrip())] + "pass")
            continue
        out.append(line)
    return "\n".join(out) + "\n"


def _records() -> str:
    from .. import contract

    return "\n\n".join(inspect.getsource(getattr(contract, name)) for name in _RECORDS)


def script_text(modules: Sequence[ModuleType], title: str, target_spec: str,
                schedule_json: str, adapter: str) -> str:  # fmt: skip
    """A standalone script: the adapter built by the expression ``adapter``
    (defined in ``modules``, inlined in their order after the core's ledger,
    its judge and the shared helpers) replaying ``schedule_json`` on ``target_spec``.

    Parameters
    ----------
    modules : Sequence[ModuleType]
        The adapter's modules, in dependency order (``[lc_doubles, langgraph]``).
    title : str
        The framework, as the script's docstring names it.
    target_spec : str
        ``file.py:name`` or ``module:name`` of the user's agent.
    schedule_json : str
        The schedule (:func:`prunecheck.sim.loops.steps.schedule_to_json`).
    adapter : str
        An expression building the adapter (``"LangGraphAdapter()"``).

    Raises
    ------
    ValueError
        If two inlined parts define the same top-level name (the later one
        would replace the earlier in the script's one namespace).
    """
    from .. import judge, ledger
    from . import _common

    head = (
        f'"""{title}: a schedule prunecheck found, replayed with the framework alone.\n\n'
        f"Run it from the directory the target's path is relative to:\n\n"
        f"    python reproduce.py\n\n"
        f"It prints every step and request, and each broken request (the provider's 400)\n"
        f'or ledger mismatch it finds; exit status 1 if it finds one."""\n\n'
        "from __future__ import annotations\n\n"
        "import json\n"
        "from dataclasses import dataclass\n"
        "from enum import StrEnum\n"
        "from collections.abc import Mapping\n\n"
        f"TARGET = {target_spec!r}\n"
        f"SCHEDULE = json.loads({schedule_json!r})\n\n"
    )
    from prunecheck.model.incidents import IncidentKind

    kinds = "\n".join(f"    {k.name} = {k.value!r}" for k in IncidentKind)
    parts = [("the contract's records", _records() + _STAND_INS.replace("{kinds}", kinds))]
    for module in (ledger, judge, _common, *modules):
        name = module.__name__.rsplit(".", 1)[-1]
        parts.append((name, strip_imports(inspect.getsource(module))))
    parts += [("the adapter", f"ADAPTER = {adapter}\n"), ("the harness", _HARNESS)]
    _check_names(parts)
    text = [head]
    for name, source in parts:
        text.append(f"\n\n# {'-' * max(3, 72 - len(name))} {name}\n{source}")
    return "".join(text)


_SHARED = frozenset({"__all__", "annotations"})


def _check_names(parts: Sequence[tuple[str, str]]) -> None:
    seen: dict[str, str] = {}
    for part, source in parts:
        for name in _top_level(source) - _SHARED:
            if name in seen:
                raise ValueError(
                    f"script parts {seen[name]!r} and {part!r} both define {name!r}: in the "
                    "script's one namespace the later would replace the earlier; rename one"
                )
            seen[name] = part


def _top_level(source: str) -> set[str]:
    """The names ``source`` binds at its top level (definitions, assignments, imports)."""
    names: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return names

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

import inspect
from collections.abc import Sequence
from types import ModuleType

__all__ = ["script_text", "strip_imports"]

_RECORDS = ("ToolSpec", "ToolCall", "Reply", "ToolFailed", "Capability")

#: What the contract's protocols and prunecheck's error stand for in a script.
_STAND_INS = '''

Harness = Loop = Adapter = object  # the contract's protocols: annotations only


class PolicyError(Exception):
    """prunecheck's error of a configuration it cannot check (subject, rule, hint)."""
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
_EXECUTED = ("ok", "failed", "timed out")
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


class Harness:
    """What the adapter's loop calls back into; holds the ledger."""

    def __init__(self, store):
        self.store = store
        self.clock = VirtualLoop()
        self.requests, self.findings, self.approvals = [], [], []
        self.issued = {}  # call id -> (ToolCall, its batch's ids, the step that issued it)
        self.bodies = {}  # call id -> [[end, output]]
        self.users, self.denied = [], set()  # (step, text) of every user message; denied calls
        self.replies, self.waiting, self.dead = [], {}, []
        self.trims = False
        self.step = 0

    def now(self):
        return self.clock.time()

    def awaiting_approval(self, call_id):
        if call_id not in self.approvals:
            self.approvals.append(call_id)

    async def model(self, request):
        self.requests.append(request)
        print(f"  request {len(self.requests)}: {short(request)}")
        self.judge(request)
        future = _asyncio.get_running_loop().create_future()
        self.replies.append(future)
        return await future

    async def tool(self, call):
        record = ["running", ""]
        self.bodies.setdefault(call.id, []).append(record)
        future = _asyncio.get_running_loop().create_future()
        self.waiting.setdefault(call.id, []).append((future, record))
        try:
            return await future
        except _asyncio.CancelledError:
            if record[0] == "running":
                record[0] = "cancelled"
            raise

    def find(self, text):
        if text not in self.findings:
            print("  >>> " + text)
            self.findings.append(text)

    def executed(self, cid):
        return next((r for r in self.bodies.get(cid, []) if r[0] in _EXECUTED), None)

    def judge(self, request):
        messages = request["messages"]
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
        seen = {c["id"] for m in messages for c in (m.get("tool_calls") or [])}
        results = {m.get("tool_call_id"): _text(m.get("content")) for m in messages
                   if m.get("role") == "tool"}
        for cid, text in results.items():
            self.judge_result(cid, text)
        sent = {_text(m.get("content")) for m in messages if m.get("role") == "user"}
        order = list(self.issued)
        for n, cid in enumerate(order):
            done = self.executed(cid)
            if cid in seen or cid in results or done is None:
                continue
            _, batch, at = self.issued[cid]
            kept = [b for b in batch if b in seen or b in results]
            older = [c for c in order[:n] if c in seen or c in results]
            before = [t for step, t in self.users if step < at and t in sent]
            if kept:
                why = f"its parallel batch was cut ({', '.join(kept)} kept)"
            elif not self.trims:
                why = "no trim removed it"
            elif older:
                why = f"an older call ({older[0]}) is still sent: no trim from the front removed it"
            elif before:
                why = f"a user message before it ({before[0]!r}) is still sent: no trim removed it"
            else:
                continue  # a whole, closed unit trimmed away from the front
            self.find(f"LEDGER MISMATCH: {cid} ran (it returned {done[1]!r}) but the model no "
                      f"longer sees its call nor its result: {why}")

    def judge_result(self, cid, text):
        done = self.executed(cid)
        if done is not None and done[0] == "ok":
            if done[1] not in text and _json.dumps(done[1]) not in text:
                self.find(f"LEDGER MISMATCH: the model is told {cid} returned {text!r}; its "
                          f"tool body returned {done[1]!r}")
            return
        runs = self.bodies.get(cid, [])
        if done is not None or any(r[0] == "cancelled" for r in runs) or cid in self.denied:
            return  # an error, a timeout, a cancel or a refusal, reported by the framework
        if cid not in self.issued or any(w in text.lower() for w in PLACEHOLDER_WORDS):
            return
        why = "its body was dropped by a crash" if runs else "no tool body ran for it"
        self.find(f"LEDGER MISMATCH: the model is told {cid} returned {text!r}; {why}")

    def body(self, cid):
        return next(w for w in self.waiting.get(cid, []) if not w[0].done())


def _text(content):
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
    return "" if content is None else str(content)


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
    h = Harness(_Path(_tempfile.mkdtemp(prefix="reproduce-")))
    h.trims = Capability.TRIM_HOOK in adapter.capabilities(target)
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
                print(f"  ({what} raised {type(exc).__name__}: {exc})")
        return h.clock.create_task(run())

    for n, step in enumerate(steps):
        kind = step["kind"]
        h.step = n
        print(f"step {n}: {_json.dumps(step, sort_keys=True)}")
        if kind == "user":
            h.users.append((n, step["text"]))
            turn = start(loop.send(step["text"]), "send")
        elif kind == "reply":
            calls = tuple(ToolCall(c["id"], c["name"], c["arguments"])
                          for c in step.get("calls", []))
            h.issued.update({c.id: (c, tuple(d.id for d in calls), n) for c in calls})
            pending = next(f for f in h.replies if not f.done())
            pending.set_result(Reply(step.get("text", ""), calls))
        elif kind == "complete":
            future, record = h.body(step["call"])
            if any(r[0] == "ok" for r in h.bodies[step["call"]]):
                h.find(f"LEDGER MISMATCH: the tool body of {step['call']} ran twice")
            record[:] = ["ok", step["output"]]
            future.set_result(step["output"])
        elif kind == "fail":
            future, record = h.body(step["call"])
            record[0] = "failed"
            future.set_exception(ToolFailed(step.get("error", "tool failed")))
        elif kind == "timeout":
            future, record = h.body(step["call"])
            record[0] = "timed out"
            future.set_exception(TimeoutError(f"the tool of {step['call']} timed out"))
        elif kind == "advance":
            h.clock.advance(float(step["seconds"]))
            continue
        elif kind == "cancel":
            h.clock.create_task(loop.cancel(turn))
            h.clock.settle()
            if not turn.done():
                h.clock.advance(60.0)
            if not turn.done():
                h.find("HANG: the turn did not return within 60 s after the cancel")
            continue
        elif kind == "crash":
            for queue in h.waiting.values():
                for future, record in queue:
                    if record[0] == "running":
                        record[0] = "dropped"
            h.dead.append((h.clock, h.waiting, h.replies))  # never run, never collected
            h.waiting, h.replies, h.approvals = {}, [], []
            loop.abandon()
            h.clock = VirtualLoop(h.clock.now)
            _asyncio.set_event_loop(h.clock)
            loop = adapter.open(target, h)
            print("  (the process died; a new one opens the agent on the same store)")
            continue
        elif kind == "resume":
            turn = start(loop.resume(), "resume")
        elif kind == "new_message":
            h.users.append((n, step["text"]))
            turn = start(loop.send(step["text"]), "send")
        elif kind == "approve":
            h.approvals.remove(step["call"])
            if not step.get("approved", True):
                h.denied.add(step["call"])
            turn = start(loop.approve(step["call"], step.get("approved", True)), "approve")
        h.clock.settle()
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
    (defined in ``modules``, inlined in their order after the shared helpers)
    replaying ``schedule_json`` on ``target_spec``.

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
    """
    from .. import judge
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
        f"SCHEDULE = json.loads({schedule_json!r})\n"
        f"PLACEHOLDER_WORDS = {judge.PLACEHOLDER_WORDS!r}\n\n"
        "# ------------------------------------------- the contract's records (prunecheck)\n"
    )
    parts = [head, _records(), _STAND_INS]
    for module in (_common, *modules):
        name = module.__name__.rsplit(".", 1)[-1]
        parts.append(f"\n\n# {'-' * max(3, 66 - len(name))} {name} ({title})\n")
        parts.append(strip_imports(inspect.getsource(module)))
    parts += [f"\n\nADAPTER = {adapter}\n", _HARNESS]
    return "".join(parts)

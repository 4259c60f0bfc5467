"""The far side of the cage: a process that loads one user policy and answers
``select`` calls over a pipe.

Started by :mod:`.cage` as ``python -m prunecheck.sim.subjects.cage_worker REQ RESP``
with REQ and RESP the pipe descriptors to read requests from and write
answers to.  Its standard output is the parent's standard error, so whatever
the policy prints never reaches prunecheck's own output.

Protocol: each message is a 4-byte big-endian length and a payload.  The
parent sends pickles (it is trusted); the worker answers in JSON only, so
nothing a policy returns can run code in the parent when it is read.

- hello ``(spec, sys_path, memory_bytes)`` → ``{"name", "format"}`` or
  ``{"error": {"subject", "rule", "hint"}}``
- call ``(messages, pending_calls, budget, used, now, turn, need)``, where a
  message the worker received in the previous call comes as its id only →
  ``{"evict": [...], "clear": [...], "summarize": [[ids, tokens, text], ...]}``
  or ``{"error": ...}``; with ``"stateful": true`` once the policy's state
  moved during a call (:mod:`.cage_state`): the parent's memo is then off.

Whatever the policy raises — any ``BaseException``, ``SystemExit`` and
``KeyboardInterrupt`` included — is answered as an error; the worker stays
alive.  ``os._exit``, a crash or a hang end it; the parent tells those apart.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import sys
from collections.abc import Container
from typing import Any

from prunecheck.sim.subjects.cage_wire import raised as _raised
from prunecheck.sim.subjects.cage_wire import read_frame as _read
from prunecheck.sim.subjects.cage_wire import write_frame as _write

__all__ = ["die_with_parent", "main"]


def die_with_parent() -> None:
    """Ask Linux to kill this process when its parent dies (a no-op elsewhere)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class _Anything(Container[str]):
    """Every id is known here; the parent checks ids against its context."""

    def __contains__(self, item: object) -> bool:
        return True


def _error(subject: str, rule: str, hint: str = "") -> dict[str, Any]:
    return {"error": {"subject": subject, "rule": rule, "hint": hint}}


def _rewritten(messages: tuple[Any, ...], before: list[Any], look: Any) -> str:
    """Which message a policy changed in place (its fields differ), or ''."""
    for m, was in zip(messages, before, strict=True):
        if look(m) != was:
            return f"message {m.id!r}" if isinstance(getattr(m, "id", None), str) else "a message"
    return ""


def _view_rewritten(view: Any, seen: tuple[Any, ...]) -> str:
    """Which attribute of its view a policy replaced, or ''."""
    now = (view.messages, view.pending_calls, view.budget, view.used, view.now, view.turn)
    names = ("messages", "pending_calls", "budget", "used", "now", "turn")
    for attr, a, b in zip(names, now, seen, strict=True):
        if a is not b and a != b:
            return f"the view's {attr}"
    return ""


def _limit_memory(limit: int) -> None:
    if limit <= 0:
        return
    try:
        import resource

        _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    except (ImportError, ValueError, OSError):
        pass


def _serve(req: int, resp: int) -> int:
    hello = _read(req)
    if hello is None:
        return 0
    spec, path, memory, *rest = pickle.loads(hello)
    sys.path[:] = list(path)
    if rest and rest[0] == "runtime":
        from prunecheck.sim.subjects.runtime_worker import serve_runtime

        return serve_runtime(req, resp, spec, memory, _limit_memory)
    from prunecheck.model.actions import proposal_from
    from prunecheck.model.errors import PolicyError
    from prunecheck.model.policies import ContextView
    from prunecheck.sim.subjects.loader import load_local

    already = set(sys.modules)
    try:
        policy = load_local(spec)
    except PolicyError as exc:
        _write(resp, _error(exc.subject, exc.rule, exc.hint))
        return 0
    except BaseException as exc:
        _write(resp, _raised(exc, f"importing the policy of {spec!r}"))
        return 0
    try:  # a name or format property is user code too
        fmt = getattr(policy, "format", None)
        name = str(policy.name)
        value = getattr(fmt, "value", None)
    except BaseException as exc:
        _write(resp, _raised(exc, f"reading the name of the policy of {spec!r}"))
        return 0
    from prunecheck.sim.subjects.cage_state import StateProbe, user_modules

    probe: StateProbe | None = StateProbe(policy, user_modules(already))
    _write(resp, {"name": name, "format": value if isinstance(value, str) else None})
    _limit_memory(memory)
    anything = _Anything()
    from dataclasses import fields
    from operator import attrgetter

    from prunecheck.model.context import Message

    look = attrgetter(*(f.name for f in fields(Message)))
    held: dict[str, Any] = {}  # the messages of the last call, by id
    while True:
        request = _read(req)
        if request is None:
            return 0
        delta, pending, budget, used, now, turn, need = pickle.loads(request)
        messages = tuple(held[m] if isinstance(m, str) else m for m in delta)
        held = {m.id: m for m in messages}
        view = ContextView.__new__(ContextView)
        view.messages, view.pending_calls, view.budget = messages, pending, budget
        view.used, view.now, view.turn = used, now, turn
        before = [look(m) for m in messages]
        seen = (messages, pending, budget, used, now, turn)
        try:
            proposal = proposal_from(policy.select(view, need), anything, name, 0)
            changed = _rewritten(messages, before, look) or _view_rewritten(view, seen)
            if changed:
                held = {}  # its copies are spoilt: the parent sends whole messages again
                raise PolicyError(
                    name,
                    f"select(view, need={need}) rewrote {changed} it was given; a policy "
                    "proposes, it never changes the context it is shown.",
                    "return the ids (or actions) to free; build new objects instead of "
                    "changing the ones in the view (object.__setattr__ included).",
                )
            answer: dict[str, Any] = {
                "evict": list(proposal.evict),
                "clear": list(proposal.clear),
                "summarize": [
                    [list(g.message_ids), g.tokens, str(g.text)] for g in proposal.summarize
                ],
            }
        except PolicyError as exc:
            answer = {"raised": {"rule": exc.rule, "hint": exc.hint}}
        except BaseException as exc:
            answer = _raised(exc, f"select(view, need={need})")
        if probe is not None and probe.changed():
            probe = None  # stateful for good: the parent asks every question from now on
        if probe is None:
            answer["stateful"] = True
        try:
            _write(resp, answer)
        except MemoryError:
            _write(
                resp,
                {
                    "raised": {
                        "rule": "returned more than the worker could encode "
                        "within its memory limit.",
                        "hint": "",
                    }
                },
            )


def main(argv: list[str]) -> int:
    """Serve one policy (or runtime) until the parent closes the request pipe.

    Nothing of the worker's own reaches the user's terminal as a traceback:
    a failure outside the user's code ends the worker with status 70, which
    the parent reports as that policy's error.
    """
    _end_group_with_parent()
    req, resp = int(argv[0]), int(argv[1])
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - the policy's stdin
    try:
        status = _serve(req, resp)
    except BaseException:
        status = 70
    _end_group()
    return status


def _end_group_with_parent() -> None:
    """When the parent dies (a forked placement ends with ``os._exit``, or
    prunecheck is killed), Linux sends this worker SIGTERM, and the worker
    stops its whole process group (elsewhere: :func:`die_with_parent`'s no-op;
    the pipe's end of file ends the group then)."""
    import signal

    def on_parent_death(signum: int, frame: object) -> None:
        _end_group()
        os._exit(0)

    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        signal.signal(signal.SIGTERM, on_parent_death)
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError, ValueError):
        die_with_parent()


def _end_group() -> None:
    """Stop every process the policy started that is still in this worker's
    process group (the worker leads it): a parent that ends without closing
    its workers (a forked placement exits with ``os._exit``) closes their
    pipes, and nothing a policy forked outlives the command.  The worker
    itself ends with its own status."""
    import signal

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BaseException):
            stream.flush()
    me = os.getpid()
    if os.getpgrp() != me:  # never a group it does not lead
        return
    for _ in range(3):  # a member may fork while it is stopped
        members = _members(me)
        if not members:
            return
        for pid in members:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def _members(group: int) -> list[int]:
    """The processes of process group ``group`` but this one (from /proc)."""
    out: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return out
    me = os.getpid()
    for entry in entries:
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and fields[0] != b"Z" and int(fields[2]) == group:
            out.append(int(entry))
    return out


if __name__ == "__main__":
    os._exit(main(sys.argv[1:]))

"""User runtimes under test run in a cage, like user policies.

A ``runtime:FILE.py:CLASS`` (or ``runtime:module:CLASS``) spec never runs
the user's runtime inside prunecheck's process: :func:`caged_runtime` gives
a :class:`CagedRuntimeSystem` (a
:class:`~prunecheck.sim.subjects.runtimes.judged.JudgedSystem`, what the drivers
drive) whose factory builds a :class:`CagedRuntime`, a stand-in that
implements the :class:`~prunecheck.runtime.RuntimeUnderTest` protocol
(``feed``, ``request``, ``executions``, and ``costs``, ``advance``,
``copy``, ``state_key`` when the runtime has them) by forwarding every call
to one worker process (:mod:`.runtime_worker`) that holds the real
instances.  So whatever a runtime does —

- exit (``sys.exit``, ``os._exit``), raise any ``BaseException``
  (``KeyboardInterrupt`` included), crash,
- hang in any method (the watchdog stops it after ``--policy-timeout``, or
  when ``--time-limit`` runs out),
- return garbage from ``request()``, ``executions()`` or ``costs()``,
- change directory, fork children (its process group is stopped with it),

— prunecheck reports it as that runtime's :class:`PolicyError` (one
paragraph naming the runtime, the method and the step), never as a verdict
and never as a traceback.  A worker that hung or died stays dead: later
calls fail at once with the first failure's words.
"""

from __future__ import annotations

import copy
import itertools
import json
import pickle
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.errors import PolicyError, PolicyTimeout
from prunecheck.sim.subjects.cage import Dead, Worker, call_limit, worker_for
from prunecheck.sim.subjects.runtimes.judged import JudgedSystem
from prunecheck.sim.subjects.runtimes.stimuli import Execution, Rejected, RuntimeUnderTest, Stimulus

__all__ = ["CagedRuntime", "CagedRuntimeSystem", "caged_runtime"]

_HINT = "return what prunecheck.runtime.RuntimeUnderTest asks for."
_ROLES = ("system", "user", "assistant", "tool", "developer")


#: Instance handles, unique in this process: every system loaded from one
#: spec shares the spec's worker, so two hosts numbering their instances
#: each from 1 would replace each other's instances there.
_HANDLES = itertools.count(1)


@dataclass(slots=True)
class _Host:
    """What the stand-ins of one runtime spec share: its worker and handles."""

    spec: str
    timeout: float
    worker: Worker | None = None
    handles: itertools.count[int] = field(default_factory=lambda: _HANDLES)
    dropped: list[int] = field(default_factory=list)

    def call(self, op: str, handle: int, arg: object, what: str) -> dict[str, Any]:
        """One call into the worker; PolicyError naming ``what`` if the
        runtime raised, hung, died or answered garbage."""
        worker = self.worker or worker_for(self.spec, "runtime")
        self.worker = worker
        subject = f"runtime {self.spec!r}"
        with worker.lock:
            if worker.failure is not None:
                raise copy.copy(worker.failure)  # the first failure's words
            drops, self.dropped[:] = list(self.dropped), []
            wait, by_time_limit = call_limit(self.timeout)
            try:
                worker.send(pickle.dumps((op, handle, arg, drops), pickle.HIGHEST_PROTOCOL))
                answer = worker.receive(wait)
            except TimeoutError:
                worker.stop()
                within = (
                    f"before --time-limit ran out ({wait:.2g} s left)"
                    if by_time_limit
                    else f"within {self.timeout:g} s"
                )
                worker.failure = PolicyTimeout(
                    subject,
                    f"{what} did not return {within}; its process was stopped, so later "
                    "calls fail at once.",
                    "make the runtime answer faster or raise --policy-timeout.",
                )
                raise copy.copy(worker.failure) from None
            except Dead:
                worker.failure = PolicyError(
                    subject,
                    f"{what} did not return: {worker.how_it_ended()}; later calls fail at once.",
                    "a runtime must return from every call, never end the process.",
                )
                worker.close()
                raise copy.copy(worker.failure) from None
            except PolicyError as exc:  # an oversized or malformed answer
                worker.failure = PolicyError(subject, exc.rule, exc.hint)
                raise copy.copy(worker.failure) from None
        for key in ("raised", "garbage"):
            if key in answer:
                told = answer[key]
                if not isinstance(told, Mapping):
                    raise PolicyError(subject, f"{what}: its worker sent a malformed answer.")
                raise PolicyError(subject, str(told.get("rule", "failed.")), str(told.get("hint")))
        if "error" in answer:
            told = answer["error"]
            raise PolicyError(subject, str(told.get("rule", "failed.")), str(told.get("hint")))
        return answer

    def failed_for_good(self) -> bool:
        return self.worker is not None and self.worker.failure is not None


@dataclass(frozen=True, slots=True)
class _Factory:
    """``make(config)`` of a caged runtime: a new instance in the worker."""

    host: _Host

    def __call__(self, config: RuntimeConfig) -> RuntimeUnderTest:
        handle = next(self.host.handles)
        answer = self.host.call("make", handle, (config.budget, config.hard_ceiling), "building it")
        has = answer.get("has")
        optional = frozenset(str(m) for m in has) if isinstance(has, list) else frozenset()
        kind = CopyableCagedRuntime if "copy" in optional else CagedRuntime
        return kind(self.host, handle, optional)


@dataclass(frozen=True, slots=True)
class CagedRuntimeSystem(JudgedSystem):
    """A caged runtime under test, judged against ground truth (see the
    module docs).

    Parameters
    ----------
    name : str
        The spec traces record (``runtime:FILE.py:CLASS``).
    make : RuntimeFactory
        Builds a stand-in, a new instance in the worker.
    timeout : float
        The time limit of one call into the runtime, in seconds.
    """

    timeout: float = 10.0

    def with_timeout(self, timeout: float) -> CagedRuntimeSystem:
        """This runtime with ``timeout`` seconds per call (its stand-ins
        share one worker, so the last limit given holds for all)."""
        assert isinstance(self.make, _Factory)
        self.make.host.timeout = timeout
        return replace(self, timeout=timeout)

    def failed_for_good(self) -> bool:
        """Whether its worker hung or died: every later call fails at once."""
        assert isinstance(self.make, _Factory)
        return self.make.host.failed_for_good()


def caged_runtime(spec: str, timeout: float = 10.0) -> CagedRuntimeSystem:
    """The runtime ``spec`` (``runtime:FILE.py:CLASS``) names, loaded in its
    own worker process.

    Raises
    ------
    PolicyError
        if the spec cannot be loaded, or importing it exits, crashes or hangs.
    """
    host = _Host(spec, timeout)
    host.worker = worker_for(spec, "runtime", fresh=True)
    return CagedRuntimeSystem(spec, _Factory(host), timeout)


def _describe(stimulus: Stimulus | Rejected) -> str:
    """``feed(result c2)``: the stimulus's kind and what it concerns."""
    if isinstance(stimulus, Rejected):
        return f"feed(Rejected {stimulus.status})"
    return f"feed({' '.join(filter(None, (stimulus.kind, stimulus.id)))})"


class CagedRuntime:
    """A stand-in for one runtime instance in the worker (see the module
    docs).  What it reads back is checked here: a request is a list of
    message dicts with a string ``role``, executions are Executions, costs
    map names to whole numbers."""

    __slots__ = ("__weakref__", "_cache", "_handle", "_host", "_optional")

    def __init__(self, host: _Host, handle: int, optional: frozenset[str]) -> None:
        self._host, self._handle, self._optional = host, handle, optional
        self._cache: tuple[list[dict[str, Any]], list[Execution], dict[str, int] | None] | None
        self._cache = None

    def __del__(self) -> None:
        self._host.dropped.append(self._handle)

    def feed(self, stimulus: Stimulus | Rejected) -> None:
        self._cache = None
        self._host.call("feed", self._handle, stimulus, _describe(stimulus))

    def advance(self, at: float) -> None:
        if "advance" in self._optional:
            self._cache = None
            self._host.call("advance", self._handle, float(at), f"advance({at!r})")

    def request(self) -> Sequence[Mapping[str, Any]]:
        return self._read()[0]

    def executions(self) -> Sequence[Execution]:
        return self._read()[1]

    def costs(self) -> Mapping[str, int] | None:
        return self._read()[2]

    def state_key(self) -> object:
        if "state_key" not in self._optional:
            return None
        return self._host.call("key", self._handle, None, "state_key()").get("key")

    def _read(self) -> tuple[list[dict[str, Any]], list[Execution], dict[str, int] | None]:
        if self._cache is None:
            answer = self._host.call("read", self._handle, None, "request()")
            self._cache = (
                _request(answer.get("request"), self._host.spec),
                _executions(answer.get("executions"), self._host.spec),
                _costs(answer.get("costs"), self._host.spec),
            )
        return self._cache


class CopyableCagedRuntime(CagedRuntime):
    """A caged runtime whose real instance has ``copy()``."""

    __slots__ = ()

    def copy(self) -> CagedRuntime:
        handle = next(self._host.handles)
        self._host.call("copy", self._handle, handle, "copy()")
        return CopyableCagedRuntime(self._host, handle, self._optional)


def _bad(spec: str, what: str, rule: str) -> PolicyError:
    return PolicyError(f"runtime {spec!r}", f"{what} returned {rule}", _HINT)


def _request(value: object, spec: str) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise _bad(spec, "request()", "no message list.")
    for k, m in enumerate(value):
        if not isinstance(m, dict):
            kind = type(m).__name__
            raise _bad(
                spec, "request()", f"a value of type {kind} at index {k}, not a message dict."
            )
        role = m.get("role")
        if not isinstance(role, str) or role not in _ROLES:
            raise _bad(
                spec,
                "request()",
                f"a message at index {k} whose role is {json.dumps(role)[:60]}, not one of "
                f"{', '.join(_ROLES)} (OpenAI Chat Completions form).",
            )
        content = m.get("content")
        if not (content is None or isinstance(content, str | list)):
            raise _bad(spec, "request()", f"a message at index {k} whose content is not text.")
        calls = m.get("tool_calls")
        if calls is not None and not (
            isinstance(calls, list) and all(isinstance(c, dict) for c in calls)
        ):
            raise _bad(spec, "request()", f"a message at index {k} whose tool_calls is no list.")
    return value


def _executions(value: object, spec: str) -> list[Execution]:
    if not isinstance(value, list):
        raise _bad(spec, "executions()", "no list of executions.")
    out = []
    for k, e in enumerate(value):
        ok = (
            isinstance(e, dict)
            and all(isinstance(e.get(f), str) for f in ("call", "tool", "path", "effect"))
            and (e.get("retry_of") is None or isinstance(e.get("retry_of"), str))
            and isinstance(e.get("arguments"), dict)
        )
        if not ok:
            raise _bad(
                spec,
                "executions()",
                f"an execution at index {k} whose call, tool, path and effect are not all "
                "text (or whose arguments are not a mapping).",
            )
        out.append(
            Execution(e["call"], e["tool"], e["path"], e["effect"], e["retry_of"], e["arguments"])
        )
    return out


def _costs(value: object, spec: str) -> dict[str, int] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in value.values()
    ):
        raise _bad(spec, "costs()", "no mapping of names to whole numbers of 0 or more.")
    return value

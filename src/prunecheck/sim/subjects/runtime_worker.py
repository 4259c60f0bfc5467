"""The far side of a runtime's cage: a worker that builds a user's
:class:`~prunecheck.runtime.RuntimeUnderTest` and answers calls
into it over the pipe of :mod:`.cage_worker`.

Started by :mod:`.cage_worker` when its hello names a runtime.  The parent
(:mod:`.runtime_cage`) sends pickles ``(op, handle, argument, dropped)``;
the worker answers in JSON only.  One worker holds every runtime instance
the parent built or copied, by handle; ``dropped`` lists the handles the
parent no longer needs.

- ``make (budget, hard_ceiling)`` → ``{"has": [optional methods]}``
- ``feed stimulus`` / ``advance at`` → ``{}``
- ``read`` → ``{"request": [...], "executions": [...], "costs": {...} | null}``
- ``copy new_handle`` → ``{}``
- ``key`` → ``{"key": int | null}``

Whatever the runtime raises (any ``BaseException``) is answered as
``{"raised": {"rule", "hint"}}`` naming the method; what it returns is
converted to plain JSON here, and anything that is not (an object where a
message belongs, a set, a cycle) is answered as garbage, naming the method.
"""

from __future__ import annotations

import inspect
import math
import pickle
from collections.abc import Callable, Mapping
from typing import Any

from prunecheck.sim.subjects.cage_wire import raised, read_frame, write_frame

__all__ = ["OPTIONAL", "serve_runtime"]

#: The protocol's optional methods, forwarded when the runtime has them.
OPTIONAL = ("advance", "copy", "costs", "state_key")
_REQUIRED = ("feed", "request", "executions")
_EXECUTION_FIELDS = ("call", "tool", "path", "effect", "retry_of", "arguments")


class _Garbage(Exception):
    """What the runtime returned is not what the protocol asks for."""


def _garbage(what: str, rule: str) -> dict[str, Any]:
    return {
        "garbage": {
            "rule": f"{what} returned {rule}",
            "hint": "return what prunecheck.runtime.RuntimeUnderTest asks for.",
        }
    }


def _plain(value: object, depth: int = 0) -> object:
    """``value`` as plain JSON data (dicts with str keys, lists, scalars)."""
    if depth > 64:
        raise _Garbage("data nested over 64 levels deep")
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _Garbage(f"a number that is not finite ({value!r})")
        return float(value)
    if isinstance(value, Mapping):
        out: dict[str, object] = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise _Garbage(f"a mapping with {_a(type(k).__name__)} key ({k!r:.60})")
            out[k] = _plain(v, depth + 1)
        return out
    if isinstance(value, list | tuple):
        return [_plain(v, depth + 1) for v in value]
    raise _Garbage(f"{_a(type(value).__name__)} ({value!r:.60}) where JSON data belongs")


def _sequence(value: object, what: str) -> list[object]:
    if isinstance(value, str | bytes | Mapping) or not hasattr(value, "__iter__"):
        raise _Garbage(f"{_a(type(value).__name__)} ({value!r:.60}), not a list")
    return list(value)


def _execution(item: object, k: int) -> dict[str, object]:
    out: dict[str, object] = {}
    for name in _EXECUTION_FIELDS:
        if not hasattr(item, name):
            raise _Garbage(
                f"{_a(type(item).__name__)} ({item!r:.60}) at index {k}, not an Execution "
                f"(it has no {name!r})"
            )
        out[name] = _plain(getattr(item, name))
    return out


def _build(obj: Callable[..., Any], spec: str, budget: int, ceiling: int) -> Any:
    try:
        names = set(inspect.signature(obj).parameters)
    except (TypeError, ValueError):
        names = set()
    kwargs = {k: v for k, v in (("budget", budget), ("hard_ceiling", ceiling)) if k in names}
    return obj(**kwargs)


def _describe(stimulus: object) -> str:
    """``feed(ToolCalls m3)``: the call, naming the stimulus."""
    name = type(stimulus).__name__
    for attr in ("id", "call"):
        value = getattr(stimulus, attr, None)
        if isinstance(value, str):
            return f"feed({name} {value})"
    return f"feed({name})"


def _a(word: str) -> str:
    return ("an " if word[:1].lower() in "aeiou" else "a ") + word


def _missing(runtime: object) -> str | None:
    for method in _REQUIRED:
        if not callable(getattr(runtime, method, None)):
            return method
    return None


def _serve_one(runtimes: dict[int, Any], obj: Any, spec: str, call: tuple[Any, ...]) -> Any:
    op, handle, arg, _dropped = call
    if op == "make":
        what = "building it"
        try:
            runtime = _build(obj, spec, *arg)
        except BaseException as exc:
            return raised(exc, what, "runtime")
        missing = _missing(runtime)
        if missing:
            return {
                "error": {
                    "subject": f"runtime {spec!r}",
                    "rule": f"has no {missing}() method.",
                    "hint": "implement prunecheck.runtime.RuntimeUnderTest.",
                }
            }
        runtimes[handle] = runtime
        return {"has": [m for m in OPTIONAL if callable(getattr(runtime, m, None))]}
    runtime = runtimes[handle]
    if op == "feed":
        what = _describe(arg)
        try:
            runtime.feed(arg)
        except BaseException as exc:
            return raised(exc, what, "runtime")
        return {}
    if op == "advance":
        try:
            runtime.advance(arg)
        except BaseException as exc:
            return raised(exc, f"advance({arg!r})", "runtime")
        return {}
    if op == "copy":
        try:
            twin = runtime.copy()
        except BaseException as exc:
            return raised(exc, "copy()", "runtime")
        if _missing(twin):
            return _garbage("copy()", f"{_a(type(twin).__name__)}, not a runtime.")
        runtimes[arg] = twin
        return {}
    if op == "key":
        try:
            return {"key": hash(runtime.state_key())}
        except BaseException as exc:
            return raised(exc, "state_key()", "runtime")
    return _read(runtime)


def _read(runtime: Any) -> dict[str, Any]:
    """What the judge reads after a stimulus: request, executions, costs."""
    answer: dict[str, Any] = {}
    for what in ("request()", "executions()", "costs()"):
        method = getattr(runtime, what[:-2], None)
        if what == "costs()" and not callable(method):
            answer["costs"] = None
            continue
        try:
            value = method()  # type: ignore[misc]
            if what == "request()":
                answer["request"] = [_plain(m) for m in _sequence(value, what)]
            elif what == "executions()":
                items = _sequence(value, what)
                answer["executions"] = [_execution(e, k) for k, e in enumerate(items)]
            else:
                answer["costs"] = None if value is None else _plain(value)
        except _Garbage as exc:
            return _garbage(what, f"{exc}.")
        except BaseException as exc:
            return raised(exc, what, "runtime")
    return answer


def serve_runtime(
    req: int, resp: int, spec: str, memory: int, limit_memory: Callable[[int], None]
) -> int:
    """Load the runtime ``spec`` names and serve calls into it until the
    parent closes the request pipe."""
    from prunecheck.model.errors import PolicyError
    from prunecheck.sim.subjects.policy_spec import parse_spec
    from prunecheck.sim.subjects.user_code import find_object

    subject = f"runtime spec {spec!r}"
    try:
        parsed = parse_spec(spec)
        obj = find_object(parsed.where or "", parsed.attr or "", subject)
    except PolicyError as exc:
        write_frame(resp, {"error": {"subject": exc.subject, "rule": exc.rule, "hint": exc.hint}})
        return 0
    except BaseException as exc:
        write_frame(resp, raised(exc, f"importing the runtime of {spec!r}", "runtime"))
        return 0
    if not callable(obj):
        rule = f"names a {type(obj).__name__}, not a class or factory."
        hint = "point it at your RuntimeUnderTest class."
        write_frame(resp, {"error": {"subject": subject, "rule": rule, "hint": hint}})
        return 0
    write_frame(resp, {"name": spec})
    limit_memory(memory)
    runtimes: dict[int, Any] = {}
    while True:
        frame = read_frame(req)
        if frame is None:
            return 0
        call = pickle.loads(frame)
        for handle in call[3]:
            runtimes.pop(handle, None)
        try:
            answer = _serve_one(runtimes, obj, spec, call)
            write_frame(resp, answer)
        except MemoryError:
            write_frame(resp, _garbage(str(call[0]), "more than its worker could encode."))

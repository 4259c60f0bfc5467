"""Resolving policy specs to code, and guarding calls into user code.

A spec is a built-in name (lowest_salience), module:attr or
path/to/file.py:attr.  attr is a callable select(view, need), an object
with a select method (and optional name), or a class with one
(instantiated with no arguments).

load_policy is the one place policies are loaded: built-ins run
in-process; everything else (a user's module or file, list functions, the
LangChain adapter) runs in its own worker process (see prunecheck.sim.adapters.cage),
so that nothing it does can stop, fool or hang prunecheck.  load_local
loads a spec in the calling process (the worker uses it).

guarded gives a policy a per-call time limit, so that a policy that hangs
becomes a PolicyError naming the policy and the step, not a hung run.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import signal
import sys
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from prunecheck.model.actions import Action
from prunecheck.model.errors import PolicyError
from prunecheck.model.policies import BUILTINS, ContextView, Policy, as_policy, builtin_policy
from prunecheck.sim.adapters.cage import CagedPolicy, cage_enabled, caged

__all__ = ["DEFAULT_TIMEOUT", "GuardedPolicy", "guarded", "load_local", "load_policy",
           "resolve_attribute"]

#: Seconds one ``select`` call may take before it counts as hung.
DEFAULT_TIMEOUT = 10.0

_BUILTIN_TYPES = frozenset(type(make()) for make in BUILTINS.values())

#: How to say a list function's format, on every command that takes a policy.
FORMAT_HINT = ("say which provider format its messages use: add --format openai or "
               "--format anthropic to the command (or end the spec with @openai or @anthropic).")


def load_policy(spec: str) -> Policy:
    """The policy a spec names: a built-in in-process, anything else caged
    in its own worker process.

    Raises
    ------
    PolicyError
        if the spec is malformed, the module or file cannot be imported, or
        the attribute is missing or not a policy.
    """
    if spec.startswith("runtime:"):  # a runtime under test, in the place of a policy
        from prunecheck.sim.runtimes.under_test import load_runtime

        return load_runtime(spec)
    builtin = builtin_policy(spec)
    if builtin is not None:
        return builtin
    if not cage_enabled():
        return load_local(spec)
    if ":" not in spec:
        _malformed(spec)
    return caged(spec, DEFAULT_TIMEOUT)


def _malformed(spec: str) -> None:
    raise PolicyError(
        f"policy spec {spec!r}",
        "is neither a built-in policy nor of the form module:attr or file.py:attr.",
        f"built-ins: {', '.join(BUILTINS)}; run 'prunecheck policies' to list them.",
    )


def load_local(spec: str) -> Policy:
    """The policy a spec names, loaded in this process (no cage).

    Raises
    ------
    PolicyError
        as :func:`load_policy`.
    """
    builtin = builtin_policy(spec)
    if builtin is not None:
        return builtin
    from prunecheck.sim.adapters.lists import (
        adapter_policy,  # list functions: file.py:trim@openai, langchain:...
    )

    adapted = adapter_policy(spec)
    if adapted is not None:
        return adapted
    obj, attr = resolve_attribute(spec)
    if _is_list_function(obj):
        raise PolicyError(f"policy spec {spec!r}", f"{attr} takes one argument, like a list "
                          "function trim(messages), not a policy select(view, need).",
                          FORMAT_HINT)
    try:
        return as_policy(obj, attr)
    except TypeError:
        raise PolicyError(f"policy spec {spec!r}", f"{attr} is {type(obj).__name__}, neither a "
                          "callable select(view, need) nor an object with a select method.",
                          "point the spec at your select function or policy object.") from None
    except Exception as exc:
        raise PolicyError(f"policy spec {spec!r}", f"instantiating {attr} raised "
                          f"{type(exc).__name__}: {exc}.") from None


def _is_list_function(obj: object) -> bool:
    """A plain function of one positional parameter (trim(messages))."""
    if isinstance(obj, type) or hasattr(obj, "select") or not callable(obj):
        return False
    try:
        params = inspect.signature(obj).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    variadic = any(p.kind is p.VAR_POSITIONAL for p in params)
    return len(positional) == 1 and not variadic


def resolve_attribute(spec: str) -> tuple[object, str]:
    """``(object, attr)`` that ``module:attr`` or ``file.py:attr`` names.

    Raises
    ------
    PolicyError
        if the spec is malformed, cannot be imported, or lacks the attribute.
    """
    if ":" not in spec:
        _malformed(spec)
    where, _, attr = spec.rpartition(":")
    if not where or not attr:
        raise PolicyError(f"policy spec {spec!r}", "needs both a module (or file) and an "
                          "attribute, as module:attr.", "for example mypkg.trim:select.")
    module = _import(where, spec)
    obj: object = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise PolicyError(f"policy spec {spec!r}", f"{where} has no attribute {attr!r}.",
                              "check the name after the colon.")
        obj = getattr(obj, part)
    return obj, attr


def _import(where: str, spec: str) -> object:
    if where.endswith(".py") or "/" in where or "\\" in where:
        path = Path(where)
        if not path.is_file():
            raise PolicyError(f"policy spec {spec!r}", f"file {where} does not exist.",
                              "give a path relative to the current directory.")
        name = f"prunecheck_user_{abs(hash(str(path.resolve())))}"
        if name in sys.modules:
            return sys.modules[name]
        loader_spec = importlib.util.spec_from_file_location(name, path)
        if loader_spec is None or loader_spec.loader is None:
            raise PolicyError(f"policy spec {spec!r}", f"{where} cannot be imported as Python.")
        module = importlib.util.module_from_spec(loader_spec)
        folder = str(path.resolve().parent)
        if folder not in sys.path:  # as 'python FILE' does: its siblings import
            sys.path.insert(0, folder)
        sys.modules[name] = module
        try:
            loader_spec.loader.exec_module(module)
        except Exception as exc:
            del sys.modules[name]
            raise PolicyError(f"policy spec {spec!r}", f"importing {where} raised "
                              f"{type(exc).__name__}: {exc}.", "fix the file so that "
                              "'python FILE' runs.") from None
        return module
    try:
        return importlib.import_module(where)
    except ImportError as exc:
        raise PolicyError(f"policy spec {spec!r}", f"module {where!r} cannot be imported "
                          f"({exc}).", "is it installed, or is the current directory on "
                          "PYTHONPATH? A file path (my_policy.py:select) also works.") from None
    except Exception as exc:
        raise PolicyError(f"policy spec {spec!r}", f"importing {where} raised "
                          f"{type(exc).__name__}: {exc}.") from None


class _Timeout(BaseException):
    """Raised inside a hung policy by the alarm; never escapes :func:`_limit`."""


@contextmanager
def _limit(seconds: float) -> Iterator[None]:
    """Interrupt the block after ``seconds`` with :class:`_Timeout` (main
    thread only; elsewhere the block runs unguarded)."""
    if seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_alarm(signum: int, frame: FrameType | None) -> None:
        raise _Timeout

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass(frozen=True, slots=True)
class GuardedPolicy:
    """A policy whose every ``select`` call has a time limit; the result is
    materialized inside the limit (a lazy generator cannot hang later)."""

    inner: Policy
    timeout: float
    name: str

    def select(self, view: ContextView, need: int) -> Iterable[str | Action]:
        try:
            with _limit(self.timeout):
                result = self.inner.select(view, need)
                if isinstance(result, str | bytes | dict) or not isinstance(result, Iterable):
                    return result
                return list(result)
        except _Timeout:
            raise PolicyError(
                f"policy {self.name!r}",
                f"select(view, need={need}) did not return within {self.timeout:g} s "
                f"(context of {len(view.messages)} messages).",
                "make select() faster or raise --policy-timeout.",
            ) from None


def guarded(policy: Policy, timeout: float = DEFAULT_TIMEOUT) -> Policy:
    """``policy`` with a per-call time limit of ``timeout`` seconds (a caged
    policy's watchdog gets the limit; built-ins are returned as they are)."""
    if timeout <= 0:
        return policy
    if isinstance(policy, CagedPolicy):
        return policy.with_timeout(timeout)
    if type(policy) in _BUILTIN_TYPES:  # trusted and fast: no guard
        return policy
    return GuardedPolicy(policy, timeout, getattr(policy, "name", "policy"))

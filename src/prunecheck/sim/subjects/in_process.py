"""User code run in prunecheck's own process (``PRUNECHECK_CAGE=0``, for a
debugger) prints where a caged one would: on standard error.

Caged, a policy's or runtime's standard output *is* prunecheck's standard
error, so whatever it prints never mixes with prunecheck's own output (a
``--json`` document above all).  In-process, :func:`quiet` gives the same
while it loads and during each call: ``sys.stdout`` is ``sys.stderr``, and
file descriptor 1 (``os.write(1, ...)``, ``sys.__stdout__``, a child
process it starts) is a copy of descriptor 2.  :class:`InProcessPolicy`
and :class:`InProcessRuntime` wrap what was loaded so that every call runs
so.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from prunecheck.model.actions import Action
from prunecheck.model.errors import PolicyError
from prunecheck.model.policies import ContextView, Policy
from prunecheck.sim.subjects.cage_wire import raised, where_raised

__all__ = ["InProcessPolicy", "InProcessRuntime", "quiet"]


def _flush() -> None:
    for stream in (sys.stdout, sys.__stdout__):
        with contextlib.suppress(Exception):
            if stream is not None:
                stream.flush()


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Send what the block prints, by any means, to standard error."""
    _flush()
    try:
        saved: int | None = os.dup(1)
        os.dup2(2, 1)
    except OSError:  # a closed descriptor: the Python-level redirection only
        saved = None
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        _flush()
        if saved is not None:
            os.dup2(saved, 1)
            os.close(saved)


class InProcessPolicy:
    """A user policy run in-process, its output on stderr (see the module
    docs); every other attribute is the policy's own."""

    __slots__ = ("inner", "name")

    def __init__(self, inner: Policy) -> None:
        self.inner = inner
        self.name: str = inner.name

    def select(self, view: ContextView, need: int) -> Iterable[str | Action]:
        try:
            with quiet():
                result = self.inner.select(view, need)
                if isinstance(result, str | bytes | dict) or not isinstance(result, Iterable):
                    return result
                return list(result)  # a generator runs here, inside the redirection
        except PolicyError:
            raise
        except (Exception, SystemExit, GeneratorExit) as exc:  # as the model words it
            said = f"called sys.exit({exc.code!r})" if isinstance(exc, SystemExit) else ""
            raise PolicyError(
                f"policy {self.name!r}",
                f"select(view, need={need}) "
                + (said or f"raised {type(exc).__name__}: {exc}{where_raised(exc)}")
                + ".",
                "fix the policy; prunecheck records this as a policy error for the run.",
            ) from exc

    def __getattr__(self, attr: str) -> Any:
        if attr in ("inner", "name") or attr.startswith("__"):  # not set yet (a copy)
            raise AttributeError(attr)
        return getattr(self.inner, attr)


class InProcessRuntime:
    """A user's runtime instance run in-process, its output on stderr; every
    method call runs inside :func:`quiet` (a copy it returns is wrapped too)."""

    __slots__ = ("_inner", "_spec")

    def __init__(self, inner: object, spec: str) -> None:
        self._inner, self._spec = inner, spec

    def __getattr__(self, attr: str) -> Any:
        if attr in ("_inner", "_spec") or attr.startswith("__"):  # not set yet (a copy)
            raise AttributeError(attr)
        value = getattr(self._inner, attr)
        if not callable(value):
            return value
        return _quietly(value, attr, self._spec, type(self._inner))


def _quietly(method: Callable[..., Any], name: str, spec: str, kind: type) -> Callable[..., Any]:
    """``method`` run inside :func:`quiet`; what it raises is the runtime's
    :class:`PolicyError`, in the words of a caged runtime's."""

    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            with quiet():
                result = method(*args, **kwargs)
        except PolicyError:
            raise
        except (Exception, SystemExit, GeneratorExit) as exc:
            what = _call(name, args)
            raise PolicyError(
                f"runtime {spec!r}", **raised(exc, what, "runtime")["raised"]
            ) from exc
        return InProcessRuntime(result, spec) if isinstance(result, kind) else result

    return call


def _call(name: str, args: tuple[Any, ...]) -> str:
    """``feed(Stimulus m3)``: the method and, for ``feed``, what it was fed."""
    if name == "feed" and args:
        stimulus = args[0]
        what = " ".join(
            str(v)
            for v in (type(stimulus).__name__, getattr(stimulus, "id", None))
            if isinstance(v, str) and v
        )
        return f"feed({what})"
    return f"{name}()"

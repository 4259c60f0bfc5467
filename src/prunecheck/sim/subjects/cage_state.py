"""What a caged policy can remember between calls, as bytes: the proof the
cage's answer memo needs.

The cage (:mod:`.cage`) answers a question it was asked before from memory
only while the policy is a pure function of its view.  Its worker
(:mod:`.cage_worker`) proves that call by call: after each ``select`` it takes
a :class:`StateProbe` snapshot of everything the policy can keep state in —

- the policy object (its fields; a function's closure cells, defaults and
  attributes; a class's own attributes),
- the globals of the user's modules (the policy's file or module and every
  module imported with it from outside the standard library, the installed
  packages and prunecheck),
- the draws of :mod:`random` (and of ``numpy.random`` when it is loaded) —

and compares it with the snapshot after the call before.  The first time
they differ (a counter moved, a cache filled, a random draw was taken), or
when a snapshot cannot be taken (something in it cannot be pickled, or it
is larger than :data:`MAX_STATE` bytes), the policy is *stateful* and the
memo is off for it for good: every later question is asked, as its runtime
would ask it.

>>> def select(view, need, calls=[]):
...     calls.append(need)
...     return []
>>> probe = StateProbe(select, [])
>>> probe.changed()
False
>>> _ = select(None, 1)
>>> probe.changed()
True
"""

from __future__ import annotations

import io
import os
import pickle
import random
import sys
import sysconfig
import types
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["MAX_STATE", "StateProbe", "user_modules"]

#: Bytes a snapshot may take; a policy with more state is not proven pure.
MAX_STATE = 1 << 20

#: The prunecheck package, as its modules' files name it (not resolved: in a
#: source checkout ``src/prunecheck/sim`` is a link to the top-level ``sim``).
_OWN = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_SKIP = (types.ModuleType, types.BuiltinFunctionType, types.MethodWrapperType)


def _library_roots() -> tuple[str, ...]:
    roots = {_OWN + os.sep, os.path.abspath(sys.prefix), os.path.abspath(sys.base_prefix)}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            roots |= {os.path.abspath(path), str(Path(path).resolve())}
    return tuple(sorted(roots))


def user_modules(before: Iterable[str]) -> list[types.ModuleType]:
    """The modules imported since ``before`` (names in :data:`sys.modules`)
    that are the user's: from a file outside the standard library, the
    installed packages and prunecheck (a policy file is imported under a
    ``prunecheck_user_`` name)."""
    seen = set(before)
    roots = _library_roots()
    out = []
    for name, module in list(sys.modules.items()):
        if name in seen or not isinstance(module, types.ModuleType):
            continue
        file = getattr(module, "__file__", None)
        if not isinstance(file, str):
            continue
        where = os.path.abspath(file)
        if name.startswith("prunecheck_user_") or not where.startswith(roots):
            out.append(module)
    return out


class _Pickler(pickle.Pickler):
    """Pickles state: a function as its closure, defaults and attributes, a
    user class as its own attributes, anything else shared (a module, a
    library class) as its name."""

    def __init__(self, out: io.BytesIO, user: frozenset[str]) -> None:
        super().__init__(out, protocol=pickle.HIGHEST_PROTOCOL)
        self.user = user
        self.seen: set[int] = set()

    def reducer_override(self, obj: Any) -> Any:
        if obj is _name:
            return NotImplemented
        if isinstance(obj, _SKIP):
            return _name, (getattr(obj, "__name__", "?"),)
        if isinstance(obj, types.FunctionType | types.MethodType | type):
            if id(obj) in self.seen:  # a cycle (a method's __class__ cell)
                return _name, (getattr(obj, "__qualname__", "?"),)
            self.seen.add(id(obj))
            return _name, (getattr(obj, "__qualname__", "?"), _parts(obj, self.user))
        return NotImplemented


def _name(*parts: object) -> object:  # never called: snapshots are not loaded
    return parts


def _parts(obj: Any, user: frozenset[str]) -> tuple[Any, ...]:
    if isinstance(obj, types.MethodType):
        return (obj.__self__, obj.__func__)
    if isinstance(obj, type):
        if obj.__module__ not in user:
            return ()
        return tuple(
            (k, v)
            for k, v in vars(obj).items()
            if not k.startswith("__") and not isinstance(v, property)
        )
    cells = tuple(c.cell_contents for c in obj.__closure__ or () if _filled(c))
    return (cells, obj.__defaults__, obj.__kwdefaults__, dict(vars(obj)))


def _filled(cell: types.CellType) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True


def _draws() -> object:
    """Where :mod:`random` (and ``numpy.random``, if loaded) stand."""
    numpy_random = sys.modules.get("numpy.random")
    if numpy_random is None:
        return random.getstate()
    try:
        _kind, keys, pos, *_rest = numpy_random.get_state()
        return random.getstate(), keys.tobytes(), pos
    except Exception:
        return random.getstate(), None


class StateProbe:
    """Snapshots of what ``policy`` and ``modules`` hold (see the module
    docs); :meth:`changed` says whether it moved since the last snapshot."""

    __slots__ = ("_last", "_modules", "_policy", "_user")

    def __init__(self, policy: object, modules: Iterable[types.ModuleType]) -> None:
        self._policy = policy
        self._modules = list(modules)
        self._user = frozenset(m.__name__ for m in self._modules)
        self._last = self._snapshot()

    def _snapshot(self) -> tuple[bytes, object] | None:
        state = (
            self._policy,
            [
                sorted(
                    ((k, v) for k, v in vars(m).items() if not k.startswith("__")),
                    key=lambda kv: kv[0],
                )
                for m in self._modules
            ],
        )
        out = io.BytesIO()
        try:
            _Pickler(out, self._user).dump(state)
        except Exception:  # cannot be pickled, or a user object's __reduce__ raised
            return None
        data = out.getvalue()
        return (data, _draws()) if len(data) <= MAX_STATE else None

    def changed(self) -> bool:
        """Whether the state moved since the last snapshot (or cannot be
        snapshotted: then the policy is not proven pure)."""
        now = self._snapshot()
        moved = now is None or now != self._last
        self._last = now
        return moved

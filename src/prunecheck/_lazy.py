"""One lazy-import helper for the packages that export their submodules' names.

A package whose ``__init__`` should stay cheap (``import prunecheck``,
``import prunecheck.model``) names each export's home module instead of
importing it; the first ``package.name`` imports the home and caches the
value in the package (PEP 562).  A name the package exported in an earlier
release may be listed as deprecated: it still resolves, from its home, with
the warning :mod:`prunecheck._deprecated` gives it.  A name the install
cannot give (one of the harness's, in the guard-only install) is refused as
the package wants: ``require`` is asked before the name's home is imported,
and raises the package's own error (one paragraph naming the extra to
install) instead of the raw :class:`ModuleNotFoundError` of whatever
import fails first, at import or at the first call.

Examples
--------
>>> import types
>>> demo = types.ModuleType("demo")
>>> demo.__getattr__, demo.__dir__ = lazy_exports("demo", {"dedent": "textwrap"})
>>> demo.dedent("  x")
'x'
>>> dir(demo)
['dedent']
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str,
    exports: Mapping[str, str],
    *,
    deprecated: Mapping[str, tuple[str, Warning]] | None = None,
    extra: Mapping[str, Callable[[], object]] | None = None,
    require: Callable[[str], None] | None = None,
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A module ``__getattr__`` and ``__dir__`` for ``package``.

    Parameters
    ----------
    package : str
        The package's ``__name__``; relative homes (``".actions"``) are
        resolved against it.
    exports : Mapping[str, str]
        Public name → the module that defines it.
    deprecated : Mapping[str, tuple[str, Warning]], optional
        Old name → (its home, the warning to give on each use).  Deprecated
        names are not cached (each use warns) and not listed by ``dir()``.
    extra : Mapping[str, Callable[[], object]], optional
        Public name → a function computing it on each use (e.g. the
        installed version).
    require : Callable[[str], None], optional
        Called with a public name of ``exports`` before its home is
        imported (once: the value is cached); raises if the install cannot
        give the name.

    Returns
    -------
    tuple[Callable[[str], Any], Callable[[], list[str]]]
        ``(__getattr__, __dir__)`` to assign in the package.
    """
    old = dict(deprecated or {})
    computed = dict(extra or {})

    def __getattr__(name: str) -> Any:
        if name in computed:
            return computed[name]()
        if name in exports:
            if require is not None:
                require(name)
            value = getattr(importlib.import_module(exports[name], package), name)
            module = sys.modules.get(package)
            if module is not None:
                vars(module)[name] = value
            return value
        if name in old:
            home, warning = old[name]
            warnings.warn(warning, stacklevel=2)
            return getattr(importlib.import_module(home, package), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted({*exports, *computed})

    return __getattr__, __dir__

"""prunecheck: check that a context-pruning policy never breaks the commit-boundary invariant.

The public Python API (imported lazily, so ``import prunecheck`` stays cheap)::

    from prunecheck import check_policy, assert_policy_safe, list_policy

    result = check_policy("my_trim.py:trim", format="openai")
    result.safe, result.reproduction, print(result.narrative)

``__version__`` is the installed distribution's version (``pyproject.toml``
is its one source), read on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__all__ = [
    "CheckResult",
    "UnsafePolicy",
    "Verdict",
    "__version__",
    "assert_policy_safe",
    "check_policy",
    "list_policy",
]

if TYPE_CHECKING:
    __version__: str

    from prunecheck.sim.adapters.lists import list_policy
    from prunecheck.sim.verdicts.check import (
        CheckResult,
        UnsafePolicy,
        Verdict,
        assert_policy_safe,
        check_policy,
    )

_LAZY = {
    "CheckResult": "prunecheck.sim.verdicts.check",
    "UnsafePolicy": "prunecheck.sim.verdicts.check",
    "Verdict": "prunecheck.sim.verdicts.check",
    "assert_policy_safe": "prunecheck.sim.verdicts.check",
    "check_policy": "prunecheck.sim.verdicts.check",
    "list_policy": "prunecheck.sim.adapters.lists",
}


def _installed_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("prunecheck")
    except PackageNotFoundError:
        return "unknown (not installed)"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        return _installed_version()
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'prunecheck' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted(__all__)

"""prunecheck: check that a context-pruning policy never breaks the commit-boundary invariant.

The public Python API (imported lazily, so ``import prunecheck`` stays cheap)::

    from prunecheck import check_policy, assert_policy_safe, list_policy

    result = check_policy("my_trim.py:trim", format="openai")
    result.safe, result.reproduction, print(result.narrative)

==========================  ===================================================
what                        names
==========================  ===================================================
check a policy              ``check_policy``, ``assert_policy_safe``
                            → ``CheckResult`` (``Verdict``; ``UnsafePolicy``
                            is what ``assert_policy_safe`` raises,
                            ``PrunecheckVacuousWarning`` what it warns of a
                            safe that exercised nothing)
the commands from Python    ``search_policy`` → ``SearchResult``,
                            ``explore_policy`` → ``ExploreResult``,
                            ``replay_trace`` → ``ReplayResult``,
                            ``baseline_policy`` → ``BaselineRun``,
                            ``regress_policy`` → ``RegressResult``,
                            ``validate_request`` → ``ProviderError`` tuple
make a policy               ``list_policy`` (a ``trim(messages)`` function),
                            ``framework_policy`` (a framework's trimmer)
check an agent loop         ``check_loop``, ``assert_loop_safe`` (``UnsafeLoop``),
                            ``search_loop``: a ``loop:`` spec or the agent itself
the documents they write    ``verdict_json``, ``verdict_junit``: a result as
                            ``check --json`` and ``--junit`` write it
what they take and give     ``RuntimeConfig`` (the runtime), ``Trace``
the version                 ``__version__``
==========================  ===================================================

These functions are the one orchestrator: ``prunecheck check``, ``search``,
``explore``, ``replay``, ``baseline``, ``regress`` and the pytest plugin
print what they return.  Each check and
search replays the failure database first and saves what it finds
(``failures=``: default ``$PRUNECHECK_FAILURES``, else
``.prunecheck/failures`` in the current folder; ``PRUNECHECK_FAILURES=off``
or ``failures=False`` for none), for policies and agent loops alike.

What a policy author imports is in :mod:`prunecheck.model`; the runtime-side
commit gate is :mod:`prunecheck.guard`; the pytest plugin is
:mod:`prunecheck.pytest_plugin`.  ``__version__`` is the installed
distribution's version (``pyproject.toml`` is its one source), read on use.

The base install (``pip install prunecheck``) is the commit guard alone: there
``validate_request``, ``ProviderError``, ``RuntimeConfig``, ``Trace`` and
``__version__`` work, and importing any other name raises a
:class:`ModuleNotFoundError` whose message is one paragraph naming the extra
to install (``pip install 'prunecheck[harness]'``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prunecheck._lazy import lazy_exports

if TYPE_CHECKING:
    __version__: str

    from prunecheck.model.config import RuntimeConfig
    from prunecheck.model.provider import ProviderError
    from prunecheck.model.trace import Trace
    from prunecheck.sim.api.check import UnsafePolicy, assert_policy_safe, check_policy
    from prunecheck.sim.api.export import verdict_json, verdict_junit
    from prunecheck.sim.api.loop_api import (
        UnsafeLoop,
        assert_loop_safe,
        check_loop,
        search_loop,
    )
    from prunecheck.sim.api.python_api import (
        ReplayResult,
        explore_policy,
        replay_trace,
        search_policy,
    )
    from prunecheck.sim.api.regress_api import (
        BaselineRun,
        RegressResult,
        baseline_policy,
        regress_policy,
    )
    from prunecheck.sim.api.requests import validate_request
    from prunecheck.sim.api.vacuity import PrunecheckVacuousWarning
    from prunecheck.sim.api.verdict import CheckResult, Verdict
    from prunecheck.sim.drivers.explore import ExploreResult
    from prunecheck.sim.drivers.search import SearchResult
    from prunecheck.sim.subjects.frameworks import framework_policy
    from prunecheck.sim.subjects.lists import list_policy

__all__ = [
    "BaselineRun",
    "CheckResult",
    "ExploreResult",
    "ProviderError",
    "PrunecheckVacuousWarning",
    "RegressResult",
    "ReplayResult",
    "RuntimeConfig",
    "SearchResult",
    "Trace",
    "UnsafeLoop",
    "UnsafePolicy",
    "Verdict",
    "__version__",
    "assert_loop_safe",
    "assert_policy_safe",
    "baseline_policy",
    "check_loop",
    "check_policy",
    "explore_policy",
    "framework_policy",
    "list_policy",
    "regress_policy",
    "replay_trace",
    "search_loop",
    "search_policy",
    "validate_request",
    "verdict_json",
    "verdict_junit",
]


def _installed_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("prunecheck")
    except PackageNotFoundError:
        return "unknown (not installed)"


#: What the base install (the commit guard alone) gives; every other name needs the harness.
_BASE = frozenset({"ProviderError", "RuntimeConfig", "Trace", "validate_request"})


def _require(name: str) -> None:
    """``prunecheck.NAME`` of the harness in an install without it: one
    paragraph naming the extra, at import, not a raw error at first use."""
    if name in _BASE:
        return
    from importlib.util import find_spec

    from prunecheck.sim.support.extras import EXTRAS, missing_paragraph

    for module, extra in EXTRAS.items():
        if extra == "harness" and find_spec(module) is None:
            raise ModuleNotFoundError(missing_paragraph(f"prunecheck.{name}", module), name=module)


_API = "prunecheck.sim.api.python_api"
_LOOPS = "prunecheck.sim.api.loop_api"
_REGRESS = "prunecheck.sim.api.regress_api"

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "BaselineRun": _REGRESS,
        "CheckResult": "prunecheck.sim.api.verdict",
        "ExploreResult": "prunecheck.sim.drivers.explore",
        "ProviderError": "prunecheck.model.provider",
        "PrunecheckVacuousWarning": "prunecheck.sim.api.vacuity",
        "RegressResult": _REGRESS,
        "ReplayResult": _API,
        "RuntimeConfig": "prunecheck.model.config",
        "SearchResult": "prunecheck.sim.drivers.search",
        "Trace": "prunecheck.model.trace",
        "UnsafeLoop": _LOOPS,
        "UnsafePolicy": "prunecheck.sim.api.check",
        "Verdict": "prunecheck.sim.api.verdict",
        "assert_loop_safe": _LOOPS,
        "assert_policy_safe": "prunecheck.sim.api.check",
        "baseline_policy": _REGRESS,
        "check_loop": _LOOPS,
        "check_policy": "prunecheck.sim.api.check",
        "explore_policy": _API,
        "framework_policy": "prunecheck.sim.subjects.frameworks",
        "list_policy": "prunecheck.sim.subjects.lists",
        "regress_policy": _REGRESS,
        "replay_trace": _API,
        "search_loop": _LOOPS,
        "search_policy": _API,
        "validate_request": "prunecheck.sim.api.requests",  # the base install has it
        "verdict_json": "prunecheck.sim.api.export",
        "verdict_junit": "prunecheck.sim.api.export",
    },
    extra={"__version__": _installed_version},
    require=_require,
)

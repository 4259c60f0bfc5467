"""prunecheck.model: the functional core, and what a policy author imports.

Plain data and free functions: contexts and their unit index, policies,
gates, the runtime step, provider rules, incidents and traces.  No SimPy,
no files, no clock; randomness only through a ``random.Random`` passed in.

The package exports what a policy author needs; everything else is imported
from the module that defines it.

=========================  ==============================================
what                       names
=========================  ==============================================
the view a policy reads    ``ContextView``, ``Message``, ``Role``
what it may return         ``Evict``, ``Clear``, ``Summarize`` (or plain ids)
the policy protocol        ``Policy``, ``as_policy``
the built-in policies      ``BUILTINS``, ``builtin_policy``
the errors                 ``PrunecheckError``, ``PolicyError``,
                           ``PolicyTimeout``, ``ConfigError``,
                           ``TraceError``, ``TranscriptError``
=========================  ==============================================

The runtime (:mod:`.config`, :mod:`.state`, :mod:`.runtime`), its events
(:mod:`.events`), traces (:mod:`.trace`), incidents (:mod:`.incidents`),
gates (:mod:`.gates`), providers (:mod:`.provider`) and the invariant's
checks (:mod:`.boundary`) are imported from their modules; the names of
them this package exported in 0.2.0 still resolve here, with a
:class:`~prunecheck._deprecated.RemovedIn040Warning`.

Submodules load on first use (:mod:`prunecheck._lazy`), so that
``import prunecheck.model.gates`` (what the runtime-side guard needs) does
not pull in the runtime, traces and provider rules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from prunecheck._deprecated import model_deprecations
from prunecheck._lazy import lazy_exports

if TYPE_CHECKING:
    from .actions import Clear, Evict, Summarize
    from .context import Message, Role
    from .errors import (
        ConfigError,
        PolicyError,
        PolicyTimeout,
        PrunecheckError,
        TraceError,
        TranscriptError,
    )
    from .policies import BUILTINS, ContextView, Policy, as_policy, builtin_policy

__all__ = [
    "BUILTINS",
    "Clear",
    "ConfigError",
    "ContextView",
    "Evict",
    "Message",
    "Policy",
    "PolicyError",
    "PolicyTimeout",
    "PrunecheckError",
    "Role",
    "Summarize",
    "TraceError",
    "TranscriptError",
    "as_policy",
    "builtin_policy",
]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "BUILTINS": ".policies",
        "Clear": ".actions",
        "ConfigError": ".errors",
        "ContextView": ".policies",
        "Evict": ".actions",
        "Message": ".context",
        "Policy": ".policies",
        "PolicyError": ".errors",
        "PolicyTimeout": ".errors",
        "PrunecheckError": ".errors",
        "Role": ".context",
        "Summarize": ".actions",
        "TraceError": ".errors",
        "TranscriptError": ".errors",
        "as_policy": ".policies",
        "builtin_policy": ".policies",
    },
    deprecated=model_deprecations(),
)

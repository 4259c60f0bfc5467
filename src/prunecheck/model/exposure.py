"""Exposure keys: the names under which a simulation counts what it saw, and
under which reports, baselines and tables look those counts up.

A key is an incident class (an :class:`~prunecheck.model.incidents.IncidentKind`
value, e.g. ``"orphaned_result"``), a provider rejection of one kind
(``"provider_rejection:result_without_call"``, see :func:`rejection_key`), or
``"any_violation"``: at least one violation of any class.  Every module that
names a key takes it from here, so a typo fails at import or in a test
instead of silently emptying a plot.

>>> ORPHAN_REJECTION
'provider_rejection:result_without_call'
>>> rejection_key("call_without_result") == UNANSWERED_REJECTION
True
>>> sorted(k for k in EXPOSURE_KEYS if k.startswith("provider"))  # doctest: +NORMALIZE_WHITESPACE
['provider_rejection', 'provider_rejection:call_out_of_place',
 'provider_rejection:call_without_result', 'provider_rejection:item_without_reasoning',
 'provider_rejection:reasoning_without_item', 'provider_rejection:result_without_call',
 'provider_rejection:tools_undeclared', 'provider_rejection:user_after_result',
 'provider_rejection:user_not_first']
"""

from __future__ import annotations

from typing import Final

from prunecheck.model.incidents import IncidentKind
from prunecheck.model.provider.vocabulary import (
    CALL_WITHOUT_RESULT,
    REJECTION_KINDS,
    RESULT_WITHOUT_CALL,
)

__all__ = [
    "ANY_VIOLATION",
    "EXPOSURE_KEYS",
    "ORPHAN_REJECTION",
    "UNANSWERED_REJECTION",
    "rejection_key",
]

#: The key of "at least one violation of any class".
ANY_VIOLATION: Final = "any_violation"


def rejection_key(kind: str) -> str:
    """The key of a provider rejection of one kind (a ``ProviderError.kind``,
    the ``reason`` of a rejection incident)."""
    return f"{IncidentKind.PROVIDER_REJECTION.value}:{kind}"


#: HTTP 400 for a tool result whose call is gone (the orphan 400).
ORPHAN_REJECTION: Final = rejection_key(RESULT_WITHOUT_CALL)
#: HTTP 400 for a tool call whose result is gone.
UNANSWERED_REJECTION: Final = rejection_key(CALL_WITHOUT_RESULT)

#: Every key a simulation can count.
EXPOSURE_KEYS: Final = frozenset(
    {kind.value for kind in IncidentKind}
    | {rejection_key(kind) for kind in REJECTION_KINDS}
    | {ANY_VIOLATION}
)

"""prunecheck.guard: the commit gate, runtime side.

A small library for the agent runtime itself: it imports only the standard
library and prunecheck's pure core (no SimPy, Hypothesis, networkx or
matplotlib).

* :class:`CommitGuard` — fed the runtime's events (message, calls issued,
  result chunk, result complete, stream opened / closed); at each budget
  check it defers while a call is pending or a message is open, grows or
  shrinks the trimmer's proposal to whole closed units, spills the oldest
  closed units to a :class:`SpillStore` past the hard ceiling and
  re-injects them when a later call names the same resource, and raises
  :class:`HardCeilingExceeded` when nothing safe is left.
* :class:`ListGuard` — the same, for runtimes that only hand over message
  lists (pending is inferred: a call without a result in the list).
* Integrations: :mod:`prunecheck.guard.langchain` (``CommitGuardMiddleware``)
  and :mod:`prunecheck.guard.autogen` (``GuardedChatCompletionContext``).

Example::

    guard = CommitGuard(my_trim, format="openai", budget=32_000,
                        hard_ceiling=40_000, store="spill.db")
    guard.message("m1", "user", 120, payload=msg)
    guard.calls("m2", ["c1", "c2"], 40, payload=call_msg, resources=["a.txt"])
    plan = guard.check()          # apply plan.remove / plan.clear to your list
"""

from prunecheck.model.actions import PLACEHOLDER_TOKENS

from .core import CommitGuard, GuardStats
from .errors import GuardError, HardCeilingExceeded
from .listmode import ListGuard
from .plan import Deferral, Plan, Restored, SummaryGroup
from .readers import READERS, Item, count_words, reader_for
from .store import SpilledMessage, SpilledUnit, SpillStore
from .trimmers import ListTrimmer, PolicyTrimmer, Trimmer, TrimView, as_trimmer

__all__ = [
    "PLACEHOLDER_TOKENS",
    "READERS",
    "CommitGuard",
    "Deferral",
    "GuardError",
    "GuardStats",
    "HardCeilingExceeded",
    "Item",
    "ListGuard",
    "ListTrimmer",
    "Plan",
    "PolicyTrimmer",
    "Restored",
    "SpillStore",
    "SpilledMessage",
    "SpilledUnit",
    "SummaryGroup",
    "TrimView",
    "Trimmer",
    "as_trimmer",
    "count_words",
    "reader_for",
]

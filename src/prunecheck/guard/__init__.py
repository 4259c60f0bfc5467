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
  :class:`HardCeilingExceeded` when nothing safe is left.  Given
  ``provider=`` (the provider(s) the runtime sends to: ``"gemini"``,
  ``"bedrock,gemini"``, a list), it previews each prune and spill against
  those providers' rules (:mod:`prunecheck.model.provider`, the validator's
  own rule objects) and refuses one that would leave a history a named
  provider rejects (``Deferral.PROVIDER_REJECTION``; ``Plan.rejections``
  names the rule, its verbatim text and request location).
* :class:`ListGuard` — the same, for runtimes that only hand over message
  lists (pending is inferred: a call without a result in the list).
* Integrations: :mod:`prunecheck.guard.langchain` (``CommitGuardMiddleware``)
  and :mod:`prunecheck.guard.autogen` (``GuardedChatCompletionContext``).

Example::

    guard = CommitGuard(my_trim, format="openai", budget=32_000,
                        hard_ceiling=40_000, store="spill.db", conversation="chat-42")
    guard.message("m1", "user", 120, payload=msg)
    guard.calls("m2", ["c1", "c2"], 40, payload=call_msg, resources=["a.txt"])
    guard.result_complete("c1", 300, mid="r1", payload=result_msg)  # plans name it "r1"
    plan = guard.check()          # apply plan.remove / plan.clear to your list

Ids: message ids are yours — non-empty strings, unique within a
conversation while the message is in the context or spilled.  A result is
tracked under the ``mid`` given with its first chunk (default
``"result:" + call_id``); a summary as ``"summary:" + first id replaced``.

Data.  The spill store holds conversation content: in the SQLite file named
by ``store=`` (with SQLite's ``-wal`` and ``-shm`` files beside it while it is
open), created readable by its owner only (:class:`SpillStore`'s ``mode=``);
``":memory:"`` keeps it in the process.  When a conversation is over,
``SpillStore(path).delete_conversation(conversation)`` deletes its units and
leaves nothing of them in the files.  Assign ``guard.trimmer`` at any time:
the next check asks the new one.

Guarantees
----------
What the guard promises (each a test in ``tests/test_guard*.py``):

1. **Never an orphan.**  A plan removes only whole, closed units with no
   pending call, never the system prompt or the latest user message; past
   the hard ceiling with nothing safe left it raises
   :class:`HardCeilingExceeded` instead of cutting live state.  With
   ``provider=``, a plan never leaves a history a named provider rejects
   unless the history it was given already broke that rule (then the
   plan adds no new rejection).
2. **A check is atomic.**  ``check()`` either returns (or raises
   :class:`HardCeilingExceeded` with) a plan whose spilled units are all
   committed to the store, or raises another :class:`GuardError` — a
   :class:`StoreError` (the store is locked past its busy timeout, full,
   read-only, corrupted, or a payload cannot be stored exactly) or the
   trimmer's error — and then nothing changed: not the guard's context, not
   the store, not your objects.  Every event method is atomic the same way.
3. **No unit lost to a crash.**  A spilled unit is committed (one SQLite
   transaction per check) before the plan that removes it is returned, and
   deleted only at the guard's next call after it came back, so after a
   crash or SIGKILL at any instant every unit is in your context, in the
   store, or in both.  With ``synchronous="FULL"`` (the default) a
   committed spill also survives power loss if the disk honours fsync;
   with ``"NORMAL"`` it survives a process crash.
4. **Each guard owns its units.**  Rows are keyed by ``conversation``;
   guards on one store — one object or one file, in threads, processes or
   asyncio (``await asyncio.to_thread(guard.check)``) — never see each
   other's units.  SQLite's concurrency: WAL, a busy timeout, one connection
   per thread and process.
5. **Payloads round-trip exactly, or are refused** when spilled (the
   default codec is JSON; a tuple, a non-string key, NaN or an object JSON
   would change is a :class:`StoreError` naming where it is).
6. **Malformed input is refused**, with a :class:`GuardError` naming the
   input and the rule: non-finite or negative token counts, ids that are
   not strings, a string where a list of ids belongs, a call twice in a
   batch, an event impossible in its unit's state, a list in another
   format than the one named.  A list-function trimmer gets copies: it
   cannot change your message objects.

What it does not promise: to detect a runtime that lies (events that did
not happen, a plan not applied, the same ``conversation`` given to two live
guards); to keep the units of a store file that is corrupted or deleted
(it reports the fault, it does not repair); durability on a disk that does
not honour fsync or with ``synchronous="NORMAL"`` on power loss; what
list-only inference cannot see (:mod:`.listmode`); safety of one guard
object called from two threads *at once* (call each guard from one thread
at a time — any thread).
"""

from __future__ import annotations

import warnings
from typing import Any

from .core import CommitGuard
from .errors import GuardError, HardCeilingExceeded, StoreError
from .listmode import ListGuard
from .plan import Deferral, Plan, Restored, SummaryGroup
from .store import SpillStore

__all__ = [
    "CommitGuard",
    "Deferral",
    "GuardError",
    "HardCeilingExceeded",
    "ListGuard",
    "Plan",
    "Restored",
    "SpillStore",
    "StoreError",
    "SummaryGroup",
]

#: Names once exported here, still importable (with a DeprecationWarning)
#: from the package, and without one from their modules.
_MOVED = {
    "PLACEHOLDER_TOKENS": "prunecheck.model.actions",
    "GuardStats": "prunecheck.guard.core",
    "READERS": "prunecheck.guard.readers",
    "Item": "prunecheck.guard.readers",
    "count_words": "prunecheck.guard.readers",
    "reader_for": "prunecheck.guard.readers",
    "SpilledMessage": "prunecheck.guard.store",
    "SpilledUnit": "prunecheck.guard.store",
    "ListTrimmer": "prunecheck.guard.trimmers",
    "PolicyTrimmer": "prunecheck.guard.trimmers",
    "TrimView": "prunecheck.guard.trimmers",
    "Trimmer": "prunecheck.guard.trimmers",
    "as_trimmer": "prunecheck.guard.trimmers",
}


def __getattr__(name: str) -> Any:
    module = _MOVED.get(name)
    if module is None:
        raise AttributeError(f"module 'prunecheck.guard' has no attribute {name!r}")
    from prunecheck._deprecated import RemovedIn040Warning

    warnings.warn(
        f"prunecheck.guard.{name} left the package's public names in 0.3 and goes in "
        f"0.4.0: import it from {module}",
        RemovedIn040Warning,
        stacklevel=2,
    )
    from importlib import import_module

    return getattr(import_module(module), name)

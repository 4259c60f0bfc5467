"""prunecheck.runtime: test your own runtime's real code.

Everything a runtime author needs, in one public place:

* :class:`RuntimeUnderTest` — the protocol your runtime (or a thin harness
  around it) implements: ``feed(stimulus)``, ``request()``,
  ``executions()``, and optionally ``costs()``, ``advance(at)``,
  ``copy()``, ``state_key()``;
* :class:`Stimulus` — one model event (:mod:`prunecheck.model.events`)
  rendered for your runtime: the event, the harness's id of what it
  concerns, its text and, for a batch, its :class:`Call` objects;
  :class:`Rejected` — the provider's 400 to your last request;
  :class:`Execution` — one tool execution you report; :func:`count_tokens`;
* :class:`System` — the protocol every driver (search, explore, the
  simulator, replay) drives, with :class:`Facts` and :class:`RequestBody`;
  its implementations :class:`JudgedSystem` (a runtime under test, judged
  against ground truth) and :class:`ModelSystem` (the model runtime with a
  policy).

Why a module of its own: the protocol lives with the harness
(:mod:`prunecheck.sim.subjects.runtimes.stimuli`) and the ``System`` with the model
(:mod:`prunecheck.model.system`), where their layers put them; a runtime
author should not have to know that, nor import from ``prunecheck.sim``.
Importing this module loads no simulator, search or plotting library.

Examples
--------
>>> from prunecheck.model.events import UserMessage
>>> from prunecheck.runtime import Stimulus
>>> Stimulus(UserMessage(2), "m1", "⟦m1⟧ hello").kind
'user'
"""

from __future__ import annotations

from prunecheck.model.model_system import ModelSystem
from prunecheck.model.system import Facts, RequestBody, System
from prunecheck.sim.subjects.runtimes.judged import JudgedSystem
from prunecheck.sim.subjects.runtimes.stimuli import (
    Call,
    Execution,
    Rejected,
    RuntimeUnderTest,
    Stimulus,
    count_tokens,
)

__all__ = [
    "Call",
    "Execution",
    "Facts",
    "JudgedSystem",
    "ModelSystem",
    "Rejected",
    "RequestBody",
    "RuntimeUnderTest",
    "Stimulus",
    "System",
    "count_tokens",
]

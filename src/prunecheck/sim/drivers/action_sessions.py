"""Sessions of a subject driven by its own actions: failure rates, not one counterexample.

The search (:mod:`.action_search`) hunts one failing action sequence and
shrinks it; this driver answers the other question a design review asks:
*how often* does a session of this subject end in a violation when the
environment behaves like production, and how does that change as faults get
more likely?  A session is one run of an :class:`~prunecheck.model.system.Actions`
subject, from ``start`` to its first violation or to its end (nothing
enabled, or the run's own bounds reached), its choices drawn from a seeded
``random.Random`` per session: the same seed and index give the same session,
byte for byte, and sessions are independent, so the session is the unit of
statistics (:mod:`prunecheck.sim.stats.sessions` turns counts into exact
intervals).

*Fault pressure* ``p`` (0 to 1) is how likely the environment is to choose a
fault when one is enabled beside ordinary actions: at each step, if any of
``faults`` (kinds such as ``fail``, ``timeout``, ``cancel``, ``crash``) is
enabled and something else is too, the step is drawn among all the enabled
kinds with probability ``p`` and among the others with ``1 - p``.  At 1 the
environment is the search's uniform one; at 0 no fault happens while the
subject can go on without one.  Nothing here knows what an action is.
"""

from __future__ import annotations

import random
from collections.abc import Collection
from dataclasses import dataclass

from prunecheck.model.errors import PrunecheckError
from prunecheck.model.system import A, Actions, S

__all__ = ["SessionRun", "run_session", "session_rng"]


@dataclass(frozen=True, slots=True)
class SessionRun:
    """One session.

    Attributes
    ----------
    steps : int
        Actions performed.
    requests : int
        Requests the subject sent its model.
    faults : int
        Actions of a fault kind performed.
    violations : tuple[str, ...]
        The violation kinds of the step that ended it (sorted; empty: none).
    first_violation : int or None
        The 1-based step of the first violation, or None.
    error : str or None
        What stopped the session if the subject raised (not a violation).
    """

    steps: int
    requests: int
    faults: int
    violations: tuple[str, ...]
    first_violation: int | None
    error: str | None = None

    @property
    def violated(self) -> bool:
        return bool(self.violations)


def session_rng(seed: int, index: int, label: str = "") -> random.Random:
    """The random stream of session ``index`` of a run seeded ``seed`` (``label``
    separates the streams of different groups: a scenario class, a level)."""
    return random.Random(f"prunecheck-session:{seed}:{label}:{index}")


def run_session(
    system: Actions[S, A],
    rng: random.Random,
    *,
    pressure: float = 1.0,
    faults: Collection[str] = (),
) -> SessionRun:
    """Run one session of ``system`` with choices from ``rng`` (see the module's docs).

    Parameters
    ----------
    system : Actions
        The subject.
    rng : random.Random
        The session's own stream (:func:`session_rng`).
    pressure : float
        The probability a fault is allowed at a step where one is enabled
        beside ordinary actions (0 to 1).
    faults : collection of str
        The kinds that are faults.
    """

    def draw(n: int) -> int:
        return rng.randrange(max(1, n))

    state = system.start(draw)
    steps = requests = fault_count = 0
    try:
        while kinds := list(system.enabled(state)):
            calm = [k for k in kinds if k not in faults]
            pool = kinds if not calm or len(calm) == len(kinds) or rng.random() < pressure else calm
            kind = pool[draw(len(pool))]
            action = system.action(state, kind, draw)
            found = system.perform(state, action).incidents
            steps += 1
            fault_count += kind in faults
            violations = sorted({i.kind.value for i in found if i.is_violation})
            if violations:
                return SessionRun(steps, system.sent(state), fault_count, tuple(violations), steps)
        requests = system.sent(state)
        return SessionRun(steps, requests, fault_count, (), None)
    except PrunecheckError:  # bad input (an agent that cannot load, …): the caller's
        raise
    except Exception as exc:  # the subject's own failure ends the session; it is said
        return SessionRun(steps, requests, fault_count, (), None, f"{type(exc).__name__}: {exc}")
    finally:
        system.close(state)

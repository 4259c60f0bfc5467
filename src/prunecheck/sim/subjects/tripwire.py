"""A time-limited policy for the adversarial search whose time limit drops once
one call has hung, and the error that names the hang.

The search shrinks a failing run by re-running many variants; without this,
a policy that hangs would cost its whole time limit on each one.
"""

from __future__ import annotations

from collections.abc import Iterable

from prunecheck.model.actions import Action
from prunecheck.model.errors import PolicyError, PolicyTimeout
from prunecheck.model.policies import ContextView, Policy
from prunecheck.sim.subjects.cage import failed_for_good
from prunecheck.sim.subjects.time_limit import time_limited

__all__ = ["AFTER_HANG", "Tripwire", "search_error"]


class Tripwire:
    """A time-limited policy whose time limit drops to ``AFTER_HANG`` seconds
    once a call has hung.

    The search shrinks a failing run by re-running many variants; without
    this, a policy that hangs would cost its whole time limit on each one.
    ``first`` keeps the first error, with the time limit the user gave.
    """

    __slots__ = ("first", "inner", "name", "timeout")

    def __init__(self, inner: Policy, timeout: float) -> None:
        self.inner = inner
        self.timeout = timeout
        self.name: str = inner.name
        self.first: PolicyError | None = None

    def select(self, view: ContextView, need: int) -> Iterable[str | Action]:
        hung = isinstance(self.first, PolicyTimeout)
        limit = min(self.timeout, AFTER_HANG) if hung else self.timeout
        try:
            return time_limited(self.inner, limit).select(view, need)
        except PolicyError as exc:
            self.first = self.first or exc
            raise

    def failed_for_good(self) -> bool:
        """Whether the policy it wraps is caged and its worker hung or died."""
        return failed_for_good(self.inner)


#: Seconds a policy call may take in the search once one call has hung.
AFTER_HANG = 0.05


def search_error(exc: PolicyError, tripwire: Tripwire) -> PolicyError:
    """The search's error, naming the step of its shrunk run, with the
    first error's words (a hang's words name the user's time limit)."""
    first = tripwire.first
    if first is None:
        return exc
    if exc.step is None:
        return first
    if isinstance(first, PolicyTimeout):
        return PolicyTimeout(exc.bare_subject, first.rule, first.hint, exc.step)
    return exc

"""Time limits on calls into user code: a policy that hangs becomes a
:class:`~prunecheck.model.errors.PolicyTimeout` (a ``PolicyError``) naming
the policy and the step, not a hung run.

:func:`time_limited` gives a policy a per-call limit (a caged policy's watchdog
gets it; built-ins, trusted and fast, are returned as they are).
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass

from prunecheck.model.actions import Action
from prunecheck.model.errors import PolicyTimeout
from prunecheck.model.policies import BUILTINS, ContextView, Policy
from prunecheck.sim.subjects.cage import CagedPolicy
from prunecheck.sim.support.alarm import interrupt_after

__all__ = ["DEFAULT_TIMEOUT", "TimeLimitedPolicy", "time_limited"]

#: Seconds one ``select`` call may take before it counts as hung.
DEFAULT_TIMEOUT = 10.0

_BUILTIN_TYPES = frozenset(type(make()) for make in BUILTINS.values())


class _Timeout(BaseException):
    """Raised inside a hung policy by the alarm; never escapes :func:`_limit`."""


def _limit(seconds: float) -> AbstractContextManager[None]:
    """Interrupt the block after ``seconds`` with :class:`_Timeout` (main
    thread only; elsewhere the block runs unguarded)."""
    return interrupt_after(seconds, _Timeout)


@dataclass(frozen=True, slots=True)
class TimeLimitedPolicy:
    """A policy whose every ``select`` call has a time limit; the result is
    materialized inside the limit (a lazy generator cannot hang later).

    Attributes
    ----------
    inner : Policy
        The policy limited.
    timeout : float
        Seconds one call may take.
    name : str
        The inner policy's name (errors and reports use it).
    """

    inner: Policy
    timeout: float
    name: str

    def select(self, view: ContextView, need: int) -> Iterable[str | Action]:
        try:
            with _limit(self.timeout):
                result = self.inner.select(view, need)
                if isinstance(result, str | bytes | dict) or not isinstance(result, Iterable):
                    return result
                return list(result)
        except _Timeout:
            raise PolicyTimeout(
                f"policy {self.name!r}",
                f"select(view, need={need}) did not return within {self.timeout:g} s "
                f"(context of {len(view.messages)} messages).",
                "make select() faster or raise --policy-timeout.",
            ) from None


def time_limited(policy: Policy, timeout: float = DEFAULT_TIMEOUT) -> Policy:
    """``policy`` with a per-call time limit (formerly ``guarded``, a name
    that read as the guard package's).

    Parameters
    ----------
    policy : Policy
        The policy to limit.
    timeout : float
        Seconds one ``select`` call may take; 0 or less: no limit.

    Returns
    -------
    Policy
        A caged policy with its watchdog set to ``timeout``, a built-in as it
        is (trusted and fast), anything else as a :class:`TimeLimitedPolicy`.
    """
    if timeout <= 0:
        return policy
    if isinstance(policy, CagedPolicy):
        return policy.with_timeout(timeout)
    if type(policy) in _BUILTIN_TYPES:  # trusted and fast: no guard
        return policy
    return TimeLimitedPolicy(policy, timeout, policy.name)

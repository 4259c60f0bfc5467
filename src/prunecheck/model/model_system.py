"""The model runtime with a policy, as a :class:`~prunecheck.model.system.System`.

Its state is the model's own :class:`~prunecheck.model.state.RuntimeState`,
so the ground truth is the state itself, its next-state relation is
:func:`prunecheck.model.runtime.apply`, and nothing beyond the ground truth
enters the explorer's fingerprint.

Wrapping a plain policy happens once, where a policy enters (the command
line, the verdicts, a test): drivers only ever see a system.

Examples
--------
>>> from prunecheck.model.config import RuntimeConfig
>>> from prunecheck.model.events import UserMessage
>>> from prunecheck.model.policies import builtin_policy
>>> system = ModelSystem(builtin_policy("recency"))
>>> state = system.initial(RuntimeConfig())
>>> system.apply(state, UserMessage(10)).incidents, system.name
((), 'recency')
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .config import RuntimeConfig
from .events import Event
from .policies import BUILTINS, Policy
from .provider import render
from .runtime import apply
from .state import RuntimeState, StepResult, initial_state
from .system import Facts, Fragile, RequestBody

__all__ = ["ModelSystem", "reads_times"]

_TIMELESS = frozenset(type(BUILTINS[name]()) for name in BUILTINS if name != "lowest_salience")


def reads_times(policy: Policy) -> bool:
    """Whether ``policy`` may read creation times beyond their order: every
    policy but the built-ins that only order by them (all but
    ``lowest_salience``, which decays with age)."""
    return type(policy) not in _TIMELESS


@dataclass(frozen=True, slots=True)
class ModelSystem:
    """The model runtime running ``policy``.

    Parameters
    ----------
    policy : Policy
        What the runtime calls at a budget check (possibly time-limited).
    name : str
        The spec traces record; the policy's own name if empty.
    timed : bool or None
        Whether the policy reads creation times beyond their order
        (:attr:`Facts.reads_times`); None: :func:`reads_times` of ``policy``.
        Give it when ``policy`` wraps another (a time limit, a cage).
    """

    policy: Policy
    name: str = ""
    timed: bool | None = None
    facts: Facts = field(init=False)

    def __post_init__(self) -> None:
        if not self.name:
            object.__setattr__(self, "name", str(getattr(self.policy, "name", "policy")))
        timed = reads_times(self.policy) if self.timed is None else self.timed
        object.__setattr__(self, "facts", Facts(reads_times=timed))

    def initial(self, config: RuntimeConfig, *, record: bool = False) -> RuntimeState:
        """An empty context under ``config``."""
        return initial_state(config, self.policy, record=record)

    def apply(self, state: RuntimeState, event: Event, at: float | None = None) -> StepResult:
        """:func:`prunecheck.model.runtime.apply`."""
        return apply(state, event, at)

    def truth(self, state: RuntimeState) -> RuntimeState:
        """The state itself."""
        return state

    def copy(self, state: RuntimeState) -> RuntimeState:
        """:meth:`RuntimeState.copy` (records are shared).  O(n)."""
        return state.copy()

    def key(self, state: RuntimeState) -> int:
        """0: the ground truth is the whole state."""
        return 0

    def request(self, state: RuntimeState) -> RequestBody:
        """The context rendered in the configuration's provider format."""
        tools = {c.id: (c.spec.tool, c.spec.path) for c in state.calls.values()}
        provider = state.config.provider
        return RequestBody(provider, render(state.context, provider, tools=tools))

    def failed_for_good(self) -> bool:
        """Whether the policy failed for good (a caged policy that hung or died)."""
        return isinstance(self.policy, Fragile) and self.policy.failed_for_good()

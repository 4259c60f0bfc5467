"""Shared Hypothesis strategies: runtime configurations, built-in policies and
*valid* event sequences.

Event sequences are drawn while a shadow runtime (a real
:class:`~prunecheck.model.state.RuntimeState`, run with ``record=False``)
applies each event, so that every choice consults the runtime's own
preconditions: results only for calls still pending, the model speaks (text
or a batch) only when no call is pending, a batch only when no assistant
stream is open.  A drawn sequence therefore replays without ``TraceError``
under the configuration and policy it was drawn for.

Sequences cover parallel batches of 1–4 calls, results delivered whole or
in 2–4 chunks in any order across calls, streamed assistant text, user
messages arriving mid-batch, tool failures and timeouts, background calls,
explicit budget checks anywhere, invocations, retries and external writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hypothesis import strategies as st

from prunecheck.model.config import CheckAt, Repair, RetryMode, RuntimeConfig, StreamLoss
from prunecheck.model.events import (
    AssistantChunk,
    BudgetCheck,
    CallSpec,
    Effect,
    Event,
    ExternalWrite,
    FailureReason,
    Invoke,
    IssueBatch,
    ResultChunk,
    Retry,
    SystemPrompt,
    ToolFailure,
    UserMessage,
)
from prunecheck.model.gates import Gate
from prunecheck.model.policies import BUILTINS, Policy, builtin_policy
from prunecheck.model.provider import CHECKED
from prunecheck.model.runtime import apply
from prunecheck.model.state import RuntimeState, initial_state

__all__ = [
    "POLICY_NAMES",
    "Scenario",
    "call_specs",
    "event_sequences",
    "policy_names",
    "runtime_configs",
    "scenarios",
]

POLICY_NAMES: tuple[str, ...] = tuple(sorted(BUILTINS))

_PATHS = ("src/app.py", "src/util.py", "config.json", "app.log")
_WORDS = ("read", "config", "grep", "todo", "app", "log", "fix", "test", "why", "src")


def policy_names() -> st.SearchStrategy[str]:
    """The name of any built-in policy."""
    return st.sampled_from(POLICY_NAMES)


def _policy(name: str) -> Policy:
    policy = builtin_policy(name)
    assert policy is not None, name
    return policy


@st.composite
def runtime_configs(
    draw: st.DrawFn,
    gates: Sequence[Gate] = tuple(Gate),
    check_at: Sequence[CheckAt] = tuple(CheckAt),
) -> RuntimeConfig:
    """Any configuration, with a small budget so that pruning happens."""
    budget = draw(st.integers(100, 800))
    return RuntimeConfig(
        budget=budget,
        hard_ceiling=budget + draw(st.integers(0, 600)),
        gate=draw(st.sampled_from(tuple(gates))),
        check_at=draw(st.sampled_from(tuple(check_at))),
        retry=draw(st.sampled_from(tuple(RetryMode))),
        on_stream_loss=draw(st.sampled_from(tuple(StreamLoss))),
        repair=draw(st.sampled_from(tuple(Repair))),
        provider=draw(st.sampled_from(CHECKED)),
    )


def call_specs() -> st.SearchStrategy[CallSpec]:
    """One tool call: reads mostly, some writes, some background calls."""
    read = st.builds(
        CallSpec,
        st.sampled_from(("read_file", "grep", "stat")),
        st.sampled_from(_PATHS),
        st.just(Effect.READ),
        st.booleans(),
    )
    write = st.builds(
        CallSpec,
        st.just("write_file"),
        st.sampled_from(_PATHS),
        st.just(Effect.WRITE),
        st.just(False),
    )
    return st.one_of(read, read, write)


def _text(draw: st.DrawFn) -> str:
    return " ".join(draw(st.lists(st.sampled_from(_WORDS), max_size=3)))


_KINDS = ("user", "assistant", "batch", "result", "failure", "check", "invoke", "retry", "write")


def _choices(state: RuntimeState, plan: dict[str, int]) -> list[str]:
    """The event kinds the runtime accepts now (plus the plan's results),
    weighted towards what makes the state interesting: an invocation when
    the history is broken, a retry after a rejection."""
    streaming = state.assistant_stream is not None
    out = ["check", "invoke", "invoke", "retry", "write"]
    if state.orphans or state.unanswered:
        out += ["invoke", "invoke"]
    if state.rejected_units is not None:
        out += ["retry", "retry", "retry"]
    if not streaming:
        out.append("user")
    if not state.pending:
        out.append("assistant")
        if not streaming:
            out.append("batch")
    if plan:
        out += ["result", "result", "result", "failure"]
    return out


def _draw_event(draw: st.DrawFn, state: RuntimeState, plan: dict[str, int]) -> Event:
    kind = draw(st.sampled_from(_choices(state, plan)))
    tokens = st.integers(1, 300)
    if kind == "user":
        return UserMessage(draw(tokens), _text(draw))
    if kind == "assistant":
        return AssistantChunk(draw(tokens), last=draw(st.booleans()), text=_text(draw))
    if kind == "batch":
        calls = tuple(draw(st.lists(call_specs(), min_size=1, max_size=4)))
        first = state.next_call
        for i in range(len(calls)):
            plan[f"c{first + i}"] = draw(st.sampled_from((1, 1, 2, 3, 4)))
        return IssueBatch(calls, draw(st.integers(1, 120)), _text(draw))
    if kind in ("result", "failure"):
        call = draw(st.sampled_from(sorted(plan)))
        if kind == "failure":
            del plan[call]
            reason = draw(st.sampled_from(tuple(FailureReason)))
            return ToolFailure(call, reason, draw(st.integers(1, 40)))
        plan[call] -= 1
        last = plan[call] == 0
        if last:
            del plan[call]
        return ResultChunk(call, draw(tokens), last=last)
    if kind == "write":
        return ExternalWrite(draw(st.sampled_from(_PATHS)))
    plain: dict[str, Event] = {"check": BudgetCheck(), "invoke": Invoke(), "retry": Retry()}
    return plain[kind]


def _sync(state: RuntimeState, plan: dict[str, int]) -> None:
    """Forget planned chunks of calls the runtime no longer waits for (a
    stream that errored when its message was evicted fails its call)."""
    for call in [c for c in plan if c not in state.pending]:
        del plan[call]


@st.composite
def event_sequences(
    draw: st.DrawFn,
    config: RuntimeConfig,
    policy: str,
    max_events: int = 40,
) -> list[Event]:
    """A valid event sequence for ``config`` and the built-in ``policy``.

    It starts with a system prompt (most of the time) and a user message,
    then draws up to ``max_events`` events among those the shadow runtime
    accepts, and optionally drains: delivers every pending result and
    invokes the model.
    """
    state = initial_state(config, _policy(policy), record=False)
    plan: dict[str, int] = {}
    events: list[Event] = []

    def push(event: Event) -> None:
        apply(state, event)
        events.append(event)
        _sync(state, plan)

    if draw(st.booleans()) or draw(st.booleans()):
        push(SystemPrompt(draw(st.integers(1, 120)), "system prompt"))
    push(UserMessage(draw(st.integers(1, 300)), _text(draw)))
    for _ in range(draw(st.integers(0, max_events))):
        push(_draw_event(draw, state, plan))
    if draw(st.booleans()):
        while plan:
            call = min(plan, key=lambda c: int(c[1:]))
            plan[call] -= 1
            last = plan[call] == 0
            if last:
                del plan[call]
            push(ResultChunk(call, draw(st.integers(1, 300)), last=last))
        if state.assistant_stream is not None:
            push(AssistantChunk(draw(st.integers(1, 100)), last=True))
        push(Invoke())
    return events


@dataclass(frozen=True, slots=True)
class Scenario:
    """A configuration, a built-in policy name and a valid event sequence."""

    config: RuntimeConfig
    policy: str
    events: tuple[Event, ...]

    def run_state(self, *, record: bool = False) -> RuntimeState:
        """A fresh runtime for this scenario (events not applied)."""
        return initial_state(self.config, _policy(self.policy), record=record)


@st.composite
def scenarios(
    draw: st.DrawFn,
    gates: Sequence[Gate] = tuple(Gate),
    check_at: Sequence[CheckAt] = tuple(CheckAt),
    policies: Sequence[str] = POLICY_NAMES,
    max_events: int = 40,
) -> Scenario:
    """A configuration (from ``gates`` and ``check_at``), a policy from
    ``policies`` and a valid event sequence for both."""
    config = draw(runtime_configs(gates, check_at))
    policy = draw(st.sampled_from(tuple(policies)))
    events = draw(event_sequences(config, policy, max_events))
    return Scenario(config, policy, tuple(events))


assert set(_KINDS) | {"system"} == {
    cls.kind
    for cls in (
        SystemPrompt,
        UserMessage,
        AssistantChunk,
        IssueBatch,
        ResultChunk,
        ToolFailure,
        BudgetCheck,
        Invoke,
        Retry,
        ExternalWrite,
    )
}

"""The Hypothesis state machine of the adversarial search, and what all
runs of one search share (:class:`RunLog`): rules are runtime events, the
invariant is the model's incident check (see :mod:`.search`)."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st
from hypothesis import target
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.errors import PolicyError
from prunecheck.model.events import (
    AssistantChunk,
    Event,
    ExternalWrite,
    FailureReason,
    Invoke,
    IssueBatch,
    ResultChunk,
    Retry,
    ToolFailure,
    UserMessage,
)
from prunecheck.model.incidents import Incident, IncidentKind
from prunecheck.model.state import RuntimeState
from prunecheck.model.system import S, System
from prunecheck.sim.drivers.coverage import CoverageTally
from prunecheck.sim.drivers.search_draws import Draws, draw
from prunecheck.sim.drivers.shape import (
    Shape,
    Usage,
    ends_session,
    hits,
    pending_records,
    user_text,
)
from prunecheck.sim.drivers.swarm import (
    max_gap,
    narrow,
    opening,
    opening_usage,
    persisted_history,
)

__all__ = ["Enough", "Fatal", "Found", "Progress", "RunLog", "build_machine"]


#: Called with the number of runs tried so far, at the start of each run.
Progress = Callable[[int], None]


class Found(Exception):
    """Raised by the machine's invariant when a run hit its target."""


class Fatal(BaseException):
    """The policy failed (raised, hung, exited, answered out of the rules):
    stop the search at once, no shrinking."""

    def __init__(self, error: PolicyError) -> None:
        super().__init__(error.paragraph())
        self.error = error


class Enough(BaseException):
    """Ends Hypothesis's shrinking once the shrink budget is spent, or the
    search at its time limit.  A BaseException, so Hypothesis lets it
    through instead of shrinking it."""


class RunLog:
    """What all runs of one search share: the last counterexample, counts."""

    def __init__(
        self, shrink_runs: int = 0, deadline: float | None = None, progress: Progress | None = None
    ) -> None:
        self.started = time.perf_counter()
        self.deadline = deadline
        self.progress = progress
        self.timed_out = False
        self.examples = 0
        self.applied = 0
        self.shrink_runs = shrink_runs
        self.spent = False
        self.events: list[Event] | None = None
        self.times: list[float] | None = None
        self.first_seconds: float | None = None
        self.first_length: int | None = None
        self.costs: Counter[str] = Counter()
        #: Coverage of the runs before the first counterexample (shrinking not counted).
        self.coverage = CoverageTally()

    def hit(self, events: list[Event], times: list[float] | None = None) -> None:
        """Keep a run that hit if it is the first or no longer than the
        one kept (``times``: when its events happened; None: the step count)."""
        if self.events is None:
            self.first_seconds = time.perf_counter() - self.started
            self.first_length = len(events)
        if self.events is None or len(events) <= len(self.events):
            self.events = list(events)
            self.times = None if times is None else list(times)

    def out_of_time(self) -> bool:
        if self.deadline is not None and time.monotonic() >= self.deadline:
            self.timed_out = True
        return self.timed_out

    def start_run(self) -> None:
        """Count a run; once a counterexample is in hand, spend the shrink
        budget; stop at the time limit."""
        if self.out_of_time():
            self.spent = True
            raise Enough
        if self.events is None:
            self.examples += 1
            if self.progress is not None:
                self.progress(self.examples)
            return
        self.shrink_runs -= 1
        if self.shrink_runs < 0:
            self.spent = True
            raise Enough


def build_machine(
    system: System[S],
    config: RuntimeConfig,
    shape: Shape,
    target_kinds: frozenset[IncidentKind] | None,
    log: RunLog,
) -> type[RuleBasedStateMachine]:
    """A state-machine class bound to one search's system, config and shape.

    The machine keeps the system's state; its rules and preconditions read
    the ground truth (``system.truth``), the model's state, whatever the
    subject."""

    # Largest first: Hypothesis shrinks toward the first choice, and large
    # messages cross the budget in fewer events.
    def sizes_of(kind: tuple[int, ...]) -> st.SearchStrategy[int]:
        return st.sampled_from(sorted(kind, reverse=True))

    user_sizes, text_sizes = sizes_of(shape.user_sizes), sizes_of(shape.text_sizes)
    batch_sizes, result_sizes = sizes_of(shape.batch_sizes), sizes_of(shape.result_sizes)
    whole = st.booleans().map(lambda b: not b)  # shrinks toward a whole message
    paths = tuple(dict.fromkeys(c.path for c in shape.calls if c.path))

    made = Draws()  # each strategy built once (see .search_draws)

    def pending_id(data: st.DataObject, state: RuntimeState) -> str:
        return draw(data, made.one_of([r.id for r in pending_records(state)]))

    def idle(machine: Any) -> bool:
        truth = machine.state
        return not truth.pending and truth.assistant_stream is None

    class Machine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.subject = system.initial(config)
            self.bounds = shape
            self.usage = Usage()
            self.events: list[Event] = []
            self.times: list[float] = []
            self.gap = 0  # seconds to let pass before the next event
            self.hit: tuple[Incident, ...] = ()
            self.ended = False
            self.near = 0
            log.start_run()
            self.counted = log.events is None  # a run before any counterexample

        @property
        def state(self) -> RuntimeState:
            """The ground truth the rules read."""
            return system.truth(self.subject)

        def _do(self, event: Event) -> None:
            """Apply one event; stop the run at its first hit or where the
            session ends (a session abort)."""
            if self.hit or self.ended:
                return
            usage = self.usage.after(event, self.state)
            # a second after the event before (the step count), plus any gap
            at = (self.times[-1] + 1.0 if self.times else 0.0) + self.gap
            try:
                result = system.apply(self.subject, event, at)
            except PolicyError as exc:
                # A policy that raised, hung or answered out of the rules is
                # bad input, not a counterexample: stop at once instead of
                # letting Hypothesis shrink it (hundreds of runs for nothing).
                raise Fatal(exc) from None
            self.usage = usage
            self.events.append(event)
            self.times.append(at)
            self.gap = 0
            if log.events is None:
                log.applied += 1
                log.costs.update(i.kind.value for i in result.incidents if not i.is_violation)
            self.hit = hits(result.incidents, target_kinds)
            if self.hit:
                log.hit(self.events, self.times)
                return
            self.ended = ends_session(result.incidents)
            state = self.state
            if state.pending or state.context.has_open():
                self.near = max(self.near, state.context.used - config.budget)

        def _chunks_so_far(self, call: str) -> int:
            return self.state.calls[call].chunks

        def _calls(self, data: st.DataObject) -> tuple[Any, ...]:
            width = draw(data, made.integers(1, self.bounds.max_calls))
            return tuple(draw(data, made.exactly(width, shape.calls)))

        # -- the opening: this run's own bounds, then system prompt and user
        # message, or a resumed persisted history (see .swarm)
        @initialize(data=st.data())
        def begin(self, data: st.DataObject) -> None:
            self.bounds = bounds = narrow(
                shape, lambda low, high: draw(data, made.integers(low, high))
            )
            events = (
                persisted_history(bounds, bounds.max_resume, bounds.crashed)
                if bounds.max_resume
                else opening(bounds)
            )
            for event in events:
                self._do(event)
            self.usage = opening_usage()

        # -- rules: one event each, or a macro-step of a few
        @precondition(lambda self: self.usage.users < self.bounds.max_users)
        @rule(size=user_sizes)
        def user(self, size: int) -> None:
            self._do(UserMessage(size, user_text(self.state.turn + 1)))

        @precondition(
            lambda self: (
                not self.state.pending
                and (
                    self.state.assistant_stream is not None
                    or self.usage.texts < self.bounds.max_texts
                )
            )
        )
        @rule(size=text_sizes, last=whole)
        def say(self, size: int, last: bool) -> None:
            stream = self.state.assistant_stream
            if (stream.chunks if stream is not None else 0) + 1 >= self.bounds.max_chunks:
                last = True
            self._do(AssistantChunk(size, last))

        @precondition(lambda self: idle(self) and self.usage.batches < self.bounds.max_batches)
        @rule(data=st.data(), size=batch_sizes)
        def batch(self, data: st.DataObject, size: int) -> None:
            self._do(IssueBatch(self._calls(data), size))

        @precondition(lambda self: idle(self) and self.usage.users < self.bounds.max_users)
        @rule(data=st.data(), size=user_sizes)
        def turn(self, data: st.DataObject, size: int) -> None:
            """Macro: a whole turn — the user's message, an invocation, a
            batch with every result back (if the bounds allow one more), the
            answer if they allow one more, and an invocation."""
            self._do(UserMessage(size, user_text(self.state.turn + 1)))
            self._do(Invoke())
            if self.usage.batches < self.bounds.max_batches and not self.hit:
                self._do(IssueBatch(self._calls(data), draw(data, batch_sizes)))
                for record in pending_records(self.state):
                    self._do(ResultChunk(record.id, draw(data, result_sizes)))
            if self.usage.texts < self.bounds.max_texts:
                self._do(AssistantChunk(draw(data, text_sizes)))
            self._do(Invoke())

        @precondition(lambda self: bool(self.state.pending))
        @rule(data=st.data(), size=result_sizes, last=whole)
        def result(self, data: st.DataObject, size: int, last: bool) -> None:
            call = pending_id(data, self.state)
            if self._chunks_so_far(call) + 1 >= self.bounds.max_chunks:
                last = True
            self._do(ResultChunk(call, size, last))

        @precondition(lambda self: bool(self.state.pending))
        @rule(data=st.data())
        def results(self, data: st.DataObject) -> None:
            """Macro: every pending result, whole, in a drawn order."""
            order = draw(data, made.order([r.id for r in pending_records(self.state)]))
            for call in order:
                self._do(ResultChunk(call, draw(data, result_sizes)))

        @precondition(lambda self: bool(self.state.pending) and self.bounds.max_chunks > 1)
        @rule(data=st.data())
        def stream(self, data: st.DataObject) -> None:
            """Macro: one or several pending results streamed at once, their
            chunks interleaved round by round, checks firing as the
            runtime's ``check_at`` says."""
            ids = [r.id for r in pending_records(self.state)]
            calls = draw(data, made.some_of(ids))
            rounds = draw(data, made.integers(2, self.bounds.max_chunks))
            for i in range(rounds):
                for call in calls:
                    if call not in self.state.pending:
                        continue
                    last = (
                        i == rounds - 1 or self._chunks_so_far(call) + 1 >= self.bounds.max_chunks
                    )
                    self._do(ResultChunk(call, draw(data, result_sizes), last=last))

        @precondition(lambda self: bool(self.state.pending))
        @rule(data=st.data(), reason=st.sampled_from(FailureReason))
        def fail(self, data: st.DataObject, reason: FailureReason) -> None:
            self._do(ToolFailure(pending_id(data, self.state), reason))

        @precondition(lambda self: idle(self))
        @rule()
        def invoke(self) -> None:
            self._do(Invoke())

        @precondition(lambda self: max_gap(self.bounds) > 0)
        @rule(data=st.data())
        def wait(self, data: st.DataObject) -> None:
            """Let time pass before the next event: a slow tool, a user who
            comes back later (from a second to this run's widest gap; a
            shrinking run drops waits or shortens them)."""
            self.gap += draw(data, made.integers(1, max_gap(self.bounds)))

        @precondition(
            lambda self: (
                max_gap(self.bounds) > 0
                and bool(self.state.pending)
                and self.usage.users < self.bounds.max_users
            )
        )
        @rule(data=st.data(), size=user_sizes)
        def later(self, data: st.DataObject, size: int) -> None:
            """Macro: time passes while calls run (a test run, a build), then
            the user writes — a check fires with old units still pending."""
            self.gap += draw(data, made.integers(1, max_gap(self.bounds)))
            self._do(UserMessage(size, user_text(self.state.turn + 1)))

        @precondition(lambda self: self.state.rejected_units is not None)
        @rule()
        def retry(self) -> None:
            self._do(Retry())

        @precondition(lambda self: bool(paths) and self.usage.writes < self.bounds.max_writes)
        @rule(path=st.sampled_from(paths or ("",)))
        def write(self, path: str) -> None:
            self._do(ExternalWrite(path))

        # -- the invariant: the model's incident check
        @invariant()
        def no_violation(self) -> None:
            if self.hit:
                first = self.hit[0]
                raise Found(f"{first.kind.label} at step {first.step + 1}: {first.detail}")

        def teardown(self) -> None:
            if self.counted:
                log.coverage.run(self.state.counters, len(self.events))
            if self.near > 0:
                target(float(self.near), label="tokens over budget with live state")

    Machine.__name__ = Machine.__qualname__ = "PruneSearch"
    return Machine

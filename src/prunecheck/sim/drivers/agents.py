"""Simulated agents: SimPy processes that produce one runtime's events.

An :class:`Agent` owns a state of the system under test and the trace of
everything that happened to it.  Its processes decide *which* event happens
*when*, reading the ground truth (``system.truth``); ``system.apply``
decides what it does.  The
agent never prunes and never fires a budget check: the runtime's
``check_at`` knob does.  It respects the runtime's preconditions: the model
speaks (text, a batch, an invocation) only when no call is pending.

:class:`Tally` counts a sequence of steps the same way for a simulation
and for a replay of its trace, so the two can be held equal.
"""

from __future__ import annotations

import random
from collections.abc import Generator
from typing import Any, Generic

import simpy

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.errors import PolicyError
from prunecheck.model.events import (
    AssistantChunk,
    CallSpec,
    Effect,
    Event,
    ExternalWrite,
    FailureReason,
    Invoke,
    IssueBatch,
    NewSession,
    ResultChunk,
    Retry,
    SystemPrompt,
    ToolFailure,
    UserMessage,
)
from prunecheck.model.exposure import ANY_VIOLATION, rejection_key
from prunecheck.model.incidents import VIOLATION_KINDS, IncidentKind
from prunecheck.model.state import CounterName, RuntimeState, StepResult
from prunecheck.model.system import S, System
from prunecheck.sim.drivers.workload import Load, Workload
from prunecheck.sim.drivers.world import FILES, World, draw_call, slow_call
from prunecheck.sim.stats.sessions import NOT_TIMED, PER_INVOCATION, SessionEnd, SessionRecord

__all__ = ["Agent", "Control", "Halt", "Tally"]

#: Seconds after which a tool call fails as timed out.
TOOL_TIMEOUT = 120.0
#: Probability that a tool call fails with an error.
TOOL_ERROR = 0.02
#: Tool rounds (batches) at most per turn.
MAX_ROUNDS = 6
_REJECTION = IncidentKind.PROVIDER_REJECTION
_ABORT = IncidentKind.SESSION_ABORT

Process = Generator[simpy.Event, Any, None]


class Halt(Exception):
    """Stops a simulation: a policy error or the event limit (see :class:`Control`)."""


class Control:
    """What the agents of one run share to stop it: the events left before
    the limit (None: no limit) and the policy error that stopped it."""

    __slots__ = ("error", "left")

    def __init__(self, max_events: int | None) -> None:
        self.left = max_events
        self.error: str | None = None


class Tally:
    """What a sequence of steps did: incidents per class, invocations, and
    *exposure*: how many invocations saw at least one incident of a class
    since the invocation before (incidents after the last invocation are
    counted as incidents but expose no invocation).  Rejections are also
    counted per provider error kind, as ``provider_rejection:<kind>``, and
    violations of any class together as ``any_violation``.

    ``sessions`` holds the sessions ended so far; :meth:`close` ends the
    last one as censored (unless it was aborted).
    """

    __slots__ = (
        "_aborted",
        "_deferred_since",
        "_first",
        "_s_exposed",
        "_s_inv",
        "_s_start",
        "_s_turns",
        "_since",
        "deferred_time",
        "events",
        "exposed",
        "incidents",
        "invocations",
        "sessions",
    )

    def __init__(self) -> None:
        self.incidents: dict[str, int] = {}
        self.exposed: dict[str, int] = {}
        self.invocations = 0
        self.events = 0
        self.deferred_time = 0.0
        self.sessions: list[SessionRecord] = []
        self._since: set[str] = set()
        self._deferred_since: float | None = None
        self._s_start: float | None = None
        self._s_turns = 0
        self._s_inv = 0
        self._s_exposed: dict[str, int] = {}
        self._first: dict[str, tuple[float, int]] = {}
        self._aborted: float | None = None

    def _end_session(self, at: float, end: SessionEnd) -> None:
        if self._s_start is None:
            return
        if self._aborted is not None:
            end, at = SessionEnd.ABORT, self._aborted
        self.sessions.append(
            SessionRecord(
                round(at - self._s_start, 3),
                self._s_turns,
                end,
                self._s_inv,
                self._s_exposed,
                self._first,
            )
        )
        self._s_start = None
        self._s_turns = self._s_inv = 0
        self._s_exposed, self._first = {}, {}
        self._aborted = None

    def add(self, event: Event, result: StepResult, state: RuntimeState, at: float) -> None:
        """Count one applied step (``state`` is the state after it)."""
        self.events += 1
        kind_of = type(event)
        if kind_of is NewSession:
            self._end_session(at, SessionEnd.NATURAL)
        if self._s_start is None:
            self._s_start = at
        if kind_of is UserMessage:
            self._s_turns += 1
        first = self._first
        for incident in result.incidents:
            kind = incident.kind.value
            self.incidents[kind] = self.incidents.get(kind, 0) + 1
            keys = [kind]
            if incident.kind is _REJECTION:
                keys.append(rejection_key(incident.reason))
            elif incident.kind is _ABORT:
                self._aborted = at
            if incident.kind in VIOLATION_KINDS:
                keys.append(ANY_VIOLATION)
            for key in keys:
                self._since.add(key)
                if key not in first and key not in NOT_TIMED:
                    first[key] = (round(at - self._s_start, 3), self._s_turns)
        if kind_of is Invoke:
            done = state.counters.get(CounterName.INVOCATIONS, 0)
            if done != self.invocations:
                self.invocations = done
                self._s_inv += 1
                exposed, mine = self.exposed, self._s_exposed
                for kind in self._since:
                    exposed[kind] = exposed.get(kind, 0) + 1
                    if kind in PER_INVOCATION:
                        mine[kind] = mine.get(kind, 0) + 1
                self._since.clear()
        if state.deferred:
            if self._deferred_since is None:
                self._deferred_since = at
        elif self._deferred_since is not None:
            self.deferred_time += at - self._deferred_since
            self._deferred_since = None

    def close(self, at: float) -> None:
        """End the run at time ``at`` (a deferral still open ends there, the
        last session is censored there)."""
        if self._deferred_since is not None:
            self.deferred_time += at - self._deferred_since
            self._deferred_since = None
        self._end_session(at, SessionEnd.CENSORED)


class Agent(Generic[S]):
    """One agent: a runtime, its trace, and the processes that drive it.

    Parameters
    ----------
    env, world: the run's environment and shared files.
    config, system: the runtime's rules and the system under test.
    load: the load knobs.
    rng: this agent's own random stream.
    index: the agent's number in the run.
    control: what the run's agents share to stop it.
    """

    def __init__(
        self,
        env: simpy.Environment,
        world: World,
        config: RuntimeConfig,
        system: System[S],
        load: Load,
        rng: random.Random,
        index: int,
        control: Control,
    ) -> None:
        self.env = env
        self.world = world
        self.index = index
        self.system = system
        self.subject = system.initial(config)
        self.events: list[Event] = []
        self.times: list[float] = []
        self.tally = Tally()
        self.work = Workload(load, config.budget, rng)
        self._retries = config.max_retries
        self._session_users = 0
        self._session_turns = load.session_turns
        self._control = control
        self._inbox = 0
        self._wake: simpy.Event | None = None
        self._writer = world.subscribe(self._external)

    def start(self) -> None:
        self.env.process(self._users())
        self.env.process(self._main())

    # ------------------------------------------------------------- stepping
    def emit(self, event: Event) -> StepResult:
        """Apply one event now and record it.

        Raises
        ------
        Halt
            when the policy fails (the event stays in the trace, so a replay
            reproduces the error) or the run's event limit is reached.
        """
        control = self._control
        left = control.left
        if left is not None:
            if left <= 0:
                raise Halt()
            control.left = left - 1
        at = round(self.env.now, 3)
        self.events.append(event)
        self.times.append(at)
        try:
            result = self.system.apply(self.subject, event, at)
        except PolicyError as exc:
            control.left = 0
            control.error = f"agent {self.index}: {exc.paragraph()}"
            raise Halt() from None
        self.tally.add(event, result, self.truth, at)
        return result

    @property
    def truth(self) -> RuntimeState:
        """The ground truth the agent's processes read."""
        return self.system.truth(self.subject)

    def _external(self, path: str) -> None:
        self.emit(ExternalWrite(path))

    # ------------------------------------------------------------ processes
    def _users(self) -> Process:
        """The user writes on their own clock, also while a batch is in flight."""
        work = self.work
        while True:
            yield self.env.timeout(work.user_gap())
            self.emit(UserMessage(work.user_tokens(), f"please look at {work.pick(FILES)}"))
            self._session_users += 1
            self._inbox += 1
            wake = self._wake
            if wake is not None:
                self._wake = None
                wake.succeed()

    def _main(self) -> Process:
        self.emit(SystemPrompt(self.work.system_tokens, "You are a coding agent."))
        while True:
            while not self._inbox:
                self._wake = self.env.event()
                yield self._wake
            self._inbox = 0
            completed = yield from self._turn()
            if not completed:
                self._new_session(ask_again=True)  # the runtime gave up: the error surfaced
            elif self._session_users >= self._session_turns:
                self._new_session(ask_again=False)  # the natural end of a session

    def _new_session(self, *, ask_again: bool) -> None:
        """A fresh session: system prompt, and after an abort the user's
        question again (otherwise the next user message opens it)."""
        work = self.work
        self.emit(NewSession())
        self.emit(SystemPrompt(work.system_tokens, "You are a coding agent."))
        self._session_users = self._inbox = 0
        if ask_again:
            self.emit(UserMessage(work.user_tokens(), "that failed; please try again"))
            self._session_users = self._inbox = 1

    def _turn(self) -> Generator[simpy.Event, Any, bool]:
        """Answer the user: invoke, then tool rounds until the model answers.
        False when the runtime gave up (a session abort)."""
        work, env = self.work, self.env
        for rounds in range(MAX_ROUNDS + 1):
            accepted = yield from self._invoke()
            if not accepted:
                return False  # retries exhausted: the session is over
            yield env.timeout(work.model_latency())
            wants_tools = rounds < MAX_ROUNDS and work.chance(0.85 if rounds == 0 else 0.55)
            if not wants_tools:
                yield from self._speak(work.answer_tokens())
                return True
            if work.chance(0.4):
                yield from self._speak(work.preamble_tokens())
            yield from self._batch()
        return True

    def _invoke(self) -> Generator[simpy.Event, Any, bool]:
        """Invoke the model; on a rejection retry with backoff until the
        runtime gives up (its ``max_retries``; the model reports the abort)."""
        for attempt in range(self._retries + 1):
            result = self.emit(Invoke())
            kinds = {i.kind for i in result.incidents}
            if _ABORT in kinds:
                return False
            if _REJECTION not in kinds:
                return True
            yield self.env.timeout(0.5 * 2**attempt)
            self.emit(Retry())
        return False  # not reached: the model aborts at the last rejection

    def _speak(self, tokens: int) -> Process:
        """Stream assistant text in chunks."""
        work, env = self.work, self.env
        parts = work.split(tokens, min(work.chunk_count(), tokens))
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            self.emit(AssistantChunk(part, last))
            if not last:
                yield env.timeout(work.chunk_gap())

    def _batch(self) -> Process:
        """Issue a parallel batch and wait for every result."""
        work, env = self.work, self.env
        calls = tuple(draw_call(work) for _ in range(work.width()))
        slow = len(calls) if work.is_slow() else None  # its index in the batch
        if slow is not None:
            calls += (slow_call(work),)
        first = self.truth.next_call
        self.emit(IssueBatch(calls, work.batch_tokens(len(calls))))
        for spec in calls:
            if spec.effect is Effect.WRITE:
                self.world.write(spec.path, self._writer)
        tools = [
            env.process(self._tool(f"c{first + i}", spec, slow=i == slow))
            for i, spec in enumerate(calls)
        ]
        yield env.all_of(tools)

    def _tool(self, call: str, spec: CallSpec, *, slow: bool = False) -> Process:
        """Run one tool: a heavy-tailed latency, then its result in chunks.
        A slow call runs for minutes and is never timed out (the runtime
        waits for a test run or a build it started)."""
        work, env = self.work, self.env
        latency = work.slow_latency() if slow else work.tool_latency(spec.background)
        if not slow and latency > TOOL_TIMEOUT:
            yield env.timeout(TOOL_TIMEOUT)
            self.emit(ToolFailure(call, FailureReason.TIMEOUT))
            return
        yield env.timeout(latency)
        if work.chance(TOOL_ERROR):
            self.emit(ToolFailure(call))
            return
        tokens = work.result_tokens()
        parts = work.split(tokens, min(work.chunk_count(), tokens))
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            self.emit(ResultChunk(call, part, last))
            if not last:
                yield env.timeout(work.chunk_gap())

"""Adversarial search: a Hypothesis state machine whose rules are runtime
events and whose invariant is the model's incident check.

The machine owns a :class:`~prunecheck.model.runtime.RuntimeState` and
applies each event with :func:`~prunecheck.model.runtime.apply`
(``record=False``: no notes are built in the hot loop).  Rules are the
events of :mod:`.shape` — user messages (also mid-batch), streamed assistant
text, batches of any width, result chunks in any order, failures and
timeouts, invocations, retries, external writes — plus three macro-steps
(deliver every pending result in a drawn order; stream one or several
results at once, chunks interleaved; a whole turn).  Budget checks are the runtime's own, where its
``check_at`` knob puts them; no rule fires one elsewhere.  Each run first
draws its own bounds and opens as a session does (:mod:`.swarm`: system
prompt and user message, or a resumed persisted history, possibly cut off
by a crash); Hypothesis also varies which rules a run may use (its feature
flags), and ``target()`` steers toward near misses: tokens over budget
while a call is pending or a message is open.

A run stops at the first incident that is a violation (or of a ``target``
kind).  Hypothesis then shrinks it, for at most ``shrink_runs`` runs (a
count, not a time, so that a seed always gives the same answer), and
:func:`minimize` polishes the shortest run seen — deleting and resizing
events while it still hits.  Its events become a replayable
:class:`~prunecheck.model.trace.Trace`.

:func:`random_walk` is the baseline the benchmark compares with: uniform
random choices over the same alphabet, no guidance, no shrinking.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, settings, target
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import Flaky
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

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
from prunecheck.model.policies import Policy
from prunecheck.model.runtime import RuntimeConfig, RuntimeState
from prunecheck.model.trace import Trace
from prunecheck.sim.adapters.cage import failed_for_good
from prunecheck.sim.adapters.loader import load_policy
from prunecheck.sim.drivers.shape import (
    Shape,
    Usage,
    enabled_events,
    ends_session,
    hits,
    pending_records,
    user_text,
)
from prunecheck.sim.drivers.shrink import minimize
from prunecheck.sim.drivers.swarm import (
    narrow,
    opening,
    opening_usage,
    persisted_history,
    random_draw,
)
from prunecheck.sim.runtimes.under_test import (  # the model's, or a runtime's
    apply,
    incidents_of,
    initial_state,
)

__all__ = ["SHRINK_RUNS", "Progress", "SearchResult", "found_trace", "minimize", "random_walk",
           "search"]

#: Runs Hypothesis may spend shrinking one counterexample.
SHRINK_RUNS = 300


@dataclass(frozen=True, slots=True)
class SearchResult:
    """What a search found.

    Attributes
    ----------
    found: whether a run hit a violation (or a ``target`` kind).
    trace: the shrunk, replayable counterexample (None if not found).
    incidents: every incident of replaying ``trace``.
    examples: runs tried up to the first counterexample (all, if none).
    seconds: wall time of the whole search, shrinking included (informational).
    first_seconds: wall time to the first, unshrunk counterexample.
    first_length: events in that first counterexample.
    events: events applied over all runs up to the first counterexample.
    costs: cost incidents (deferrals, overruns, spills …) met before the
        first counterexample, by kind: reported, never failed on.
    timed_out: the time limit stopped the search (``examples`` says how
        many runs it covered; ``found`` whether one of them hit).
    """

    found: bool
    trace: Trace | None
    incidents: tuple[Incident, ...]
    examples: int
    seconds: float
    first_seconds: float | None = None
    first_length: int | None = None
    events: int = 0
    costs: Mapping[str, int] = field(default_factory=dict)
    timed_out: bool = False


#: Called with the number of runs tried so far, at the start of each run.
Progress = Callable[[int], None]


class _Found(Exception):
    """Raised by the machine's invariant when a run hit its target."""


class _Fatal(BaseException):
    """A caged policy failed for good (hung, exited): stop at once, no shrinking."""

    def __init__(self, error: PolicyError) -> None:
        super().__init__(error.paragraph())
        self.error = error


class _Enough(BaseException):
    """Ends Hypothesis's shrinking once the shrink budget is spent, or the
    search at its time limit.  A BaseException, so Hypothesis lets it
    through instead of shrinking it."""


class _Log:
    """What all runs of one search share: the last counterexample, counts."""

    def __init__(self, shrink_runs: int = 0, deadline: float | None = None,
                 progress: Progress | None = None) -> None:
        self.started = time.perf_counter()
        self.deadline = deadline
        self.progress = progress
        self.timed_out = False
        self.examples = 0
        self.applied = 0
        self.shrink_runs = shrink_runs
        self.spent = False
        self.events: list[Event] | None = None
        self.first_seconds: float | None = None
        self.first_length: int | None = None
        self.costs: Counter[str] = Counter()

    def hit(self, events: list[Event]) -> None:
        if self.events is None:
            self.first_seconds = time.perf_counter() - self.started
            self.first_length = len(events)
        if self.events is None or len(events) <= len(self.events):
            self.events = list(events)

    def out_of_time(self) -> bool:
        if self.deadline is not None and time.monotonic() >= self.deadline:
            self.timed_out = True
        return self.timed_out

    def start_run(self) -> None:
        """Count a run; once a counterexample is in hand, spend the shrink
        budget; stop at the time limit."""
        if self.out_of_time():
            self.spent = True
            raise _Enough
        if self.events is None:
            self.examples += 1
            if self.progress is not None:
                self.progress(self.examples)
            return
        self.shrink_runs -= 1
        if self.shrink_runs < 0:
            self.spent = True
            raise _Enough


def _machine(policy: Policy, config: RuntimeConfig, shape: Shape,
             target_kinds: frozenset[IncidentKind] | None, log: _Log
             ) -> type[RuleBasedStateMachine]:
    """A state-machine class bound to one search's policy, config and shape."""
    # Largest first: Hypothesis shrinks toward the first choice, and large
    # messages cross the budget in fewer events.
    def sizes_of(kind: tuple[int, ...]) -> st.SearchStrategy[int]:
        return st.sampled_from(sorted(kind, reverse=True))

    user_sizes, text_sizes = sizes_of(shape.user_sizes), sizes_of(shape.text_sizes)
    batch_sizes, result_sizes = sizes_of(shape.batch_sizes), sizes_of(shape.result_sizes)
    whole = st.booleans().map(lambda b: not b)  # shrinks toward a whole message
    paths = tuple(dict.fromkeys(c.path for c in shape.calls if c.path))

    def pending_id(data: st.DataObject, state: RuntimeState) -> str:
        return data.draw(st.sampled_from([r.id for r in pending_records(state)]), label="call")

    def idle(machine: Any) -> bool:
        return not machine.state.pending and machine.state.assistant_stream is None

    class Machine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.state = initial_state(config, policy, record=False)
            self.bounds = shape
            self.usage = Usage()
            self.events: list[Event] = []
            self.hit: tuple[Incident, ...] = ()
            self.ended = False
            self.near = 0
            log.start_run()

        def _do(self, event: Event) -> None:
            """Apply one event; stop the run at its first hit or where the
            session ends (a session abort)."""
            if self.hit or self.ended:
                return
            usage = self.usage.after(event, self.state)
            try:
                result = apply(self.state, event)
            except PolicyError as exc:
                if failed_for_good(policy):
                    raise _Fatal(exc) from None
                raise
            self.usage = usage
            self.events.append(event)
            if log.events is None:
                log.applied += 1
                log.costs.update(i.kind.value for i in result.incidents if not i.is_violation)
            self.hit = hits(result.incidents, target_kinds)
            if self.hit:
                log.hit(self.events)
                return
            self.ended = ends_session(result.incidents)
            state = self.state
            if state.pending or state.context.has_open():
                self.near = max(self.near, state.context.used - config.budget)

        def _chunks_so_far(self, call: str) -> int:
            return self.state.calls[call].chunks

        def _calls(self, data: st.DataObject) -> tuple[Any, ...]:
            width = data.draw(st.integers(1, self.bounds.max_calls), label="width")
            return tuple(data.draw(st.lists(st.sampled_from(shape.calls), min_size=width,
                                            max_size=width), label="calls"))

        # -- the opening: this run's own bounds, then system prompt and user
        # message, or a resumed persisted history (see .swarm)
        @initialize(data=st.data())
        def begin(self, data: st.DataObject) -> None:
            self.bounds = bounds = narrow(
                shape, lambda low, high: data.draw(st.integers(low, high)))
            events = (persisted_history(bounds, bounds.max_resume, bounds.crashed)
                      if bounds.max_resume else opening(bounds))
            for event in events:
                self._do(event)
            self.usage = opening_usage()

        # -- rules: one event each, or a macro-step of a few
        @precondition(lambda self: self.usage.users < self.bounds.max_users)
        @rule(size=user_sizes)
        def user(self, size: int) -> None:
            self._do(UserMessage(size, user_text(self.state.turn + 1)))

        @precondition(lambda self: not self.state.pending and (
            self.state.assistant_stream is not None
            or self.usage.texts < self.bounds.max_texts))
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
                self._do(IssueBatch(self._calls(data), data.draw(batch_sizes)))
                for record in pending_records(self.state):
                    self._do(ResultChunk(record.id, data.draw(result_sizes)))
            if self.usage.texts < self.bounds.max_texts:
                self._do(AssistantChunk(data.draw(text_sizes)))
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
            order = data.draw(st.permutations([r.id for r in pending_records(self.state)]),
                              label="order")
            for call in order:
                self._do(ResultChunk(call, data.draw(result_sizes, label=f"{call} tokens")))

        @precondition(lambda self: bool(self.state.pending) and self.bounds.max_chunks > 1)
        @rule(data=st.data())
        def stream(self, data: st.DataObject) -> None:
            """Macro: one or several pending results streamed at once, their
            chunks interleaved round by round, checks firing as the
            runtime's ``check_at`` says."""
            ids = [r.id for r in pending_records(self.state)]
            calls = data.draw(st.lists(st.sampled_from(ids), min_size=1, max_size=len(ids),
                                       unique=True), label="streams")
            rounds = data.draw(st.integers(2, self.bounds.max_chunks), label="chunks")
            for i in range(rounds):
                for call in calls:
                    if call not in self.state.pending:
                        continue
                    last = i == rounds - 1 or \
                        self._chunks_so_far(call) + 1 >= self.bounds.max_chunks
                    self._do(ResultChunk(call, data.draw(result_sizes), last=last))

        @precondition(lambda self: bool(self.state.pending))
        @rule(data=st.data(), reason=st.sampled_from(FailureReason))
        def fail(self, data: st.DataObject, reason: FailureReason) -> None:
            self._do(ToolFailure(pending_id(data, self.state), reason))

        @precondition(lambda self: idle(self))
        @rule()
        def invoke(self) -> None:
            self._do(Invoke())

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
                raise _Found(f"{first.kind.label} at step {first.step + 1}: {first.detail}")

        def teardown(self) -> None:
            if self.near > 0:
                target(float(self.near), label="tokens over budget with live state")

    Machine.__name__ = Machine.__qualname__ = "PruneSearch"
    return Machine


def search(policy_spec: str, config: RuntimeConfig, *, seed: int = 0, max_examples: int = 200,
           shape: Shape | None = None, target: frozenset[IncidentKind] | None = None,
           policy: Policy | None = None, shrink_runs: int = SHRINK_RUNS,
           deadline: float | None = None, progress: Progress | None = None) -> SearchResult:
    """Search adversarially for an event sequence on which the policy breaks.

    Parameters
    ----------
    policy_spec:
        The policy's spec (built-in name, ``module:attr``, ``file.py:attr``);
        it is what the trace records.
    config:
        The runtime: budget, gate and knobs.
    seed:
        The same seed gives the same result.
    max_examples:
        Runs Hypothesis generates (shrinking comes on top).
    shape:
        Bounds of the events; ``Shape.for_budget(config.budget)`` if None.
    target:
        Stop only on incidents of these kinds (violations if None).
    policy:
        The policy object, if already loaded (e.g. guarded); else loaded
        from ``policy_spec``.
    shrink_runs:
        Runs Hypothesis may spend shrinking a counterexample (a count, not
        a time, so that a seed always gives the same answer); :func:`minimize`
        then polishes what it has.
    deadline:
        A :func:`time.monotonic` instant: no run starts after it, and
        shrinking stops there with the shortest run found so far
        (``timed_out`` is then True).  None: no limit.
    progress:
        Called with the number of runs so far as each run starts.

    Returns
    -------
    SearchResult
        ``trace`` is the shrunk counterexample, ending at the event of the hit.

    Raises
    ------
    PolicyError
        if the policy raised, hung or returned something invalid (or gave
        different answers to the same question).
    """
    shape = shape or Shape.for_budget(config.budget)
    policy = policy if policy is not None else load_policy(policy_spec)
    log = _Log(shrink_runs, deadline, progress)
    machine = _machine(policy, config, shape, target, log)
    hypothesis_seed(seed)(machine)
    run_settings = settings(
        max_examples=max_examples, deadline=None, database=None, derandomize=False,
        phases=(Phase.generate, Phase.target, Phase.shrink), verbosity=Verbosity.quiet,
        suppress_health_check=list(HealthCheck), stateful_step_count=shape.max_steps,
        report_multiple_bugs=False, print_blob=False,
    )
    try:
        run_state_machine_as_test(machine, settings=run_settings)
    except (_Found, _Enough):
        pass
    except _Fatal as fatal:
        raise fatal.error from None
    except Flaky as exc:
        # Stopping Hypothesis mid-shrink can look to it like a run that drew
        # less than before; only a flake without that stop is the policy's.
        if not log.spent:
            raise PolicyError(f"policy {policy_spec!r}", "gave different answers to the same "
                          f"question during the search ({type(exc).__name__}).",
                          "a policy must be a deterministic function of its view.") from None
    if log.events is not None:
        log.events = minimize(log.events, config, policy, shape, target, deadline=deadline)
    seconds = time.perf_counter() - log.started
    return _result(policy_spec, config, policy, seed, log, seconds,
                   {"driver": "search", "seed": seed, "max_examples": max_examples})


def found_trace(policy_spec: str, config: RuntimeConfig, events: list[Event], seed: int,
                policy: Policy, found_by: dict[str, Any]) -> tuple[Trace, tuple[Incident, ...]]:
    """The trace of a counterexample, with its replayed incidents and a
    ``meta`` ready for the regression corpus (``expect.violations``)."""
    bare = Trace(policy_spec, config, tuple(events), seed)
    incidents = tuple(incidents_of(bare, policy))
    kinds = sorted({i.kind.value for i in incidents if i.is_violation})
    last = [i for i in incidents if i.step == len(events) - 1] or list(incidents[-1:])
    title = (f"{policy_spec} under gate {config.gate}: "
             + ", ".join(dict.fromkeys(i.kind.label for i in last)))
    meta = {"title": title,
            "story": f"found by prunecheck {found_by['driver']} (seed {seed}); "
                     f"{len(events)} events",
            "found_by": found_by,
            "expect": {"violations": kinds}}
    return Trace(policy_spec, config, tuple(events), seed, None, meta), incidents


def _result(policy_spec: str, config: RuntimeConfig, policy: Policy, seed: int, log: _Log,
            seconds: float, found_by: dict[str, Any]) -> SearchResult:
    if log.events is None:
        return SearchResult(False, None, (), log.examples, seconds, events=log.applied,
                            costs=dict(log.costs), timed_out=log.timed_out)
    trace, incidents = found_trace(policy_spec, config, log.events, seed, policy, found_by)
    return SearchResult(True, trace, incidents, log.examples, seconds, log.first_seconds,
                        log.first_length, log.applied, dict(log.costs), log.timed_out)


def random_walk(policy_spec: str, config: RuntimeConfig, *, seed: int = 0,
                shape: Shape | None = None, target: frozenset[IncidentKind] | None = None,
                policy: Policy | None = None, max_runs: int = 2000,
                deadline: float | None = None) -> SearchResult:
    """Plain random simulation over the same alphabet: each run draws its
    own bounds (if the shape is a swarm), opens as a session does, then
    picks events uniformly among those enabled, for ``shape.max_steps``
    events, until a run hits; no guidance, no shrinking.  The baseline of
    the benchmark."""
    shape = shape or Shape.for_budget(config.budget)
    policy = policy if policy is not None else load_policy(policy_spec)
    rng = random.Random(seed)
    draw = random_draw(rng)
    log = _Log(deadline=deadline)
    for _ in range(max_runs):
        if log.out_of_time():
            break
        log.examples += 1
        bounds = narrow(shape, draw)
        state = initial_state(config, policy, record=False)
        events: list[Event] = []
        prefix = (persisted_history(bounds, bounds.max_resume, bounds.crashed)
                  if bounds.max_resume else opening(bounds))
        steps = [*prefix, *([None] * shape.max_steps)]
        usage = Usage()
        for index, chosen in enumerate(steps):
            if index == len(prefix):
                usage = opening_usage()
            event = chosen if chosen is not None else rng.choice(
                enabled_events(state, usage, bounds))
            usage = usage.after(event, state)
            result = apply(state, event)
            events.append(event)
            log.applied += 1
            log.costs.update(i.kind.value for i in result.incidents if not i.is_violation)
            if hits(result.incidents, target):
                log.hit(events)
                break
            if ends_session(result.incidents):
                break
        if log.events is not None:
            break
    seconds = time.perf_counter() - log.started
    return _result(policy_spec, config, policy, seed, log, seconds,
                   {"driver": "random", "seed": seed})

"""Adversarial search: a Hypothesis state machine whose rules are runtime
events and whose invariant is the model's incident check.

The machine owns a :class:`~prunecheck.model.runtime.RuntimeState` and
applies each event with :func:`~prunecheck.model.runtime.apply`
(``record=False``: no notes are built in the hot loop).  Rules are the
events of :mod:`.shape` — user messages (also mid-batch), streamed assistant
text, batches of any width, result chunks in any order, failures, budget
checks anywhere, invocations, retries, external writes — plus two
macro-steps (deliver every pending result in a drawn order; stream one
result in chunks).  Hypothesis varies which rules a run may use (its
feature flags: swarm testing), and ``target()`` steers toward near misses:
tokens over budget while a call is pending or a message is open.

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, settings, target
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import Flaky
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from prunecheck.model.errors import PolicyError, TraceError
from prunecheck.model.events import (
    AssistantChunk,
    BudgetCheck,
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

from .cage import failed_for_good
from .loading import load_policy
from .shape import Shape, Usage, enabled_events, hits, pending_records, user_text
from .under_test import apply, incidents_of, initial_state  # the model's, or a runtime's

__all__ = ["SHRINK_RUNS", "SearchResult", "found_trace", "minimize", "random_walk", "search"]

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


class _Found(Exception):
    """Raised by the machine's invariant when a run hit its target."""


class _Fatal(BaseException):
    """A caged policy failed for good (hung, exited): stop at once, no shrinking."""

    def __init__(self, error: PolicyError) -> None:
        super().__init__(error.paragraph())
        self.error = error


class _Enough(BaseException):
    """Ends Hypothesis's shrinking once the shrink budget is spent.  A
    BaseException, so Hypothesis lets it through instead of shrinking it."""


class _Log:
    """What all runs of one search share: the last counterexample, counts."""

    def __init__(self, shrink_runs: int = 0) -> None:
        self.started = time.perf_counter()
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

    def start_run(self) -> None:
        """Count a run; once a counterexample is in hand, spend the shrink budget."""
        if self.events is None:
            self.examples += 1
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

    class Machine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.state = initial_state(config, policy, record=False)
            self.usage = Usage()
            self.events: list[Event] = []
            self.hit: tuple[Incident, ...] = ()
            self.near = 0
            log.start_run()

        def _do(self, event: Event) -> None:
            """Apply one event; stop the run at its first hit."""
            if self.hit:
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
            state = self.state
            if state.pending or state.context.has_open():
                self.near = max(self.near, state.context.used - config.budget)

        def _chunks_so_far(self, call: str) -> int:
            return self.state.calls[call].chunks

        # -- rules: one event each, or a macro-step of a few
        @precondition(lambda self: self.usage.users < shape.max_users)
        @rule(size=user_sizes)
        def user(self, size: int) -> None:
            self._do(UserMessage(size, user_text(self.state.turn + 1)))

        @precondition(lambda self: not self.state.pending and (
            self.state.assistant_stream is not None or self.usage.texts < shape.max_texts))
        @rule(size=text_sizes, last=whole)
        def say(self, size: int, last: bool) -> None:
            stream = self.state.assistant_stream
            if (stream.chunks if stream is not None else 0) + 1 >= shape.max_chunks:
                last = True
            self._do(AssistantChunk(size, last))

        @precondition(lambda self: not self.state.pending and self.state.assistant_stream is None
                      and self.usage.batches < shape.max_batches)
        @rule(calls=st.lists(st.sampled_from(shape.calls), min_size=1, max_size=shape.max_calls),
              size=batch_sizes)
        def batch(self, calls: list[Any], size: int) -> None:
            self._do(IssueBatch(tuple(calls), size))

        @precondition(lambda self: bool(self.state.pending))
        @rule(data=st.data(), size=result_sizes, last=whole)
        def result(self, data: st.DataObject, size: int, last: bool) -> None:
            call = pending_id(data, self.state)
            if self._chunks_so_far(call) + 1 >= shape.max_chunks:
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

        @precondition(lambda self: bool(self.state.pending) and shape.max_chunks > 1)
        @rule(data=st.data(),
              chunks=st.lists(result_sizes, min_size=2, max_size=shape.max_chunks))
        def stream(self, data: st.DataObject, chunks: list[int]) -> None:
            """Macro: one result streamed in several chunks, checks firing as
            the runtime's ``check_at`` says."""
            call = pending_id(data, self.state)
            left = shape.max_chunks - self._chunks_so_far(call)
            chunks = chunks[:left]
            for i, size in enumerate(chunks):
                self._do(ResultChunk(call, size, last=i == len(chunks) - 1))

        @precondition(lambda self: bool(self.state.pending))
        @rule(data=st.data(), reason=st.sampled_from(FailureReason))
        def fail(self, data: st.DataObject, reason: FailureReason) -> None:
            self._do(ToolFailure(pending_id(data, self.state), reason))

        @rule()
        def check(self) -> None:
            self._do(BudgetCheck())

        @precondition(lambda self: not self.state.pending and self.state.assistant_stream is None)
        @rule()
        def invoke(self) -> None:
            self._do(Invoke())

        @precondition(lambda self: self.state.rejected_units is not None)
        @rule()
        def retry(self) -> None:
            self._do(Retry())

        @precondition(lambda self: bool(paths) and self.usage.writes < shape.max_writes)
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
           policy: Policy | None = None, shrink_runs: int = SHRINK_RUNS) -> SearchResult:
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
    log = _Log(shrink_runs)
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
        log.events = minimize(log.events, config, policy, shape, target)
    seconds = time.perf_counter() - log.started
    return _result(policy_spec, config, policy, seed, log, seconds,
                   {"driver": "search", "seed": seed, "max_examples": max_examples})


_Ref = tuple[int, int]  # (index of the issuing batch event, position in the batch)


def _refs(events: Sequence[Event], config: RuntimeConfig, policy: Policy) -> list[_Ref | None]:
    """For each event naming a call, which batch event issued that call."""
    state = initial_state(config, policy, record=False)
    owner: dict[str, _Ref] = {}
    refs: list[_Ref | None] = []
    for i, event in enumerate(events):
        refs.append(owner.get(event.call) if isinstance(event, ResultChunk | ToolFailure)
                    else None)
        if isinstance(event, IssueBatch):
            owner.update({f"c{state.next_call + k}": (i, k) for k in range(len(event.calls))})
        apply(state, event)
    return refs


def _rerun(items: list[tuple[int, Event, _Ref | None]], config: RuntimeConfig, policy: Policy,
           target: frozenset[IncidentKind] | None) -> list[Event] | None:
    """Replay edited events, renumbering calls; the prefix up to the first
    hit, or None if the edit is impossible or no longer hits.  Results of a
    deleted batch are deleted with it."""
    state = initial_state(config, policy, record=False)
    first_call: dict[int, int] = {}
    out: list[Event] = []
    for index, event, ref in items:
        if ref is not None and isinstance(event, ResultChunk | ToolFailure):
            if ref[0] not in first_call:
                continue
            event = replace(event, call=f"c{first_call[ref[0]] + ref[1]}")
        if isinstance(event, IssueBatch):
            first_call[index] = state.next_call
        try:
            result = apply(state, event)
        except (TraceError, PolicyError):
            return None
        out.append(event)
        if hits(result.incidents, target):
            return out
    return None


def _resized(event: Event, tokens: int) -> Event:
    if isinstance(event, UserMessage | AssistantChunk | IssueBatch | ResultChunk):
        return replace(event, tokens=tokens)
    return event


def minimize(events: Sequence[Event], config: RuntimeConfig, policy: Policy, shape: Shape,
             target: frozenset[IncidentKind] | None = None) -> list[Event]:
    """Polish a counterexample after Hypothesis has shrunk it: delete one or
    two events (a batch goes with its results), or delete one and resize
    another within the shape's sizes for its kind, while the run still hits; repeat to a
    fixpoint.  Each round costs O(n² · |sizes|) replays of at most n events,
    n being small after shrinking."""
    current = list(events)
    while True:
        better = _shorter(current, config, policy, shape, target)
        if better is None:
            return current
        current = better


def _shorter(events: list[Event], config: RuntimeConfig, policy: Policy, shape: Shape,
             target: frozenset[IncidentKind] | None) -> list[Event] | None:
    refs = _refs(events, config, policy)
    items = list(zip(range(len(events)), events, refs, strict=True))
    n = len(items)

    def attempt(drop: tuple[int, ...], resize: tuple[int, int] | None = None) -> list[Event] | None:
        chosen = []
        for index, event, ref in items:
            if index in drop:
                continue
            if resize is not None and resize[0] == index:
                event = _resized(event, resize[1])
            chosen.append((index, event, ref))
        out = _rerun(chosen, config, policy, target)
        return out if out is not None and len(out) < n else None

    resizes = [(k, size) for k in range(n) for size in shape.sizes_for(events[k])
               if size != getattr(events[k], "tokens", size)]
    edits: list[tuple[tuple[int, ...], tuple[int, int] | None]] = [((i,), None) for i in range(n)]
    edits += [((), r) for r in resizes]
    edits += [((i, j), None) for i in range(n) for j in range(i + 1, n)]
    edits += [((i,), r) for i in range(n) for r in resizes if r[0] != i]
    for drop, resize in edits:
        found = attempt(drop, resize)
        if found is not None:
            return found
    return None


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
                            costs=dict(log.costs))
    trace, incidents = found_trace(policy_spec, config, log.events, seed, policy, found_by)
    return SearchResult(True, trace, incidents, log.examples, seconds, log.first_seconds,
                        log.first_length, log.applied, dict(log.costs))


def random_walk(policy_spec: str, config: RuntimeConfig, *, seed: int = 0,
                shape: Shape | None = None, target: frozenset[IncidentKind] | None = None,
                policy: Policy | None = None, max_runs: int = 2000) -> SearchResult:
    """Plain random simulation over the same alphabet: each run picks events
    uniformly among those enabled, for ``shape.max_steps`` events, until a
    run hits; no guidance, no shrinking.  The baseline of the benchmark."""
    shape = shape or Shape.for_budget(config.budget)
    policy = policy if policy is not None else load_policy(policy_spec)
    rng = random.Random(seed)
    log = _Log()
    for _ in range(max_runs):
        log.examples += 1
        state = initial_state(config, policy, record=False)
        usage = Usage()
        events: list[Event] = []
        for _ in range(shape.max_steps):
            event = rng.choice(enabled_events(state, usage, shape))
            usage = usage.after(event, state)
            result = apply(state, event)
            events.append(event)
            log.applied += 1
            log.costs.update(i.kind.value for i in result.incidents if not i.is_violation)
            if hits(result.incidents, target):
                log.hit(events)
                break
        if log.events is not None:
            break
    seconds = time.perf_counter() - log.started
    return _result(policy_spec, config, policy, seed, log, seconds,
                   {"driver": "random", "seed": seed})

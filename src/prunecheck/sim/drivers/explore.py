"""Exhaustive bounded exploration: every event interleaving of a small
configuration, breadth first, remembering 64-bit fingerprints of states.

States are *canonical*: a hashable key of everything that decides what the
runtime does next — the messages in context order, pending calls, streams,
spilled units, file versions, the incident bookkeeping — with absolute ids
renamed (messages by creation order, calls by their batch and their
progress) so that runs that differ only in numbering meet in one state.
Symmetry reduction: calls of one batch with the same spec and the same
progress are interchangeable; their names are assigned after sorting, and
only one of those still waiting for a first chunk is expanded.
Successors come from ``system.copy(state)`` and ``system.apply`` (no notes);
the key is read from ``system.truth`` (the model's ground truth, whatever
the subject), and ``system.key`` adds what of a runtime under test the
ground truth does not show.

Memory, as TLC does it: the visited set holds a 64-bit fingerprint of each
canonical key (:class:`~.fingerprints.FingerprintSet`, one ``array('Q')``),
not the state.  States are numbered in the order they are found; for each
one the explorer keeps its parent's number (4 bytes) and the index of the
event, among the parent's enabled events, that led to it (2 bytes).  A
level's states are a contiguous range of numbers, so the frontier is two
integers.  A state is rebuilt by replaying its event path from the initial
state; the states along the last path replayed are kept, and a level is
expanded in number order (which is the order of its paths), so rebuilding
costs about one ``apply`` a state.  About 17–28 bytes a state in these
structures; a process's peak resident memory grows by about twice that
(the table doubles while it grows).

Every explored history opens as a real session does: the system prompt,
then the user's first message (:func:`~.swarm.opening`); the initial state
is the state after it, and a counterexample's trace starts with it.  Budget
checks fire only where the runtime's ``check_at`` puts them.

Time is a dimension too.  Every event takes a second; besides, while a call
is pending (a slow test run, a build), the user's next message may come
after the clock jumped by each of the shape's ``time_steps`` — at most
``max_waits`` times a history — so that a policy reading ``view.now`` and
message ages meets old units whose calls still run.  A subject whose facts
say it reads creation times only to order messages is not branched on time
at all (a jump could not change what it does);
:attr:`ExploreResult.time_steps` says which jumps were explored.

Breadth first means the first counterexample met is a shortest one; it is
rebuilt from the parent numbers and event indices by the same replay.  Two
distinct states with one fingerprint would make the explorer skip one of
them: the probability, n(n-1)/2⁶⁵ for n states, is reported
(:attr:`ExploreResult.collision_probability`).  The search is capped at
``max_states`` states, and a ``deadline`` stops it between two states; a
capped or timed-out run says so and is no proof.

Complexity: O(transitions · (context size + apply)) time; O(states) memory
at about 17–28 bytes a state.
"""

from __future__ import annotations

import time
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeAlias

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.context import Message, Role
from prunecheck.model.errors import ConfigError
from prunecheck.model.events import Event, UserMessage
from prunecheck.model.incidents import Incident, IncidentKind
from prunecheck.model.state import CallRecord, CallStatus, RuntimeState
from prunecheck.model.system import S, System
from prunecheck.model.trace import Trace
from prunecheck.sim.drivers.coverage import Coverage, CoverageTally
from prunecheck.sim.drivers.fingerprints import FingerprintSet, collision_probability, fingerprint
from prunecheck.sim.drivers.found import found_trace
from prunecheck.sim.drivers.shape import Shape, Usage, enabled_events, ends_session, hits
from prunecheck.sim.drivers.swarm import opening, opening_usage

__all__ = ["MAX_STATES", "ExploreResult", "Later", "canonical_key", "explore"]

#: Default cap on distinct states.
MAX_STATES = 200_000


@dataclass(frozen=True, slots=True)
class ExploreResult:
    """What an exploration saw.

    Attributes
    ----------
    states: distinct canonical states reached (distinct fingerprints).
    transitions: events applied (edges tried, duplicates included).
    depth_reached: the deepest level fully expanded (or where it stopped).
    counterexample: a shortest trace to a hit, or None.
    incidents: every incident of replaying the counterexample.
    capped: True if ``max_states`` stopped the search before ``depth``.
    seconds: wall time (informational).
    memory_bytes: bytes held per state by the search: the fingerprint
        table, parent numbers and event indices (informational).
    timed_out: True if the deadline stopped the search before ``depth``.
    coverage: what the transitions tried exercised, summed over them
        (:mod:`.coverage`): the incident classes and interleavings reachable
        in the shape up to the depth reached.
    time_steps: the time jumps explored (seconds); empty if time was not
        branched on (see ``reads_times``, and the shape's ``time_steps``).
    reads_times: whether the subject may read creation times beyond their
        order (if not, time is never branched on).
    """

    states: int
    transitions: int
    depth_reached: int
    counterexample: Trace | None
    incidents: tuple[Incident, ...]
    capped: bool = False
    seconds: float = 0.0
    memory_bytes: int = 0
    timed_out: bool = False
    coverage: Coverage = field(default_factory=Coverage)
    time_steps: tuple[int, ...] = ()
    reads_times: bool = True

    @property
    def states_per_second(self) -> float:
        """Distinct states found per second of wall time (0 if no time)."""
        return self.states / self.seconds if self.seconds > 0 else 0.0

    @property
    def bytes_per_state(self) -> float:
        """:attr:`memory_bytes` over :attr:`states`."""
        return self.memory_bytes / self.states if self.states else 0.0

    @property
    def collision_probability(self) -> float:
        """The probability that two of the states explored share a
        fingerprint (so that one was skipped): n(n-1)/2⁶⁵, as TLC states it."""
        return collision_probability(self.states)


@dataclass(frozen=True, slots=True)
class Later:
    """A move of the explorer: ``event`` happens after the clock jumped
    ``seconds`` (the user comes back while a slow call runs)."""

    event: Event
    seconds: int


#: What the explorer may do in a state: an event now, or one after a jump.
Move: TypeAlias = Event | Later


def _id_order(ident: str) -> tuple[int, str]:
    """Creation order of ids of one kind: ``m9`` before ``m10``."""
    return (len(ident), ident)


def _spec_key(record: CallRecord) -> tuple[Any, ...]:
    spec = record.spec
    return (spec.tool, spec.path, spec.effect.value, spec.background)


_ROLE = {role: role.value for role in Role}
_STATUS = {status: status.value for status in CallStatus}


def canonical_key(
    state: RuntimeState, usage: Usage, *, timeless: bool = False, clock: float | None = None
) -> tuple[Any, ...]:
    """A hashable key of ``state``: equal keys behave the same from here on,
    up to renaming ids.

    Creation times enter as ages counted back from ``clock``, the time of
    the next event (the step count if None) — what a decaying salience or
    a TTL reads — or, if ``timeless`` (the policy only orders by creation
    time), as dense ranks, so that events which only move the clock do not
    split states.

    Left out, because nothing reads them back: counters, the ``deferred``
    flag, bookkeeping of incidents already reported for messages that are
    gone for good.
    """
    s, ctx = state, state.context
    refs: set[str] = set(s.batches)
    spilled = [m for ms in s.spilled.values() for m in ms]
    for m in (*ctx, *spilled):
        refs.add(m.id)
        refs.add(m.unit_id)
        if m.summary_of:
            refs.update(m.summary_of)
    refs.update(r.target for r in s.calls.values() if r.target is not None)
    stream = s.assistant_stream
    if stream is not None:
        refs.add(stream.batch)
        if stream.target is not None:
            refs.add(stream.target)
    if s.last_user is not None:
        refs.add(s.last_user)
    # Creation order: by length, then by text ("m9" < "m10"); two C-level sorts.
    rank: dict[str | None, int] = {m: i for i, m in enumerate(sorted(sorted(refs), key=len))}
    rank[None] = -1
    mrank = rank.__getitem__

    # Calls: named by their batch's rank and their place after sorting by
    # spec and progress, so interchangeable calls get the same names.
    call_name: dict[str | None, tuple[int, int] | None] = {None: None}
    batch_keys = []
    for bid in sorted(s.batches, key=_id_order):
        batch = s.batches[bid]
        described = sorted(
            (
                (
                    _spec_key(r),
                    _STATUS[r.status],
                    r.version_seen,
                    r.chunks,
                    r.tokens,
                    rank[r.target],
                    r.lost,
                    r.retry_of is not None,
                ),
                r.id,
            )
            for r in (s.calls[c] for c in batch.calls)
        )
        b = rank[bid]
        for pos, (_, cid) in enumerate(described):
            call_name[cid] = (b, pos)
        batch_keys.append((b, batch.tokens, batch.text, tuple(d for d, _ in described)))
    now = s.step_index if clock is None else clock
    times: dict[float, float] = {}
    if timeless:
        created = {m.created_at for m in ctx}
        created.update(m.created_at for m in spilled)
        times = {t: float(i) for i, t in enumerate(sorted(created))}

    def message_key(m: Message) -> tuple[Any, ...]:
        return (
            rank[m.id],
            _ROLE[m.role],
            m.tokens,
            m.turn,
            times[m.created_at] if timeless else now - m.created_at,
            tuple(sorted(call_name[c] for c in m.tool_calls)) if m.tool_calls else (),
            call_name[m.call_id],
            m.closed,
            rank[m.unit_id],
            m.text,
            m.first_chunk,
            m.chunks,
            m.cleared,
            tuple(rank[x] for x in m.summary_of),
            m.synthetic,
        )

    reported = []
    for kind, ident in s.reported:
        if ident in call_name:
            reported.append((kind, call_name[ident], -1))
        elif ident in rank:
            reported.append((kind, None, rank[ident]))
    return (
        usage.as_tuple(),
        s.turn,
        tuple(map(message_key, ctx)),
        tuple(batch_keys),
        tuple(sorted(s.world.items())),
        tuple(
            (rank[u], tuple(map(message_key, ms)))
            for u, ms in sorted(s.spilled.items(), key=lambda item: _id_order(item[0]))
        ),
        None
        if stream is None
        else (rank[stream.batch], stream.chunks, stream.tokens, rank[stream.target], stream.lost),
        rank[s.last_user],
        None if s.rejected_units is None else tuple(mrank(u) for u in s.rejected_units),
        s.over_ceiling,
        tuple(sorted(rank[m] for m in s.orphans)),
        tuple(sorted(call_name[c] for c in s.unanswered)),
        tuple(sorted(reported, key=repr)),
    )


def explore(
    system: System[S],
    config: RuntimeConfig,
    *,
    depth: int,
    shape: Shape,
    target: frozenset[IncidentKind] | None = None,
    max_states: int = MAX_STATES,
    deadline: float | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ExploreResult:
    """Explore every interleaving of ``shape``'s events up to ``depth`` events.

    Parameters
    ----------
    system:
        What is explored: the model runtime with a policy (which must be
        deterministic and keep no state between calls), or a runtime under
        test; the trace records its ``name``.  If its facts say it does not
        read creation times beyond their order, states that differ only in
        them are one.
    config:
        The runtime's configuration.
    depth:
        Longest event sequence considered.
    shape:
        The bounds of the configuration; keep it small.
    target:
        Stop on these incident kinds (violations if None).
    max_states:
        Stop after this many distinct states (``capped`` is then True).
    deadline:
        A :func:`time.monotonic` instant to stop at (``timed_out`` is then
        True); None: no limit.
    progress:
        Called with (depth level, states so far) as each level starts.

    Returns
    -------
    ExploreResult
        With a shortest counterexample if any sequence of at most ``depth``
        events hits.
    """
    started = time.perf_counter()
    timeless = not system.facts.reads_times
    steps = () if timeless or not shape.max_waits else shape.time_steps
    seen = FingerprintSet()
    paths = _Paths(system, config, shape, steps)
    root, root_usage = paths.root
    truth = system.truth(root)
    seen.add(
        fingerprint(canonical_key(truth, root_usage, timeless=timeless, clock=_next(truth)))
        ^ system.key(root)
    )
    transitions = 0
    tally = CoverageTally((config.check_at,), proposals_observed=not system.facts.own_gate)
    level = 0
    capped = timed_out = False
    first, end = 0, 1  # the frontier: states numbered [first, end)
    while first < end and level < depth and not capped:
        if progress is not None:
            progress(level, len(seen))
        for node in range(first, end):
            if deadline is not None and node % 256 == 0 and time.monotonic() >= deadline:
                capped = timed_out = True
                break
            state, usage, moves = paths.state(node)
            before = system.truth(state)
            for move, chosen in enumerate(moves):
                event, at, after = _step(chosen, before, usage)
                new = system.copy(state)
                result = system.apply(new, event, at)
                transitions += 1
                tally.step(before.counters, system.truth(new).counters)
                if hits(result.incidents, target):
                    events, times = paths.timeline(node)
                    trace, incidents = found_trace(
                        system,
                        config,
                        [*events, event],
                        0,
                        {"driver": "explore", "depth": depth, "states": len(seen)},
                        times=(*times, at),
                    )
                    return ExploreResult(
                        len(seen),
                        transitions,
                        level + 1,
                        trace,
                        incidents,
                        False,
                        time.perf_counter() - started,
                        seen.nbytes + paths.nbytes,
                        coverage=tally.freeze(),
                        time_steps=steps,
                        reads_times=not timeless,
                    )
                if ends_session(result.incidents):
                    continue  # the session is over: nothing follows it
                truth = system.truth(new)
                child = fingerprint(
                    canonical_key(truth, after, timeless=timeless, clock=_next(truth))
                ) ^ system.key(new)
                if child in seen:
                    continue
                if len(seen) >= max_states:
                    capped = True
                    break
                seen.add(child)
                paths.found(node, move)
            if capped:
                break
        if not capped:
            level += 1
        first, end = end, len(seen)
    return ExploreResult(
        len(seen),
        transitions,
        level,
        None,
        (),
        capped,
        time.perf_counter() - started,
        seen.nbytes + paths.nbytes,
        timed_out,
        tally.freeze(),
        steps,
        not timeless,
    )


def _next(state: RuntimeState) -> float:
    """When the next event happens unless the clock jumps: a second after
    the last one (the step count when nothing jumped)."""
    return state.now + 1.0


def _step(move: Move, state: RuntimeState, usage: Usage) -> tuple[Event, float, Usage]:
    """The event of ``move``, when it happens, and the usage after it."""
    if isinstance(move, Later):
        event = move.event
        return event, _next(state) + move.seconds, usage.after(event, state).waited()
    return move, _next(state), usage.after(move, state)


class _Paths(Generic[S]):
    """Where each state came from, and states rebuilt from it.

    State ``n`` (numbered in the order found; 0 is the initial state) came
    from state ``parent[n]`` by the ``move[n]``-th of its moves.
    :meth:`state` replays that path, reusing the states of the path it
    replayed last: the longest common prefix is not replayed again.
    """

    def __init__(
        self, system: System[S], config: RuntimeConfig, shape: Shape, steps: tuple[int, ...]
    ) -> None:
        self.system, self.config, self.shape, self.steps = system, config, shape, steps
        self.parent = array("I", [0])
        self.move = array("H", [0])
        # State 0 is the state after the opening (system prompt, user message).
        self.prefix = opening(shape)
        root = system.initial(config)
        for event in self.prefix:
            system.apply(root, event)
        self.root = (root, opening_usage())
        # The last path replayed: (state number, state, usage, its moves).
        self.stack: list[tuple[int, S, Usage, list[Move]]] = [
            (0, root, self.root[1], self._moves(system.truth(root), self.root[1]))
        ]

    @property
    def nbytes(self) -> int:
        return sum(a.buffer_info()[1] * a.itemsize for a in (self.parent, self.move))

    def found(self, parent: int, move: int) -> None:
        """Record a new state: the ``move``-th move of ``parent``."""
        self.parent.append(parent)
        self.move.append(move)

    def _moves(self, state: RuntimeState, usage: Usage) -> list[Move]:
        events = enabled_events(state, usage, self.shape, reduce=True)
        moves: list[Move] = list(events)
        if self.steps and state.pending and usage.waits < self.shape.max_waits:
            # the user comes back later while calls run
            users = [e for e in events if isinstance(e, UserMessage)]
            moves.extend(Later(e, t) for t in self.steps for e in users)
        if len(moves) > 0xFFFF:
            raise ConfigError(
                "shape",
                f"offers {len(moves)} events in one state; the explorer numbers them in 16 bits.",
                "shrink the shape (fewer sizes, calls or call specs).",
            )
        return moves

    def _lineage(self, node: int) -> list[int]:
        chain = [node]
        while node:
            node = self.parent[node]
            chain.append(node)
        chain.reverse()
        return chain

    def state(self, node: int) -> tuple[S, Usage, list[Move]]:
        """State ``node``, its usage and its moves (do not mutate)."""
        system = self.system
        chain = self._lineage(node)
        stack = self.stack
        keep = 1
        while keep < min(len(chain), len(stack)) and stack[keep][0] == chain[keep]:
            keep += 1
        del stack[keep:]
        for n in chain[keep:]:
            _, before, usage, moves = stack[-1]
            event, at, usage = _step(moves[self.move[n]], system.truth(before), usage)
            state = system.copy(before)
            system.apply(state, event, at)
            stack.append((n, state, usage, self._moves(system.truth(state), usage)))
        _, state, usage, moves = stack[-1]
        return state, usage, moves

    def timeline(self, node: int) -> tuple[list[Event], list[float]]:
        """The events from the start (the opening included) to state
        ``node``, and when each happened."""
        self.state(node)
        events: list[Event] = list(self.prefix)
        times = [float(i) for i in range(len(events))]
        for i, (n, *_) in enumerate(self.stack):
            if i:
                _, before, usage, moves = self.stack[i - 1]
                event, at, _ = _step(moves[self.move[n]], self.system.truth(before), usage)
                events.append(event)
                times.append(at)
        return events, times

"""Exhaustive bounded exploration: every event interleaving of a small
configuration, breadth first, over a networkx state graph.

Nodes are *canonical states*: a hashable key of everything that decides
what the runtime does next — the messages in context order, pending calls,
streams, spilled units, file versions, the incident bookkeeping — with
absolute ids renamed (messages by creation order, calls by their batch and
their progress) so that runs that differ only in numbering meet in one
node.  Symmetry reduction: calls of one batch with the same spec and the
same progress are interchangeable; their names are assigned after sorting,
and only one of those still waiting for a first chunk is expanded.  Edges
are events.  Successors come from ``state.copy()`` and
``apply(..., record=False)``.

Breadth first means the first counterexample met is a shortest one.  The
graph is capped at ``max_states`` nodes; a capped run says so and is no
proof.

Complexity: O(transitions · (context size + apply)); memory O(states):
a node is the 64-bit hash of its key, and frontier states are rebuilt by
replaying their path rather than kept.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import networkx as nx

from prunecheck.model.context import Message, Role
from prunecheck.model.events import Event
from prunecheck.model.incidents import Incident, IncidentKind
from prunecheck.model.policies import BUILTINS, Policy
from prunecheck.model.runtime import (
    CallRecord,
    CallStatus,
    RuntimeConfig,
    RuntimeState,
    apply,
    initial_state,
)
from prunecheck.model.trace import Trace

from .loading import load_policy
from .search import found_trace
from .shape import Shape, Usage, enabled_events, hits

__all__ = ["MAX_STATES", "ExploreResult", "canonical_key", "explore"]

#: Default cap on distinct states.
MAX_STATES = 200_000


@dataclass(frozen=True, slots=True)
class ExploreResult:
    """What an exploration saw.

    Attributes
    ----------
    states: distinct canonical states reached.
    transitions: events applied (edges tried, duplicates included).
    depth_reached: the deepest level fully expanded (or where it stopped).
    counterexample: a shortest trace to a hit, or None.
    incidents: every incident of replaying the counterexample.
    capped: True if ``max_states`` stopped the search before ``depth``.
    seconds: wall time (informational).
    """

    states: int
    transitions: int
    depth_reached: int
    counterexample: Trace | None
    incidents: tuple[Incident, ...]
    capped: bool = False
    seconds: float = 0.0


def _id_order(ident: str) -> tuple[int, str]:
    """Creation order of ids of one kind: ``m9`` before ``m10``."""
    return (len(ident), ident)


def _spec_key(record: CallRecord) -> tuple[Any, ...]:
    spec = record.spec
    return (spec.tool, spec.path, spec.effect.value, spec.background)


_ROLE = {role: role.value for role in Role}
_STATUS = {status: status.value for status in CallStatus}


def _timeless(policy: Policy) -> bool:
    """Whether the policy reads creation times only to order messages (every
    built-in but lowest_salience, which decays with age)."""
    inner = getattr(policy, "inner", policy)  # a guarded policy
    return type(inner) in _TIMELESS


_TIMELESS = frozenset(type(BUILTINS[name]()) for name in BUILTINS if name != "lowest_salience")


def canonical_key(state: RuntimeState, usage: Usage, *, timeless: bool = False
                  ) -> tuple[Any, ...]:
    """A hashable key of ``state``: equal keys behave the same from here on,
    up to renaming ids.

    Creation times enter as ages counted back from the next step (what a
    decaying salience reads) or, if ``timeless`` (the policy only orders by
    creation time), as dense ranks, so that events which only move the clock
    do not split states.

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
            ((_spec_key(r), _STATUS[r.status], r.version_seen, r.chunks, r.tokens,
              rank[r.target], r.lost, r.retry_of is not None), r.id)
            for r in (s.calls[c] for c in batch.calls))
        b = rank[bid]
        for pos, (_, cid) in enumerate(described):
            call_name[cid] = (b, pos)
        batch_keys.append((b, batch.tokens, batch.text, tuple(d for d, _ in described)))
    now = s.step_index
    times: dict[float, float] = {}
    if timeless:
        created = {m.created_at for m in ctx}
        created.update(m.created_at for m in spilled)
        times = {t: float(i) for i, t in enumerate(sorted(created))}

    def message_key(m: Message) -> tuple[Any, ...]:
        return (rank[m.id], _ROLE[m.role], m.tokens, m.turn,
                times[m.created_at] if timeless else now - m.created_at,
                tuple(sorted(call_name[c] for c in m.tool_calls)) if m.tool_calls else (),
                call_name[m.call_id], m.closed, rank[m.unit_id], m.text, m.first_chunk,
                m.chunks, m.cleared, tuple(rank[x] for x in m.summary_of), m.synthetic)

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
        tuple((rank[u], tuple(map(message_key, ms))) for u, ms in
              sorted(s.spilled.items(), key=lambda item: _id_order(item[0]))),
        None if stream is None else (rank[stream.batch], stream.chunks, stream.tokens,
                                     rank[stream.target], stream.lost),
        rank[s.last_user],
        None if s.rejected_units is None else tuple(mrank(u) for u in s.rejected_units),
        s.over_ceiling,
        tuple(sorted(rank[m] for m in s.orphans)),
        tuple(sorted(call_name[c] for c in s.unanswered)),
        tuple(sorted(reported, key=repr)),
    )


def _digest(key: tuple[Any, ...]) -> int:
    """The node of a key: its 64-bit hash.  Two distinct states collide with
    probability about n²/2⁶⁵ (3·10⁻⁸ at a million states); keeping the keys
    themselves would cost a kilobyte or more per state."""
    return hash(key)


def explore(policy_spec: str, config: RuntimeConfig, *, depth: int, shape: Shape,
            policy: Policy | None = None, target: frozenset[IncidentKind] | None = None,
            max_states: int = MAX_STATES) -> ExploreResult:
    """Explore every interleaving of ``shape``'s events up to ``depth`` events.

    Parameters
    ----------
    policy_spec, config:
        The policy (by spec, recorded in the trace) and the runtime.
    depth:
        Longest event sequence considered.
    shape:
        The bounds of the configuration; keep it small.
    policy:
        The policy object if already loaded; it must be deterministic and
        keep no state between calls.
    target:
        Stop on these incident kinds (violations if None).
    max_states:
        Stop after this many distinct states (``capped`` is then True).

    Returns
    -------
    ExploreResult
        With a shortest counterexample if any sequence of at most ``depth``
        events hits.
    """
    started = time.perf_counter()
    policy = policy if policy is not None else load_policy(policy_spec)
    timeless = _timeless(policy)
    graph: Any = nx.DiGraph()
    root = _digest(canonical_key(initial_state(config, policy, record=False), Usage(),
                                 timeless=timeless))
    graph.add_node(root, depth=0)
    parent: dict[int, tuple[int, Event]] = {}
    frontier = [root]
    transitions = 0
    level = 0
    capped = False
    rebuild = _Rebuild(config, policy, parent)
    while frontier and level < depth and not capped:
        following: list[int] = []
        for node in frontier:
            state, usage = rebuild.state(node)
            for event in enabled_events(state, usage, shape, reduce=True):
                new = state.copy()
                result = apply(new, event)
                transitions += 1
                if hits(result.incidents, target):
                    events = [*_path(parent, node), event]
                    trace, incidents = found_trace(
                        policy_spec, config, events, 0, policy,
                        {"driver": "explore", "depth": depth, "states": graph.number_of_nodes()})
                    return ExploreResult(graph.number_of_nodes(), transitions, level + 1, trace,
                                         incidents, False, time.perf_counter() - started)
                child = _digest(canonical_key(new, usage.after(event, state), timeless=timeless))
                if child not in graph:
                    if graph.number_of_nodes() >= max_states:
                        capped = True
                        break
                    graph.add_node(child, depth=level + 1)
                    parent[child] = (node, event)
                    following.append(child)
                graph.add_edge(node, child, event=event)
            if capped:
                break
        if not capped:
            level += 1
        frontier = following
    return ExploreResult(graph.number_of_nodes(), transitions, level, None, (), capped,
                         time.perf_counter() - started)


class _Rebuild:
    """States of frontier nodes, rebuilt by replaying their path from the
    root rather than kept: memory stays O(states) digests, not O(states)
    runtimes.  Siblings come in a row, so their parent is rebuilt once."""

    def __init__(self, config: RuntimeConfig, policy: Policy,
                 parent: dict[int, tuple[int, Event]]) -> None:
        self.config, self.policy, self.parent = config, policy, parent
        self.cached: tuple[int, RuntimeState, Usage] | None = None

    def replay(self, node: int) -> tuple[RuntimeState, Usage]:
        state = initial_state(self.config, self.policy, record=False)
        usage = Usage()
        for event in _path(self.parent, node):
            usage = usage.after(event, state)
            apply(state, event)
        return state, usage

    def state(self, node: int) -> tuple[RuntimeState, Usage]:
        if node not in self.parent:
            return self.replay(node)
        up, event = self.parent[node]
        if self.cached is None or self.cached[0] != up:
            self.cached = (up, *self.replay(up))
        _, base, usage = self.cached
        state = base.copy()
        usage = usage.after(event, state)
        apply(state, event)
        return state, usage


def _path(parent: dict[int, tuple[int, Event]], node: int) -> list[Event]:
    events: list[Event] = []
    while node in parent:
        node, event = parent[node]
        events.append(event)
    events.reverse()
    return events

"""The unit relation and the prune predicate, spec form: obviously right.

A unit is a connected component of the graph whose nodes are the messages
present, the calls and the batches, and whose edges are

* assistant message — each call it issued,
* call — each tool message answering it,
* call — its batch (so the results of one batch stay one unit even after
  the assistant message that issued them is gone).

This module is the oracle the fast index (:mod:`.context`,
:mod:`.boundary`) is tested against.  It is O(n + m) per question and is
never on a hot path.  networkx is imported by the functions that need it,
so that importing the model never loads it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from .boundary import ViolationReason
from .context import Message, Role

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["check_prune_spec", "unit_graph", "units_spec"]


Node = tuple[str, str]


def unit_graph(messages: Sequence[Message], batch_of_call: Mapping[str, str]) -> nx.Graph[Node]:
    """The call/result/batch graph over ``messages``.

    Parameters
    ----------
    messages: the messages present, in any order.
    batch_of_call: for every call id, the id of the batch (the assistant
        message) that issued it, whether or not that message is present.
    """
    import networkx as nx

    graph: nx.Graph[Node] = nx.Graph()
    for message in messages:
        graph.add_node(("msg", message.id))
        if message.role is Role.ASSISTANT:
            for call in message.tool_calls:
                graph.add_edge(("msg", message.id), ("call", call))
        if message.role is Role.TOOL and message.call_id is not None:
            graph.add_edge(("msg", message.id), ("call", message.call_id))
    for call, batch in batch_of_call.items():
        # Every call of a batch belongs to it, present or not: a pending call
        # whose result has not arrived yet still references its batch's unit.
        graph.add_edge(("call", call), ("batch", batch))
    return graph


def units_spec(
    messages: Sequence[Message], batch_of_call: Mapping[str, str]
) -> list[frozenset[str]]:
    """The partition of message ids into units, by connected components.

    Returns the units sorted by their first message in ``messages`` order.

    Examples
    --------
    >>> ms = [Message("m1", Role.ASSISTANT, 5, 1, 0.0, tool_calls=("c1", "c2")),
    ...       Message("m2", Role.TOOL, 5, 1, 1.0, call_id="c1"),
    ...       Message("m3", Role.USER, 5, 2, 2.0)]
    >>> [sorted(u) for u in units_spec(ms, {"c1": "m1", "c2": "m1"})]
    [['m1', 'm2'], ['m3']]
    """
    from networkx import connected_components

    graph = unit_graph(messages, batch_of_call)
    position = {m.id: i for i, m in enumerate(messages)}
    units = []
    for component in connected_components(graph):
        ids = frozenset(node[1] for node in component if node[0] == "msg")
        if ids:
            units.append(ids)
    units.sort(key=lambda u: min(position[m] for m in u))
    return units


def check_prune_spec(
    messages: Sequence[Message],
    batch_of_call: Mapping[str, str],
    pending_calls: Iterable[str],
    prune_ids: Iterable[str],
) -> set[tuple[ViolationReason, frozenset[str]]]:
    """The violations of removing ``prune_ids``, from first principles.

    Returns a set of ``(reason, unit)`` pairs, where unit is the unit's
    message ids; comparing it with :func:`.boundary.check_prune` needs only
    the unit each violation names.
    """
    from networkx import connected_components

    wanted = {m.id for m in messages} & set(prune_ids)
    pending = set(pending_calls)
    by_id = {m.id: m for m in messages}
    graph = unit_graph(messages, batch_of_call)
    out: set[tuple[ViolationReason, frozenset[str]]] = set()
    for component in connected_components(graph):
        unit = frozenset(node[1] for node in component if node[0] == "msg")
        chosen = unit & wanted
        if not chosen:
            continue
        if chosen != unit:
            out.add((ViolationReason.SPLIT_UNIT, unit))
        if any(not by_id[m].closed for m in chosen):
            out.add((ViolationReason.OPEN_MESSAGE, unit))
        calls = {node[1] for node in component if node[0] == "call"}
        if calls & pending:
            out.add((ViolationReason.PENDING_UNIT, unit))
    return out

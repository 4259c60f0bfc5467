"""Two age-based policies of issue 20: evict whole units idle for over a
minute, read from ``view.now`` and the messages' creation times.

* :func:`closed_for_a_minute` judges "idle" by ``closed`` alone.  A batch's
  call message is closed as soon as it is written, while its calls may
  still be running (a background test run, a build): a unit whose newest
  message is over 60 s old is evicted with its call pending, and the
  result that lands later is an orphan.  Unsafe: the trace is a batch with
  a background test run, a user message 90 s later while the run is still
  going, and the run's result.
* :func:`idle_for_a_minute` is the same policy with idleness judged right:
  every message closed *and* no call of the unit pending.  Safe.

Both keep the system prompt and the latest user message, and evict every
old unit at a check whatever the need (a TTL does that).
"""

from __future__ import annotations

from collections.abc import Callable

from prunecheck.model.context import Message, Role
from prunecheck.model.policies import ContextView

__all__ = ["MAX_AGE", "closed_for_a_minute", "idle_for_a_minute"]

#: Seconds after which an idle unit is evicted.
MAX_AGE = 60.0


def _old_units(view: ContextView, idle: Callable[[list[Message]], bool]) -> list[str]:
    units: dict[str, list[Message]] = {}
    for m in view.messages:
        units.setdefault(m.unit_id, []).append(m)
    last_user = next((m.id for m in reversed(view.messages) if m.role is Role.USER), None)
    out: list[str] = []
    for members in units.values():
        if any(m.role is Role.SYSTEM or m.id == last_user for m in members):
            continue
        newest = max(m.created_at for m in members)
        if view.now - newest > MAX_AGE and idle(members):
            out.extend(m.id for m in members)
    return out


def closed_for_a_minute(view: ContextView, need: int) -> list[str]:
    """Evict whole units over a minute old whose messages are all closed
    (the bug: a closed call message may still have its call running)."""
    return _old_units(view, lambda members: all(m.closed for m in members))


def idle_for_a_minute(view: ContextView, need: int) -> list[str]:
    """Evict whole units over a minute old that are idle: every message
    closed and no call of the unit pending."""
    pending = view.pending_calls
    return _old_units(
        view,
        lambda members: all(m.closed and not set(m.tool_calls) & pending for m in members),
    )

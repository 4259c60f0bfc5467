"""Gate check cost vs context size: the unit index against an O(n) check.

One gate check is :func:`prunecheck.model.boundary.check_prune` on the
context's index, with a prune set of about ten messages (whole, closed,
idle units: a valid prune, so every check does its full work).  Beside it,
in the same run, a straightforward O(n) check in the style of the domain
document's reference ``prune_context``: it reads a list of message dicts and
builds its by-unit map on every call.  Contexts of 1k, 10k and 100k messages
have a realistic shape (user messages, assistant text, parallel batches of
1–4 calls with their results, a batch still in flight at the end) and are
built by a seeded generator through the Context API.

    python benchmarks/run.py --only gate [--quick]
"""

from __future__ import annotations

import random
import statistics
import timeit
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from typing import Any

from prunecheck.model.boundary import check_prune
from prunecheck.model.context import Context, Message, Role

__all__ = ["TITLE", "run"]

TITLE = "Gate check cost vs context size"

SIZES = (1_000, 10_000, 100_000)
PRUNE_SIZE = 10
SEED = 20261114


class PruneBoundaryViolation(RuntimeError):
    """The O(n) check's refusal (a valid prune set never raises it)."""


def linear_check(
    messages: list[dict[str, object]],
    prune_ids: set[str],
    pending_units: set[str],
    open_ids: set[str],
) -> set[str]:
    """The O(n) check: refuse open messages, refuse a set that cuts a unit or
    touches a unit with a call in flight; return the closed prune set.

    It knows nothing but the message list, so it rebuilds the unit map on
    every call: O(n) in the size of the context.
    """
    touched_open = prune_ids & open_ids
    if touched_open:
        raise PruneBoundaryViolation(f"open message(s) {sorted(touched_open)}")
    members: dict[object, set[object]] = {}
    for message in messages:
        members.setdefault(message["unit_id"], set()).add(message["id"])
    units = {message["unit_id"] for message in messages if message["id"] in prune_ids}
    closed: set[str] = set()
    for unit in units:
        if not members[unit] <= prune_ids:
            raise PruneBoundaryViolation(f"cuts unit {unit}")
        if unit in pending_units:
            raise PruneBoundaryViolation(f"unit {unit} has a call in flight")
        closed |= {str(m) for m in members[unit]}
    return closed


@dataclass(frozen=True, slots=True)
class _Case:
    ctx: Context
    messages: list[dict[str, object]]
    pending_units: set[str]
    open_ids: set[str]
    prune: tuple[str, ...]


def _build(size: int, rng: random.Random) -> _Case:
    """A context of ``size`` messages, shaped like an agent's history."""
    ctx = Context()
    serial = 0
    call = 0

    def add(role: Role, unit: str | None = None, **kw: Any) -> str:
        nonlocal serial
        serial += 1
        mid = f"m{serial}"
        ctx.append(
            Message(
                mid,
                role,
                rng.randint(20, 2000),
                serial // 10,
                float(serial),
                unit_id=unit or mid,
                **kw,
            )
        )
        return mid

    add(Role.SYSTEM)
    while len(ctx) < size - 6:
        roll = rng.random()
        if roll < 0.25:
            add(Role.USER)
        elif roll < 0.45:
            add(Role.ASSISTANT)
        else:
            width = rng.randint(1, 4)
            calls = tuple(f"c{call + i + 1}" for i in range(width))
            call += width
            batch = add(Role.ASSISTANT, tool_calls=calls)
            for cid in calls:
                add(Role.TOOL, batch, call_id=cid)
    # The newest batch is still in flight: one result streaming, one not started.
    batch = add(Role.ASSISTANT, tool_calls=(f"c{call + 1}", f"c{call + 2}"))
    add(Role.TOOL, batch, call_id=f"c{call + 1}", closed=False)
    ctx.mark_pending(batch, f"c{call + 1}")
    ctx.mark_pending(batch, f"c{call + 2}")
    while len(ctx) < size:
        add(Role.USER)

    units = [
        ids
        for unit, ids in ctx.units()
        if not ctx.pending_in(unit)
        and all(ctx[m].closed and ctx[m].role is not Role.SYSTEM for m in ids)
    ]
    prune: list[str] = []
    while len(prune) < PRUNE_SIZE:
        prune.extend(rng.choice(units[len(units) // 4 : 3 * len(units) // 4]))
    prune = list(dict.fromkeys(prune))
    messages: list[dict[str, object]] = [
        {"id": m.id, "unit_id": m.unit_id, "role": m.role.value, "closed": m.closed} for m in ctx
    ]
    return _Case(ctx, messages, set(ctx.pending_units()), set(ctx.open_ids()), tuple(prune))


def _per_call(fn: Callable[[], object], repeats: int) -> float:
    """Median seconds per call over ``repeats`` timings of an auto-ranged loop."""
    timer = timeit.Timer(fn)
    number, _ = timer.autorange()
    return statistics.median(t / number for t in timer.repeat(repeat=repeats, number=number))


def _mark(ok: bool) -> str:
    return "✓" if ok else "✗"


def _table(rows: Iterable[tuple[int, int, float, float]]) -> list[str]:
    lines = [
        "| messages in context | prune set | index µs/check | O(n) µs/check | O(n) ÷ index |",
        "|---:|---:|---:|---:|---:|",
    ]
    for size, pruned, index, linear in rows:
        lines.append(
            f"| {size:,} | {pruned} | {index * 1e6:.2f} | {linear * 1e6:,.0f} | "
            f"{linear / index:,.0f}× |"
        )
    return lines


def run(quick: bool) -> str:
    """Measure both checks at every size, side by side; return markdown."""
    rng = random.Random(SEED)
    repeats = 3 if quick else 7
    rows = []
    for size in SIZES:
        case = _build(size, rng)
        prune_set = set(case.prune)
        assert check_prune(case.ctx, case.prune) == ()  # valid: both do their full work
        assert (
            linear_check(case.messages, prune_set, case.pending_units, case.open_ids) == prune_set
        )
        index = _per_call(partial(check_prune, case.ctx, case.prune), repeats)
        linear = _per_call(
            partial(linear_check, case.messages, prune_set, case.pending_units, case.open_ids),
            repeats,
        )
        rows.append((size, len(case.prune), index, linear))
    by_size = {size: (index, linear) for size, _, index, linear in rows}
    growth = by_size[100_000][0] / by_size[1_000][0]
    speedup = by_size[10_000][1] / by_size[10_000][0]
    lines = _table(rows)
    lines += [
        "",
        f"- Index cost at 100k ÷ at 1k: **{growth:.2f}×** (target ≤ 2×) {_mark(growth <= 2)}",
        f"- O(n) ÷ index at 10k: **{speedup:,.0f}×** (target ≥ 100×) {_mark(speedup >= 100)}",
        "",
        f"Median of {repeats} timings of an auto-ranged loop per figure; prune sets are whole, "
        "closed, idle units from the middle of the context (a valid prune: neither check stops "
        f"early). Contexts and prune sets come from `random.Random({SEED})`.",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(run(quick=True))

"""The policy cage's cost per call: the same user policy in-process and caged.

A user policy (oldest-first, written as a user would: reads
``view.messages``, returns ids) is loaded twice from one file: in-process
with :func:`prunecheck.sim.subjects.loader.load_local` and caged in its worker
process with :func:`~prunecheck.sim.subjects.loader.load_policy`.  Each answers the
same ``select(view, need)`` call on contexts of 10, 100 and 1,000 messages;
the difference is the cage's cost per call (copying the view over a pipe,
reading the proposal back).  Also measured: starting a worker (once per
policy per process) and a whole simulated run with each, side by side.

    python benchmarks/run.py --only cage [--quick]
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.context import Context, Message, Role
from prunecheck.model.policies import ContextView, Policy
from prunecheck.sim.drivers.simulator import simulate
from prunecheck.sim.drivers.workload import load_at
from prunecheck.sim.subjects.cage import close_all
from prunecheck.sim.subjects.loader import load_local, load_policy, model_system

__all__ = ["TITLE", "run"]

TITLE = "Policy cage: cost per call of a caged user policy"

POLICY = """
def select(view, need):
    out, freed = [], 0
    for m in view.messages:
        if freed >= need:
            break
        if m.role != "system" and m.closed:
            out.append(m.id)
            freed += m.tokens
    return out
"""


def _view(size: int) -> ContextView:
    ctx = Context()
    ctx.append(Message("m0", Role.SYSTEM, 200, 0, 0.0, unit_id="m0"))
    for i in range(1, size):
        role = Role.USER if i % 2 else Role.ASSISTANT
        ctx.append(
            Message(
                f"m{i}",
                role,
                50 + i % 300,
                i // 4,
                float(i),
                unit_id=f"m{i}",
                text="some text " * 5,
            )
        )
    return ContextView(
        ctx, pending_calls=frozenset(), budget=10_000, now=float(size), turn=size // 4
    )


def _per_call(policy: Policy, view: ContextView, calls: int) -> float:
    """Median over 5 rounds of the seconds per call."""
    rounds = []
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(calls):
            list(policy.select(view, 400))
        rounds.append((time.perf_counter() - started) / calls)
    return statistics.median(rounds)


def _timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def run(quick: bool) -> str:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "oldest.py"
        path.write_text(POLICY, encoding="utf-8")
        spec = f"{path}:select"

        def start_worker() -> None:
            close_all()
            load_policy(spec)

        close_all()
        start = statistics.median(_timed(start_worker) for _ in range(3 if quick else 5))
        local, caged = load_local(spec), load_policy(spec)
        lines = [
            "| context (messages) | in-process µs/call | caged µs/call | cage cost "
            "µs/call | ratio |",
            "|---:|---:|---:|---:|---:|",
        ]
        for size in (10, 100) if quick else (10, 100, 1_000):
            view = _view(size)
            calls = 200 if quick else (2_000 if size <= 100 else 300)
            a, b = _per_call(local, view, calls), _per_call(caged, view, calls)
            lines.append(
                f"| {size:,} | {a * 1e6:,.1f} | {b * 1e6:,.1f} | "
                f"{(b - a) * 1e6:,.1f} | {b / a:,.1f}× |"
            )
        config = RuntimeConfig(budget=8_000, hard_ceiling=12_000)
        horizon = 300.0 if quick else 1_800.0
        sims = {}
        for label, policy in (("in-process", local), ("caged", caged)):
            started = time.perf_counter()
            result = simulate(model_system(spec, policy), config, load_at(0.5), 1, horizon=horizon)
            sims[label] = (time.perf_counter() - started, result.counters.get("policy_calls", 0))
        close_all()
    (t_local, n_local), (t_caged, n_caged) = sims["in-process"], sims["caged"]
    lines += [
        "",
        f"Starting a worker (once per policy and process; it imports the policy): "
        f"{start * 1e3:.0f} ms (median).",
        "",
        f"One simulated run (load 0.5, seed 1, {horizon:g} simulated seconds, budget 8,000): "
        f"in-process {t_local:.2f} s ({n_local} policy calls), caged {t_caged:.2f} s "
        f"({n_caged} policy calls): {t_caged / t_local:.2f}× the in-process time.",
    ]
    return "\n".join(lines)

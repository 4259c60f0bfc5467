"""The simulator's driver overhead over the model's ``apply``, and
budget-check cost against context size on a run that reaches 100k messages.

1. Driver overhead: one simulated run (SimPy processes, random draws, the
   trace, the tally, every event through the model's ``apply``) against the
   same events applied to fresh runtimes by a bare loop — ``apply`` alone,
   what no driver can beat — measured side by side, best of five.  Target:
   the simulator at ≤ 1.5× ``apply`` alone; and ``apply``'s cost per event
   at load 0.75.
2. Check cost: a long run with a budget so large that nothing is pruned
   grows one agent's context to 100k messages; at 1k, 10k and 100k
   messages a copy of the runtime gets a budget equal to what it holds and
   goes on with the run's next events, each append now firing a check that
   prunes; the cost of those events is measured, for ``unit_safe`` under
   gate ``commit`` (it reads only the front of the context) and, for
   contrast, ``lowest_salience`` (it sorts every message).
"""

from __future__ import annotations

import statistics
import time
from dataclasses import replace

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.gates import Gate
from prunecheck.model.runtime import apply
from prunecheck.model.state import RuntimeState, initial_state
from prunecheck.model.trace import Trace
from prunecheck.sim.drivers.simulator import simulate
from prunecheck.sim.drivers.workload import Load, load_at
from prunecheck.sim.subjects.loader import load_policy, load_system
from prunecheck.sim.subjects.time_limit import DEFAULT_TIMEOUT, time_limited

TITLE = "Simulator: driver overhead over apply"

#: The simulator's time per event over ``apply``'s alone, at most.
_TARGET = 1.5
_REPEATS = 5
#: (simulator µs/event, apply µs/event) of each row.
_SPLITS: list[tuple[float, float]] = []


def _apply_alone(traces: tuple[Trace, ...], policy: str) -> float:
    """Seconds to apply every event of ``traces`` to fresh runtimes (the
    policy time-limited as in the simulator), nothing else."""
    loaded = time_limited(load_policy(policy))
    took = 0.0
    for trace in traces:
        state = initial_state(trace.config, loaded, record=False)
        times = trace.times or ()
        started = time.perf_counter()
        for event, at in zip(trace.events, times, strict=True):
            apply(state, event, at)
        took += time.perf_counter() - started
    return took


def _throughput(policy: str, gate: Gate, level: float, horizon: float) -> list[str]:
    config = RuntimeConfig(gate=gate)
    sim = applied = float("inf")
    events = 0
    for _ in range(_REPEATS):
        started = time.perf_counter()
        result = simulate(
            load_system(policy, DEFAULT_TIMEOUT), config, load_at(level), 1, horizon=horizon
        )
        sim = min(sim, (time.perf_counter() - started) / result.events)
        events = result.events
        applied = min(applied, _apply_alone(result.traces, policy) / events)
    ratio = sim / applied
    verdict = "met" if ratio <= _TARGET else "not met"
    _SPLITS.append((sim * 1e6, applied * 1e6))
    return [
        f"| {policy} · gate {gate.value} · load {level:g} | {events:,} | {sim * 1e6:.1f} | "
        f"{applied * 1e6:.1f} | {(sim - applied) * 1e6:.1f} | **{ratio:.2f}×** ({verdict}) |"
    ]


def _long_trace(messages: int, extra: int) -> Trace:
    """A one-agent run with an unreachable budget: nothing is pruned, so the
    context grows past ``messages``; ``extra`` events follow for measuring."""
    budget = 2_000_000_000
    config = RuntimeConfig(budget=budget, hard_ceiling=budget, gate=Gate.COMMIT)
    # Token sizes scale with tightness × budget: keep a turn near 3,000 tokens.
    # One long session with no giant outputs: a session's natural end
    # (session_turns user messages) would start a fresh, empty context, and a
    # giant output (sized against the budget, here unreachable on purpose) would
    # force a prune, long before the largest checkpoint.
    load = Load(
        agents=1,
        user_interval=1.0,
        batch_width=3.0,
        latency_tail=0.5,
        chunks=1.0,
        tightness=3_000 / budget,
        background=0.0,
        edit_interval=60.0,
        session_turns=10**9,
        giant_share=0.0,
    )
    result = simulate(
        load_system("unit_safe", DEFAULT_TIMEOUT),
        config,
        load,
        1,
        horizon=1e9,
        max_events=int(messages * 1.3) + extra + 2_000,
    )
    return result.traces[0]


def _steady(state: RuntimeState, trace: Trace, start: int, policy: str, limit: int) -> list[float]:
    """From a copy of ``state``, with the budget set to what it holds, go on
    with the trace's next events: every append now fires a check that must
    prune (checks after every append).  Returns the seconds of each event
    that called the policy, up to ``limit`` of them."""
    probe = state.copy()
    probe.policy = load_policy(policy)
    probe.config = replace(probe.config, budget=probe.context.used)
    times = trace.times or ()
    costs: list[float] = []
    for index in range(start, len(trace.events)):
        before = probe.counters.get("policy_calls", 0)
        started = time.perf_counter()
        apply(probe, trace.events[index], times[index])
        took = time.perf_counter() - started
        if probe.counters.get("policy_calls", 0) > before:
            costs.append(took)
            if len(costs) >= limit:
                break
    return costs


def _check_rows(sizes: tuple[int, ...], extra: int, checks: int) -> tuple[list[str], float]:
    started = time.perf_counter()
    trace = _long_trace(sizes[-1], extra)
    state = initial_state(trace.config, load_policy("unit_safe"), record=False)
    times = trace.times or ()
    rows: list[str] = []
    base: dict[str, float] = {}
    want = list(sizes)
    for index, event in enumerate(trace.events):
        if not want:
            break
        apply(state, event, times[index])
        if len(state.context) < want[0] or state.pending or state.assistant_stream:
            continue
        want.pop(0)
        cells = [f"{len(state.context):,}"]
        for policy, limit in (("unit_safe", checks), ("lowest_salience", 5)):
            costs = _steady(state, trace, index + 1, policy, limit)
            median = statistics.median(costs)
            base.setdefault(policy, median)
            cells += (
                [
                    f"{median * 1e6:,.1f}",
                    f"{statistics.mean(costs) * 1e6:,.1f}",
                    f"{median / base[policy]:.2f}×",
                ]
                if policy == "unit_safe"
                else [f"{median * 1e6:,.0f}", f"{median / base[policy]:.0f}×"]
            )
        rows.append("| " + " | ".join(cells) + " |")
    if want:
        rows.append(
            f"\n**The run ended at {len(state.context):,} messages: checkpoints "
            f"{want} were not reached.**"
        )
    return rows, time.perf_counter() - started


def run(quick: bool) -> str:
    _SPLITS.clear()
    lines = [
        "Microseconds per event of one simulated run (SimPy, random draws, trace, tally and "
        "the model's `apply`) against the same events applied by a bare loop to fresh "
        "runtimes (*apply alone*: what no driver can beat); best of five, interleaved.  "
        f"Target: the simulator at ≤ {_TARGET:g}× apply alone.",
        "",
        "| run | events | simulator µs/event | apply alone µs/event | driver µs/event | "
        "simulator ÷ apply |",
        "|---|---|---|---|---|---|",
    ]
    horizon = 600.0 if quick else 3000.0
    lines += _throughput("unit_safe", Gate.COMMIT, 0.75, horizon)
    lines += _throughput("recency", Gate.SPILL, 0.75, horizon)
    lines += _throughput("lowest_salience", Gate.NONE, 0.5, horizon / 2)
    sim_us, apply_us = _SPLITS[0]
    lines += [
        "",
        f"At load 0.75 (first row) `apply` costs {apply_us:.1f} µs an event and the driver "
        f"adds {sim_us - apply_us:.1f} µs ({sim_us / apply_us:.2f}×).",
    ]
    sizes = (1_000, 10_000) if quick else (1_000, 10_000, 100_000)
    checks = 500 if quick else 2_000
    rows, took = _check_rows(sizes, 4 * checks, checks)
    lines += [
        "",
        "Budget-check cost against context size: one agent runs with a budget it never "
        f"reaches until its context holds {', '.join(f'{n:,}' for n in sizes)} messages; "
        "from there (a copy) the "
        "budget is set to what it holds, so every append fires a check that must prune, and "
        f"the next {checks:,} such events are timed (the event's append included).  "
        "lowest_salience sorts every message, for contrast (5 checks).  "
        f"Generating and replaying the run took {took:.0f} s.",
        "",
        "| messages in context | unit_safe · commit: median µs/event | mean | median vs 1k | "
        "lowest_salience · commit: median µs/event | vs 1k |",
        "|---|---|---|---|---|---|",
        *rows,
    ]
    return "\n".join(lines) + "\n"

"""Simulator throughput against bare SimPy, and budget-check cost against
context size on a run that reaches 100k messages.

1. Throughput: one simulated run (events through the model's ``apply``)
   against a bare SimPy loop doing the same number of timeouts, measured
   side by side, best of five; plus the same trace replayed through
   ``apply`` alone, which bounds what any driver could reach.
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

import simpy

from prunecheck.model.gates import Gate
from prunecheck.model.runtime import RuntimeConfig, RuntimeState, apply, initial_state
from prunecheck.model.trace import Trace, replay
from prunecheck.sim.load import Load, load_at
from prunecheck.sim.loading import load_policy
from prunecheck.sim.simulator import simulate

TITLE = "Simulator throughput"

_TARGET = 0.25
_REPEATS = 5
#: Per-event microseconds (simulator, apply only, bare SimPy) of each throughput row.
_SPLITS: list[tuple[float, float, float]] = []


def _bare_simpy(n: int) -> float:
    """Timeouts per second of a trivial SimPy process doing ``n`` timeouts
    (at least 100,000, so that the rate is not a timer artefact)."""
    n = max(n, 100_000)
    env = simpy.Environment()

    def tick() -> simpy.events.ProcessGenerator:
        timeout = env.timeout
        for _ in range(n):
            yield timeout(1.0)

    env.process(tick())
    started = time.perf_counter()
    env.run()
    return n / (time.perf_counter() - started)


def _throughput(policy: str, gate: Gate, level: float, horizon: float) -> list[str]:
    config = RuntimeConfig(gate=gate)
    sim = bare = applied = 0.0
    events = 0
    for _ in range(_REPEATS):
        started = time.perf_counter()
        result = simulate(policy, config, load_at(level), 1, horizon=horizon)
        sim = max(sim, result.events / (time.perf_counter() - started))
        events = result.events
        bare = max(bare, _bare_simpy(events))
        loaded = load_policy(policy)
        started = time.perf_counter()
        for trace in result.traces:
            for _ in replay(trace, loaded, record=False):
                pass
        applied = max(applied, events / (time.perf_counter() - started))
    verdict = "met" if sim / bare >= _TARGET else "not met"
    _SPLITS.append((1e6 / sim, 1e6 / applied, 1e6 / bare))
    return [f"| {policy} · gate {gate.value} · load {level:g} | {events:,} | {sim:,.0f} | "
            f"{applied:,.0f} | {bare:,.0f} | **{sim / bare:.1%}** ({verdict}) | "
            f"{applied / bare:.1%} |"]


def _long_trace(messages: int, extra: int) -> Trace:
    """A one-agent run with an unreachable budget: nothing is pruned, so the
    context grows past ``messages``; ``extra`` events follow for measuring."""
    budget = 2_000_000_000
    config = RuntimeConfig(budget=budget, hard_ceiling=budget, gate=Gate.COMMIT)
    # Token sizes scale with tightness × budget: keep a turn near 3,000 tokens.
    load = Load(agents=1, user_interval=1.0, batch_width=3.0, latency_tail=0.5, chunks=1.0,
                tightness=3_000 / budget, background=0.0, edit_interval=60.0)
    result = simulate("unit_safe", config, load, 1, horizon=1e9,
                      max_events=int(messages * 1.3) + extra + 2_000)
    return result.traces[0]


def _steady(state: RuntimeState, trace: Trace, start: int, policy: str, limit: int
            ) -> list[float]:
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
            cells += [f"{median * 1e6:,.1f}", f"{statistics.mean(costs) * 1e6:,.1f}",
                      f"{median / base[policy]:.2f}×"] if policy == "unit_safe" else \
                [f"{median * 1e6:,.0f}", f"{median / base[policy]:.0f}×"]
        rows.append("| " + " | ".join(cells) + " |")
    if want:
        rows.append(f"\n**The run ended at {len(state.context):,} messages: checkpoints "
                    f"{want} were not reached.**")
    return rows, time.perf_counter() - started


def run(quick: bool) -> str:
    _SPLITS.clear()
    lines = [
        "Events per second of one simulated run (every event through the model's `apply`), "
        "against a bare SimPy process doing the same number of timeouts in the same run; "
        "best of five, interleaved.  *apply only* replays the same traces without SimPy: no "
        f"driver can beat it.  Target: the simulator at ≥ {_TARGET:.0%} of bare SimPy.",
        "",
        "| run | events | simulator ev/s | apply only ev/s | bare SimPy timeouts/s | "
        "simulator / bare | apply only / bare |",
        "|---|---|---|---|---|---|---|",
    ]
    horizon = 600.0 if quick else 3000.0
    lines += _throughput("unit_safe", Gate.COMMIT, 0.75, horizon)
    lines += _throughput("recency", Gate.SPILL, 0.75, horizon)
    lines += _throughput("lowest_salience", Gate.NONE, 0.5, horizon / 2)
    sim_us, apply_us, bare_us = _SPLITS[0]
    lines += [
        "",
        f"Where the time goes (first row): {sim_us:.1f} µs per event in the simulator, of which "
        f"{apply_us:.1f} µs is the model's `apply` itself and {sim_us - apply_us:.1f} µs the "
        f"driver (SimPy scheduling, random draws, bookkeeping); a bare SimPy timeout costs "
        f"{bare_us:.2f} µs.  Reaching {_TARGET:.0%} would need the whole event in "
        f"{bare_us / _TARGET:.1f} µs, below what `apply` alone takes.",
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

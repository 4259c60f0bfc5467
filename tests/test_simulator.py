"""Tests of the SimPy simulator (prunecheck.sim.drivers.simulator, .agents, .world, .load)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

from prunecheck.model.actions import Action
from prunecheck.model.config import CheckAt, RuntimeConfig
from prunecheck.model.errors import ConfigError, PolicyError
from prunecheck.model.events import (
    BudgetCheck,
    Effect,
    ExternalWrite,
    Invoke,
    IssueBatch,
    NewSession,
    ResultChunk,
    Retry,
    SystemPrompt,
    UserMessage,
)
from prunecheck.model.exposure import ANY_VIOLATION, ORPHAN_REJECTION
from prunecheck.model.gates import Gate
from prunecheck.model.model_system import ModelSystem
from prunecheck.model.policies import ContextView, FunctionPolicy
from prunecheck.model.system import replay
from prunecheck.model.trace import Trace, dumps, loads
from prunecheck.sim.drivers.agents import TOOL_TIMEOUT
from prunecheck.sim.drivers.simulator import RunResult, simulate, tally_trace
from prunecheck.sim.drivers.workload import SESSION_TURNS, Load, load_at
from prunecheck.sim.stats.sessions import SessionEnd
from prunecheck.sim.subjects.loader import load_system, model_system
from prunecheck.sim.subjects.time_limit import DEFAULT_TIMEOUT

HORIZON = 240.0
STRUCTURAL = (
    "invalid_prune",
    "orphaned_result",
    "unanswered_call",
    "provider_rejection",
    "duplicated_side_effect",
    "truncated_payload",
)


def _run(
    policy: str = "lowest_salience",
    gate: Gate = Gate.NONE,
    level: float = 0.8,
    seed: int = 7,
    **knobs: Any,
) -> RunResult:
    config = RuntimeConfig(gate=gate, **knobs)
    return simulate(
        load_system(policy, DEFAULT_TIMEOUT), config, load_at(level), seed, horizon=HORIZON
    )


def _replayed(result: RunResult, policy: str) -> dict[str, object]:
    """The simulator's counts recomputed from a JSON round trip of every trace."""
    incidents: dict[str, int] = {}
    exposed: dict[str, int] = {}
    invocations = events = 0
    deferred = 0.0
    errors = []
    for trace in result.traces:
        tally, error = tally_trace(loads(dumps(trace)), load_system(policy))
        for k, v in tally.incidents.items():
            incidents[k] = incidents.get(k, 0) + v
        for k, v in tally.exposed.items():
            exposed[k] = exposed.get(k, 0) + v
        invocations += tally.invocations
        events += tally.events
        deferred += tally.deferred_time
        if error:
            errors.append(error)
    return {
        "incidents": incidents,
        "exposed": exposed,
        "invocations": invocations,
        "events": events,
        "deferred": round(deferred, 3),
        "errors": errors,
    }


@pytest.mark.parametrize(
    ("policy", "gate", "check_at"),
    [
        ("lowest_salience", Gate.NONE, CheckAt.AFTER_APPEND),
        ("clear_old_results", Gate.NONE, CheckAt.AFTER_APPEND),
        ("turn_window", Gate.REFERENCE, CheckAt.AFTER_BATCH),
        ("recency", Gate.COMMIT, CheckAt.AFTER_APPEND),
        ("summarize_prefix", Gate.SPILL, CheckAt.BEFORE_INVOKE),
    ],
)
def test_every_trace_replays_to_the_counted_incidents(
    policy: str, gate: Gate, check_at: CheckAt
) -> None:
    result = _run(policy, gate, check_at=check_at)
    again = _replayed(result, policy)
    counted = {k: v for k, v in result.incidents.items() if v}
    assert again["incidents"] == counted
    assert again["exposed"] == result.exposed
    assert again["invocations"] == result.invocations > 0
    assert again["events"] == result.events == sum(len(t.events) for t in result.traces)
    assert again["deferred"] == result.time_deferred
    assert again["errors"] == []


def test_the_same_seed_gives_byte_identical_traces_and_results() -> None:
    first, second = _run(seed=11), _run(seed=11)
    assert [dumps(t) for t in first.traces] == [dumps(t) for t in second.traces]
    assert first == second
    other = _run(seed=12)
    assert [dumps(t) for t in other.traces] != [dumps(t) for t in first.traces]


def test_agents_have_their_own_traces_and_see_each_others_writes() -> None:
    load = load_at(1.0, write_share=0.5)
    result = simulate(
        load_system("unit_safe", DEFAULT_TIMEOUT),
        RuntimeConfig(),
        load,
        3,
        horizon=HORIZON,
    )
    assert len(result.traces) == load.agents == 4
    assert [t.meta["agent"] for t in result.traces] == [0, 1, 2, 3]
    writes_by = [
        [
            c.path
            for e in t.events
            if isinstance(e, IssueBatch)
            for c in e.calls
            if c.effect is Effect.WRITE
        ]
        for t in result.traces
    ]
    seen_by = [[e.path for e in t.events if isinstance(e, ExternalWrite)] for t in result.traces]
    assert all(writes_by) and all(seen_by)
    # Every write of agent 0 reaches agent 1 as an external write (among the editor's).
    assert len(seen_by[1]) >= len(writes_by[0])


def test_the_simulator_never_prunes_or_checks_itself() -> None:
    result = _run("recency", check_at=CheckAt.AFTER_BATCH)
    kinds = {type(e) for t in result.traces for e in t.events}
    assert BudgetCheck not in kinds
    assert {UserMessage, IssueBatch, ResultChunk, Invoke} <= kinds
    assert result.counters["checks"] > 0


def test_users_write_while_batches_are_in_flight_and_background_calls_span_turns() -> None:
    result = simulate(
        load_system("unit_safe", DEFAULT_TIMEOUT),
        RuntimeConfig(),
        load_at(1.0, background=0.3),
        5,
        horizon=HORIZON,
    )
    mid_batch = spanning = 0
    for trace in result.traces:
        started: dict[str, int] = {}
        for step, state in replay(trace, load_system("unit_safe"), record=False):
            event = step.event
            if isinstance(event, UserMessage) and len(state.pending) > 0:
                mid_batch += 1
            if isinstance(event, IssueBatch):
                for cid, record in state.calls.items():
                    if record.spec.background and cid not in started:
                        started[cid] = state.turn
            if isinstance(event, ResultChunk) and event.call in started and event.last:
                spanning += state.turn > started[event.call]
    assert mid_batch > 0
    assert spanning > 0


def test_a_rejected_invocation_is_retried_max_retries_times_then_the_session_aborts() -> None:
    for retries in (0, 2):
        result = _run("lowest_salience", level=1.0, max_retries=retries)
        assert result.incidents["provider_rejection"] > 0
        assert result.incidents["session_abort"] > 0
        aborted = [s for s in result.sessions if s.end is SessionEnd.ABORT]
        assert len(aborted) == result.incidents["session_abort"]
        for trace in result.traces:
            run = longest = 0
            for event in trace.events:
                if isinstance(event, Invoke | Retry):
                    run = run + 1 if isinstance(event, Retry) else 0
                    longest = max(longest, run)
            assert longest <= retries
            # After every abort the agent opens a fresh session: system + user.
            for i, event in enumerate(trace.events):
                if isinstance(event, NewSession):
                    assert isinstance(trace.events[i + 1], SystemPrompt)
        # Every aborted session saw a violation before it ended (the rejection).
        assert all(s.has(ANY_VIOLATION) for s in aborted)


def test_sessions_end_naturally_after_their_turns_and_the_last_is_censored() -> None:
    result = _run("unit_safe", level=1.0)
    ends = [s.end for s in result.sessions]
    assert SessionEnd.NATURAL in ends and SessionEnd.ABORT not in ends
    natural = [s for s in result.sessions if s.end is SessionEnd.NATURAL]
    assert all(s.turns >= SESSION_TURNS for s in natural)
    # One censored session per agent: the one the horizon cut.
    assert ends.count(SessionEnd.CENSORED) == load_at(1.0).agents
    assert sum(s.invocations for s in result.sessions) == result.invocations
    assert result.counters["sessions"] == len(result.sessions) - load_at(1.0).agents


def test_a_multi_session_trace_replays_to_the_same_sessions() -> None:
    result = _run("recency", level=0.9, seed=3)
    replayed = []
    for trace in result.traces:
        assert sum(isinstance(e, NewSession) for e in trace.events) >= 1
        tally, error = tally_trace(loads(dumps(trace)), load_system("recency"))
        assert error is None
        replayed.extend(tally.sessions)
    assert tuple(replayed) == result.sessions


def test_a_policy_that_breaks_everything_cannot_livelock_a_run() -> None:
    """Evicting every message at every check, with no retries: each session
    aborts, the next one starts fresh, and the run ends at its horizon with
    work in proportion to it."""

    def select(view: ContextView, need: int) -> Iterable[str | Action]:
        return [m.id for m in view.messages]

    policy = FunctionPolicy(select, "evict_all")
    config = RuntimeConfig(budget=2000, hard_ceiling=3000, max_retries=0)
    short = simulate(model_system("evict_all", policy), config, load_at(1.0), 1, horizon=100.0)
    long = simulate(model_system("evict_all", policy), config, load_at(1.0), 1, horizon=400.0)
    assert short.error is None and long.error is None
    assert long.incidents["session_abort"] > short.incidents["session_abort"] > 0
    assert long.events < 10 * short.events
    assert all(t.meta["end"] <= 400.0 for t in long.traces)


def test_raw_policy_breaks_under_load_and_the_commit_gate_does_not() -> None:
    raw = _run("lowest_salience", Gate.NONE, level=1.0)
    safe = _run("lowest_salience", Gate.COMMIT, level=1.0)
    assert raw.incidents["orphaned_result"] > 0
    assert raw.incidents["duplicated_side_effect"] > 0
    assert raw.exposed[ANY_VIOLATION] > 0
    assert all(safe.incidents[k] == 0 for k in STRUCTURAL)
    assert safe.incidents["deferral"] > 0 and safe.time_deferred > 0


def _bad(result: object) -> FunctionPolicy:
    def select(view: ContextView, need: int) -> Iterable[str | Action]:
        if result == "raise":
            raise RuntimeError("boom")
        return result  # type: ignore[return-value]  # garbage on purpose

    return FunctionPolicy(select, "bad")


@pytest.mark.parametrize(
    ("returned", "message"),
    [
        ("raise", "raised RuntimeError: boom"),
        (["m999"], "unknown message id 'm999'"),
        (42, "got int"),
    ],
)
def test_a_failing_policy_stops_the_run_cleanly_with_its_message(
    returned: object, message: str
) -> None:
    policy = _bad(returned)
    result = simulate(
        model_system("bad.py:select", policy),
        RuntimeConfig(budget=2000, hard_ceiling=3000),
        load_at(0.5),
        2,
        horizon=HORIZON,
    )
    assert result.error is not None and message in result.error
    assert "policy 'bad'" in result.error
    assert result.error.startswith("agent ")
    agent = int(result.error.split()[1].rstrip(":"))
    trace = result.traces[agent]
    with pytest.raises(PolicyError, match=message):
        for _ in replay(trace, ModelSystem(policy), record=False):
            pass
    # The trace ends with the failing event; everything before it replays.
    tally, error = tally_trace(trace, ModelSystem(policy))
    assert error is not None and message in error
    assert tally.events == len(trace.events) - 1


def test_max_events_stops_the_run() -> None:
    result = simulate(
        load_system("recency", DEFAULT_TIMEOUT),
        RuntimeConfig(),
        load_at(1.0),
        1,
        horizon=HORIZON,
        max_events=50,
    )
    assert result.events == 50 == sum(len(t.events) for t in result.traces)
    assert result.error is None


def test_a_bad_horizon_or_spec_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="horizon"):
        simulate(load_system("recency", DEFAULT_TIMEOUT), RuntimeConfig(), Load(), 1, horizon=0)
    with pytest.raises(PolicyError, match="no_such_policy"):
        simulate(
            load_system("no_such_policy", DEFAULT_TIMEOUT),
            RuntimeConfig(),
            Load(),
            1,
        )


def test_tally_counts_exposure_per_invocation() -> None:
    trace = loads(_DOCUMENTED_TRACE)
    tally, error = tally_trace(trace, load_system(trace.policy))
    assert error is None
    assert tally.invocations == 3
    # Orphans and the cut appear before the 2nd invocation, which is rejected;
    # the retry's duplicate and new orphan before the 3rd, rejected again.
    assert tally.exposed["orphaned_result"] == 2
    assert tally.exposed["provider_rejection"] == 2
    assert tally.exposed[ORPHAN_REJECTION] == 2
    assert tally.exposed["duplicated_side_effect"] == 1
    assert tally.exposed[ANY_VIOLATION] == 2
    assert tally.incidents["orphaned_result"] == 4


def test_load_levels_map_to_growing_knobs_and_round_trip() -> None:
    low, high = load_at(0.0), load_at(1.0)
    for name in ("agents", "batch_width", "latency_tail", "chunks", "tightness", "background"):
        assert getattr(high, name) > getattr(low, name), name
    assert high.user_interval < low.user_interval
    assert Load.from_json(high.to_json()) == high
    with pytest.raises(ConfigError, match="load level"):
        load_at(1.5)
    with pytest.raises(ConfigError, match=r"load\.batch_width"):
        Load(batch_width=0.5)
    with pytest.raises(ConfigError, match="unknown knob"):
        Load.from_json({"agent": 3})
    with pytest.raises(ConfigError, match=r"load\.agents.*integer"):
        Load.from_json({"agents": 2.5})


def test_traces_name_their_load_and_replay_without_the_simulator() -> None:
    result = _run("token_span", level=0.3)
    trace = loads(dumps(result.traces[0]))
    assert isinstance(trace, Trace)
    assert Load.from_json(trace.meta["load"]) == load_at(0.3)
    assert trace.times is not None and list(trace.times) == sorted(trace.times)


_DOCUMENTED_TRACE = """{
  "format": "prunecheck-trace", "version": 1, "seed": 0, "policy": "lowest_salience",
  "config": {"budget": 3000, "hard_ceiling": 4000},
  "events": [
    {"kind": "system", "tokens": 200},
    {"kind": "user", "tokens": 1200, "text": "Summarize the repository layout"},
    {"kind": "assistant", "tokens": 900},
    {"kind": "user", "tokens": 300, "text": "Read the config, grep for TODO and stat the log"},
    {"kind": "invoke"},
    {"kind": "batch", "calls": [{"tool": "read_file", "path": "src/app.py"},
      {"tool": "grep", "path": "src"}, {"tool": "stat", "path": "app.log"}], "tokens": 90},
    {"kind": "result", "call": "c1", "tokens": 700},
    {"kind": "write", "path": "src/app.py"},
    {"kind": "result", "call": "c2", "tokens": 300},
    {"kind": "result", "call": "c3", "tokens": 60},
    {"kind": "invoke"},
    {"kind": "retry"},
    {"kind": "invoke"}
  ]
}"""


def test_slow_calls_run_for_minutes_while_users_write_and_checks_fire() -> None:
    # issue 20: a test run or a build minutes long, pending while the user
    # goes on writing and the runtime's budget checks fire on each append
    system = load_system("unit_safe", DEFAULT_TIMEOUT)
    result = simulate(system, RuntimeConfig(), load_at(1.0, slow_calls=0.25), 1, horizon=HORIZON)
    # answered past the time-out of every other call, users and checks meanwhile
    slow = 0
    for trace in result.traces:
        assert trace.times is not None and trace.meta["load"]["slow_calls"] == 0.25
        issued: dict[str, tuple[float, int]] = {}  # call: (time, checks so far)
        users: dict[str, int] = {}
        for step, state in replay(trace, system, record=False):
            event, at = step.event, trace.times[step.index]
            checks = state.counters.get("checks", 0)
            if isinstance(event, IssueBatch):
                for cid in state.pending:
                    if state.calls[cid].spec.background and cid not in issued:
                        issued[cid], users[cid] = (at, checks), 0
            if isinstance(event, UserMessage):
                for cid in set(issued) & set(state.pending):
                    users[cid] += 1
            if isinstance(event, ResultChunk) and event.last and event.call in issued:
                began, checks_then = issued[event.call]
                slow += (
                    at - began > TOOL_TIMEOUT and users[event.call] > 0 and checks > checks_then + 1
                )
    assert slow > 0
    assert result.counters["checks"] > 0


def test_no_slow_calls_draws_the_runs_of_before() -> None:
    # the knob's default draws nothing, and is not written: a sweep row's
    # load (and so its key, but for the code digest) is what it was
    load = load_at(0.6)
    assert load.slow_calls == 0 and "slow_calls" not in load.to_json()
    slow = load_at(0.6, slow_calls=0.25)
    assert Load.from_json(slow.to_json()) == slow and slow.to_json()["slow_calls"] == 0.25
    with pytest.raises(ConfigError, match=r"load\.slow_calls"):
        Load(slow_calls=1.5)
    system = load_system("unit_safe", DEFAULT_TIMEOUT)
    plain = simulate(system, RuntimeConfig(), load, 3, horizon=60.0)
    again = simulate(system, RuntimeConfig(), load_at(0.6, slow_calls=0.0), 3, horizon=60.0)
    assert [dumps(t) for t in plain.traces] == [dumps(t) for t in again.traces]

"""The exhaustive explorer: canonical states and symmetry reduction, a
shortest counterexample, no violation behind the safe gates, bounded memory."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.events import (
    AssistantChunk,
    BudgetCheck,
    CallSpec,
    Event,
    IssueBatch,
    ResultChunk,
    UserMessage,
)
from prunecheck.model.gates import Gate
from prunecheck.model.incidents import IncidentKind
from prunecheck.model.model_system import ModelSystem
from prunecheck.model.policies import BUILTINS, builtin_policy
from prunecheck.model.runtime import apply
from prunecheck.model.state import RuntimeState, initial_state
from prunecheck.model.system import incidents_of
from prunecheck.model.trace import loads
from prunecheck.sim.cli.app import main
from prunecheck.sim.drivers.explore import canonical_key, explore
from prunecheck.sim.drivers.shape import Shape, Usage, enabled_events
from prunecheck.sim.drivers.swarm import opening, opening_usage
from prunecheck.sim.subjects.loader import load_system

CONFIG = RuntimeConfig(budget=1000, hard_ceiling=1500)
READ = CallSpec("read_file", "a.txt")
GREP = CallSpec("grep", "src")


def _run(events: list[Event], policy: str = "recency") -> tuple[RuntimeState, Usage]:
    pol = builtin_policy(policy)
    assert pol is not None
    state = initial_state(CONFIG, pol, record=False)
    usage = Usage()
    for event in events:
        usage = usage.after(event, state)
        apply(state, event)
    return state, usage


def _key(events: list[Event], policy: str = "recency", timeless: bool = False) -> object:
    state, usage = _run(events, policy)
    return canonical_key(state, usage, timeless=timeless)


def test_interchangeable_calls_meet_in_one_state() -> None:
    # Two identical calls of one batch: delivering either one first is the same state.
    first = _key([IssueBatch((READ, READ), 50), ResultChunk("c1", 40)])
    second = _key([IssueBatch((READ, READ), 50), ResultChunk("c2", 40)])
    assert first == second
    # Calls with different specs are not interchangeable.
    a = _key([IssueBatch((READ, GREP), 50), ResultChunk("c1", 40)])
    b = _key([IssueBatch((READ, GREP), 50), ResultChunk("c2", 40)])
    assert a != b


def test_states_equal_up_to_renaming_ids() -> None:
    # A message appended and evicted leaves a gap in the numbering; the
    # rest of the state is what counts.
    base: list[Event] = [UserMessage(400, "u"), BudgetCheck()]
    assert _key(base) != _key([UserMessage(400, "u")])  # the clock moved (ages differ)
    assert _key(base, timeless=True) == _key([UserMessage(400, "u")], timeless=True)


def test_different_structure_different_key() -> None:
    assert _key([AssistantChunk(300, last=False)]) != _key([AssistantChunk(300)])
    assert _key([UserMessage(400, "u"), IssueBatch((READ,), 50)]) != _key(
        [IssueBatch((READ,), 50), UserMessage(400, "u")]
    )


def test_reduced_alphabet_keeps_one_of_interchangeable_pending_calls() -> None:
    state, usage = _run([IssueBatch((READ, READ), 50)])
    shape = Shape.small()
    full = {e.call for e in enabled_events(state, usage, shape) if isinstance(e, ResultChunk)}
    reduced = {
        e.call
        for e in enabled_events(state, usage, shape, reduce=True)
        if isinstance(e, ResultChunk)
    }
    assert full == {"c1", "c2"} and reduced == {"c1"}


@pytest.mark.parametrize(
    "target, length",
    [
        (frozenset({IncidentKind.ORPHANED_RESULT}), 5),
        (frozenset({IncidentKind.TRUNCATED_PAYLOAD}), 5),  # user message mid-stream
    ],
)
def test_explore_finds_a_shortest_counterexample(
    target: frozenset[IncidentKind], length: int
) -> None:
    result = explore(
        load_system("lowest_salience"),
        CONFIG,
        depth=8,
        shape=Shape.small(),
        target=target,
    )
    trace = result.counterexample
    assert trace is not None and len(trace.events) == length
    # Every history opens as a real one does; depth counts the events after it.
    assert [e.kind for e in trace.events[:2]] == ["system", "user"]
    assert result.depth_reached == length - 2
    policy = builtin_policy("lowest_salience")
    assert policy is not None
    kinds_at_end = {
        i.kind for i in incidents_of(trace, ModelSystem(policy)) if i.step == length - 1
    }
    assert target <= kinds_at_end
    # Breadth first: one event less finds nothing.
    shorter = explore(
        load_system("lowest_salience"),
        CONFIG,
        depth=length - 3,
        shape=Shape.small(),
        target=target,
    )
    assert shorter.counterexample is None and shorter.depth_reached == length - 3
    assert shorter.states > 1 and shorter.transitions >= shorter.states - 1


def test_max_states_caps_memory() -> None:
    result = explore(
        load_system("recency"),
        replace(CONFIG, gate=Gate.COMMIT),
        depth=9,
        shape=Shape.small(),
        max_states=500,
    )
    assert result.capped and result.states == 500 and result.depth_reached < 9
    assert result.counterexample is None


def _reference_bfs(
    policy: str, config: RuntimeConfig, depth: int, shape: Shape
) -> tuple[int, int, int, int | None]:
    """The explorer's search written the obvious way: full canonical keys in
    a Python set, full states in the frontier.  Returns states, transitions,
    depth reached and the length of the first hit (None if none)."""
    pol = builtin_policy(policy)
    assert pol is not None
    timeless = policy != "lowest_salience"
    root = initial_state(config, pol, record=False)
    for event in opening(shape):  # every explored history opens with these
        apply(root, event)
    seen = {canonical_key(root, opening_usage(), timeless=timeless)}
    frontier = [(root, opening_usage())]
    transitions = level = 0
    while frontier and level < depth:
        following = []
        for state, usage in frontier:
            for event in enabled_events(state, usage, shape, reduce=True):
                new = state.copy()
                result = apply(new, event)
                transitions += 1
                if any(i.is_violation for i in result.incidents):
                    return len(seen), transitions, level + 1, level + 1 + len(opening(shape))
                after = usage.after(event, state)
                key = canonical_key(new, after, timeless=timeless)
                if key not in seen:
                    seen.add(key)
                    following.append((new, after))
        level += 1
        frontier = following
    return len(seen), transitions, level, None


#: One level deeper costs about four times the states: make test-all goes there.
_DEEPER = pytest.mark.slow


@pytest.mark.parametrize(
    "policy, gate, depth, bounds",
    [
        ("recency", Gate.COMMIT, 4, {}),
        ("lowest_salience", Gate.COMMIT, 4, {}),
        ("clear_old_results", Gate.SPILL, 4, {"max_calls": 3}),
        ("summarize_prefix", Gate.COMMIT, 5, {"max_batches": 1}),
        ("token_span", Gate.NONE, 8, {}),
        pytest.param("recency", Gate.COMMIT, 6, {}, marks=_DEEPER),
        pytest.param("lowest_salience", Gate.COMMIT, 6, {}, marks=_DEEPER),
        pytest.param("clear_old_results", Gate.SPILL, 5, {"max_calls": 3}, marks=_DEEPER),
        pytest.param("summarize_prefix", Gate.COMMIT, 6, {"max_batches": 1}, marks=_DEEPER),
    ],
)
def test_fingerprints_count_what_full_states_count(
    policy: str, gate: Gate, depth: int, bounds: dict[str, int]
) -> None:
    # 64-bit fingerprints and replayed paths instead of kept states: the
    # same states, transitions, depth and shortest hit as keeping every key.
    shape = Shape.small(**bounds)
    config = replace(CONFIG, gate=gate)
    states, transitions, reached, hit = _reference_bfs(policy, config, depth, shape)
    result = explore(load_system(policy), config, depth=depth, shape=shape)
    assert (result.states, result.transitions, result.depth_reached) == (
        states,
        transitions,
        reached,
    )
    found = None if result.counterexample is None else len(result.counterexample.events)
    assert found == hit
    assert states > 100


@pytest.mark.slow
def test_a_state_costs_under_100_bytes() -> None:
    result = explore(
        load_system("lowest_salience"),
        replace(CONFIG, gate=Gate.COMMIT),
        depth=9,
        shape=Shape.small(max_users=1),  # the measure of issue 7's shape
    )
    assert result.states > 30_000 and not result.capped
    assert 0 < result.bytes_per_state <= 100
    assert result.collision_probability == result.states * (result.states - 1) / 2.0**65
    assert result.states_per_second > 0


def _shape_for(policy: str, **bounds: int) -> Shape:
    """Shape.small(), with a user message after the opening one (turns
    enough for turn_window to evict anything)."""
    bounds = {**bounds, "max_users": 4 if policy == "turn_window" else 2}
    return Shape.small(**bounds)


@pytest.mark.parametrize(
    "policy, gate",
    [  # one per gate in make test; make test-all adds two and the full matrix below
        ("lowest_salience", Gate.COMMIT),
        ("clear_old_results", Gate.SPILL),
        pytest.param("summarize_prefix", Gate.COMMIT, marks=pytest.mark.slow),
        pytest.param("turn_window", Gate.SPILL, marks=pytest.mark.slow),
    ],
)
def test_safe_gates_reduced(policy: str, gate: Gate) -> None:
    shape = _shape_for(policy, max_batches=1, max_texts=0 if policy == "turn_window" else 1)
    result = explore(load_system(policy), replace(CONFIG, gate=gate), depth=8, shape=shape)
    assert result.counterexample is None and not result.capped
    assert result.depth_reached == 8 and result.states > 1000
    # Not vacuous: the same shape without the gate breaks.
    raw = explore(load_system(policy), CONFIG, depth=8, shape=shape)
    assert raw.counterexample is not None


@pytest.mark.slow
@pytest.mark.parametrize("gate", [Gate.COMMIT, Gate.SPILL])
@pytest.mark.parametrize("policy", list(BUILTINS))
def test_safe_gates_full_matrix(policy: str, gate: Gate) -> None:
    result = explore(
        load_system(policy),
        replace(CONFIG, gate=gate),
        depth=8,
        shape=_shape_for(policy),
    )
    assert result.counterexample is None, result.incidents
    assert not result.capped and result.depth_reached == 8


# ------------------------------------------------------------------ command line
def test_cli_explore_counterexample_and_bundle(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "b"
    status = main(
        [
            "explore",
            "--policy",
            "lowest_salience",
            "--depth",
            "6",
            "--target",
            "truncated_payload",
            "--out",
            str(out),
        ]
    )
    text = capsys.readouterr().out
    assert status == 1
    # the second user message of the default shape comes mid-stream
    assert "shortest counterexample (5 events)" in text
    trace = loads((out / "trace.json").read_text(), "t")
    harm = trace.meta.get("harm", {"added": 0})  # on past the violation to its harm
    assert len(trace.events) == 5 + harm["added"]


def test_cli_explore_no_violation(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["explore", "--policy", "unit_safe", "--depth", "5"])
    text = capsys.readouterr().out
    assert status == 0
    assert "no violation in" in text and "up to depth 5" in text
    assert "states/s" in text and "bytes a state" in text
    assert "fingerprint collision probability" in text


def test_cli_explore_capped_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["explore", "--policy", "unit_safe", "--depth", "9", "--max-states", "300"])
    text = capsys.readouterr().out
    assert status == 0 and "--max-states 300" in text and "proof" in text


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--policy", "recency", "--depth", "0"], "--depth"),
        (["--policy", "recency", "--depth", "3", "--max-states", "0"], "--max-states"),
        (["--policy", "nope.py:select", "--depth", "3"], "nope.py"),
    ],
)
def test_cli_explore_bad_input_exits_2(
    argv: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["explore", *argv]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err


def test_key_of_a_state_with_a_spilled_summary() -> None:
    # summarize_prefix folds m1 into a summary; spill later moves that
    # summary out: its key must still name what it summarized.
    state, usage = _run(
        [UserMessage(400, "u"), AssistantChunk(700), BudgetCheck()], "summarize_prefix"
    )
    summary = next(m for m in state.context if m.summary_of)
    state.spilled[summary.unit_id] = tuple(state.context.remove([summary.id]))
    key = canonical_key(state, usage)
    assert key == canonical_key(state.copy(), usage)

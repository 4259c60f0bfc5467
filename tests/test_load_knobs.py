"""Session length and the share of giant results are Load settings (what the
benchmark used to monkeypatch): defaults as before, honoured by the
simulator, written to JSON only when changed, and part of a sweep row's key."""

from __future__ import annotations

import pytest

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.errors import ConfigError
from prunecheck.model.events import ResultChunk
from prunecheck.sim.drivers.simulator import simulate
from prunecheck.sim.drivers.workload import GIANT_RESULT, SESSION_TURNS, Load, load_at
from prunecheck.sim.stats.sessions import SessionEnd
from prunecheck.sim.subjects.loader import load_system
from prunecheck.sim.sweeps.runs import RunSpec

HORIZON = 400.0


def _run(load: Load, budget: int = 8000) -> list[SessionEnd]:
    config = RuntimeConfig(budget=budget, hard_ceiling=budget * 2)
    result = simulate(load_system("unit_safe"), config, load, 3, horizon=HORIZON)
    assert result.error is None
    return [s.end for s in result.sessions]


def test_defaults_are_the_former_constants() -> None:
    assert Load().session_turns == SESSION_TURNS == 10
    assert Load().giant_share == GIANT_RESULT == 0.01
    assert load_at(0.5).session_turns == SESSION_TURNS


def test_session_turns_decides_when_a_session_ends_naturally() -> None:
    short = _run(load_at(1.0, session_turns=2))
    usual = _run(load_at(1.0))
    endless = _run(load_at(1.0, session_turns=10**9))
    assert short.count(SessionEnd.NATURAL) > usual.count(SessionEnd.NATURAL) > 0
    assert SessionEnd.NATURAL not in endless


def test_giant_share_decides_how_many_results_are_giant() -> None:
    budget = 8000
    sizes = {}
    for share in (0.0, 0.3):
        load = load_at(1.0, giant_share=share)
        config = RuntimeConfig(budget=budget, hard_ceiling=budget * 2)
        result = simulate(load_system("unit_safe"), config, load, 3, horizon=HORIZON)
        sizes[share] = [
            e.tokens for t in result.traces for e in t.events if isinstance(e, ResultChunk)
        ]
    assert sizes[0.0] and sizes[0.3]
    big = budget // 2
    assert max(sizes[0.0]) < big <= max(sizes[0.3])


def test_json_omits_these_knobs_at_their_defaults_and_round_trips() -> None:
    assert "session_turns" not in Load().to_json() and "giant_share" not in Load().to_json()
    changed = Load(session_turns=3, giant_share=0.0)
    assert changed.to_json()["session_turns"] == 3 and changed.to_json()["giant_share"] == 0.0
    assert Load.from_json(changed.to_json()) == changed
    assert Load.from_json(Load().to_json()) == Load()


@pytest.mark.parametrize(
    ("knobs", "words"),
    [
        ({"session_turns": 0}, "session_turns"),
        ({"giant_share": -0.1}, "giant_share"),
        ({"giant_share": 0.7}, "giant_share"),
    ],
)
def test_bad_values_are_config_errors(knobs: dict[str, float], words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        Load(**knobs)  # type: ignore[arg-type]


def test_a_sweep_row_key_holds_these_knobs() -> None:
    config = RuntimeConfig()
    base = RunSpec("unit_safe", config, 0.5, load_at(0.5), 1)
    keys = {
        base.key,
        RunSpec("unit_safe", config, 0.5, load_at(0.5, session_turns=3), 1).key,
        RunSpec("unit_safe", config, 0.5, load_at(0.5, giant_share=0.0), 1).key,
    }
    assert len(keys) == 3
    assert RunSpec("unit_safe", config, 0.5, load_at(0.5), 1).key == base.key

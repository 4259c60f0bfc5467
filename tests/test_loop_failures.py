"""An agent loop's failing schedules in the failure database
(sim/evidence/loop_failures.py): saved by a check, replayed first by the
next one of the same agent and scenario class, never replayed for an edited
agent file or another framework version, and bad saved state reported,
never fatal.  On the fake framework (tests/loops_fake.py), one class, few
schedules, shrinking cut short."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from prunecheck.sim.api.loop_api import check_loop, search_loop
from prunecheck.sim.drivers import action_search
from prunecheck.sim.evidence import loop_failures

FAKE = Path(__file__).resolve().parent / "loops_fake.py"
OPTIONS: dict[str, Any] = {"scenarios": ["cancel"], "max_examples": 10, "seed": 1}


@pytest.fixture(autouse=True)
def _short_shrink(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(action_search, "SHRINK_RUNS", 4)
    monkeypatch.setattr(action_search, "POLISH_RUNS", 8)


def _agent(tmp_path: Path) -> str:
    """A copy of the fake agent's file, which a test may edit."""
    path = tmp_path / "agent.py"
    path.write_text(FAKE.read_text(encoding="utf-8"), encoding="utf-8")
    return f"loop:{path}:buggy"


def _entries(db: Path) -> list[Path]:
    return sorted(db.glob("loop-*/*.json"))


def test_a_saved_schedule_is_replayed_first_and_not_for_an_edited_agent(tmp_path: Path) -> None:
    spec, db = _agent(tmp_path), tmp_path / "db"
    first = check_loop(spec, failures=db, **OPTIONS)
    assert first.unsafe and first.unsafe[0].saved is None and len(_entries(db)) == 1
    entry = json.loads(_entries(db)[0].read_text(encoding="utf-8"))
    assert entry["scenario"] == "cancel" and entry["expect"] == sorted(
        first.unsafe[0].kinds.split(", ")
    )
    again = check_loop(spec, failures=db, **OPTIONS)
    assert again.unsafe[0].saved == str(_entries(db)[0]) and again.unsafe[0].examples == 0
    assert first.unsafe[0].found is not None and again.unsafe[0].found is not None
    assert again.unsafe[0].found.steps == first.unsafe[0].found.steps
    path = Path(spec.split(":")[1])
    path.write_text(path.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    edited = check_loop(spec, failures=db, **OPTIONS)
    assert edited.unsafe and edited.unsafe[0].saved is None  # searched anew, not replayed
    assert len(_entries(db)) == 2  # and saved under the new file's key


def test_another_framework_version_replays_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec, db = _agent(tmp_path), tmp_path / "db"
    search_loop(spec, scenario="cancel", max_examples=10, seed=1, failures=db)
    assert search_loop(spec, scenario="cancel", max_examples=10, seed=1, failures=db).examples == 0
    monkeypatch.setattr(loop_failures, "framework_versions", lambda name: {name: "99.0"})
    fresh = search_loop(spec, scenario="cancel", max_examples=10, seed=1, failures=db)
    assert fresh.found is not None and fresh.examples > 0


def test_bad_saved_state_is_reported_and_never_fatal(tmp_path: Path) -> None:
    spec, db = _agent(tmp_path), tmp_path / "db"
    check_loop(spec, failures=db, **OPTIONS)
    (saved,) = _entries(db)
    entry = json.loads(saved.read_text(encoding="utf-8"))
    entry["schedule"]["steps"] = [{"kind": "complete", "call": "call_9", "output": "x"}]
    saved.write_text(json.dumps(entry), encoding="utf-8")  # its step is not enabled now
    (saved.parent / "stray.json").write_text("{not json", encoding="utf-8")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = check_loop(spec, failures=str(db), **OPTIONS)
    said = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert result.unsafe and result.unsafe[0].saved is None  # searched, as without the entry
    assert any("cannot be used" in s and "discarded" in s for s in said), said
    assert any("stray.json" in s and "left in place" in s for s in said), said
    assert (saved.parent / "stray.json").exists()  # not ours: left where it is
    resaved = json.loads(saved.read_text(encoding="utf-8"))  # the search's find, saved anew
    assert resaved["schedule"]["steps"] != entry["schedule"]["steps"]


def test_an_agent_given_as_an_object_is_checked_without_the_database(tmp_path: Path) -> None:
    import loops_fake

    from prunecheck.sim.subjects.loops.target import LoopTarget

    target = LoopTarget(
        "loop:fake:<object>", "<object>", loops_fake.buggy, loops_fake.FakeAdapter()
    )
    assert check_loop(target, failures=tmp_path / "db", **OPTIONS).unsafe
    assert not (tmp_path / "db").exists()


def test_a_schedule_saved_with_a_crash_before_anything_ran_is_discarded(tmp_path: Path) -> None:
    """An older prunecheck took a crash before the first message (its shrinker
    saved [crash, resume]); such a step is not enabled now: the entry is
    discarded with a warning, never fatal, and the class searched anew."""
    spec, db = _agent(tmp_path), tmp_path / "db"
    check_loop(spec, failures=db, **OPTIONS)
    (saved,) = _entries(db)
    entry = json.loads(saved.read_text(encoding="utf-8"))
    entry["schedule"]["steps"] = [{"kind": "crash"}, {"kind": "resume"}]
    saved.write_text(json.dumps(entry), encoding="utf-8")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = check_loop(spec, failures=str(db), **OPTIONS)
    said = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert result.unsafe and result.unsafe[0].saved is None
    assert any("no longer enabled" in s and "discarded" in s for s in said), said

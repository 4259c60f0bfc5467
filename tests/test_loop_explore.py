"""``prunecheck explore loop:…`` (issue 30: the same drivers for every
subject): the bounded explorer walks a loop's schedules shortest first and
finds what a search finds, at its shortest; every option of ``explore``
either acts on a loop or is refused with exit 2 naming it."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from prunecheck.sim.api.loop_explore import explore_loop
from prunecheck.sim.cli import build_parser
from prunecheck.sim.cli.app import main
from prunecheck.sim.cli.loop_explore import EXPLORE_REFUSED, EXPLORE_WIRED

ROOT = Path(__file__).resolve().parent.parent
BUGGY = f"loop:{ROOT / 'tests' / 'loops_fake.py'}:buggy"
CAREFUL = f"loop:{ROOT / 'tests' / 'loops_fake.py'}:careful"
CRASH = ["--scenario", "crash_new_message"]


def _explore_options() -> dict[str, str]:
    parser = build_parser(["explore"])
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    explore = sub.choices["explore"]
    return {
        a.dest: max(a.option_strings, key=len)
        for a in explore._actions
        if a.option_strings and a.dest not in ("help",)
    }


def test_every_option_of_explore_is_wired_or_refused_for_a_loop() -> None:
    options = set(_explore_options())
    assert not set(EXPLORE_WIRED) & set(EXPLORE_REFUSED)
    assert options - set(EXPLORE_WIRED) - set(EXPLORE_REFUSED) == set()
    assert set(EXPLORE_WIRED) | set(EXPLORE_REFUSED) <= options


@pytest.mark.parametrize("dest", sorted(EXPLORE_REFUSED))
def test_a_refused_option_exits_2_naming_it(dest: str, capsys: pytest.CaptureFixture[str]) -> None:
    flag = _explore_options()[dest]
    value = {"format": "openai", "gate": "none", "check_at": "before_invoke",
             "retry": "idempotent", "on_stream_loss": "drop", "repair": "drop_orphans",
             "provider": "anthropic", "runtime_option": "model:recency"}.get(dest, "3")  # fmt: skip
    assert main(["explore", BUGGY, "--depth", "3", flag, value]) == 2
    err = capsys.readouterr().err
    assert flag in err and "Traceback" not in err
    if dest != "runtime_option":  # that one is a second subject: "given twice"
        assert "does not apply to an agent loop" in err


def test_explore_finds_the_shortest_schedule_and_writes_its_bundle(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "bundle"
    argv = ["explore", BUGGY, "--depth", "5", *CRASH, "--out", str(out)]
    assert main(argv) == 1
    printed = capsys.readouterr().out
    assert "a shortest schedule, 4 steps" in printed and (out / "repro.py").is_file()
    assert main([*argv, "--force", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["command"] == "explore" and data["verdict"] == "unsafe"
    assert data["placements"][0]["scenario_class"] == "crash_new_message"
    assert data["reproduction"] == str(out)


def test_depth_values_and_max_states_bound_the_walk_and_it_says_so(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["explore", CAREFUL, "--depth", "3", *CRASH]) == 0
    assert "of up to 3 steps broke it: every one was walked" in capsys.readouterr().out
    assert main(["explore", CAREFUL, "--depth", "3", *CRASH, "--max-states", "5"]) == 0
    assert "stopped at --max-states 5" in capsys.readouterr().out
    one = explore_loop(CAREFUL, scenario="crash_new_message", depth=3, values=1)
    three = explore_loop(CAREFUL, scenario="crash_new_message", depth=3)
    assert one.outcome.complete and three.outcome.complete
    assert one.outcome.search.examples < three.outcome.search.examples


def test_a_target_outside_what_breaks_it_finds_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["explore", BUGGY, "--depth", "4", *CRASH, "--target", "duplicated_side_effect"]
    assert main(argv) == 0
    assert "no duplicated_side_effect in any schedule" in capsys.readouterr().out


def test_scenario_and_values_are_refused_for_a_policy(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", "recency", "--depth", "2", "--scenario", "cancel"]) == 2
    assert "--scenario" in capsys.readouterr().err
    assert main(["explore", "recency", "--depth", "2", "--values", "2"]) == 2
    assert "--values" in capsys.readouterr().err


def test_two_classes_or_an_unknown_class_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", BUGGY, "--depth", "2", "--scenario", "cancel,parallel"]) == 2
    assert "explore walks one class at a time" in capsys.readouterr().err
    assert main(["explore", BUGGY, "--depth", "2", "--scenario", "nope"]) == 2
    assert "is not a scenario class" in capsys.readouterr().err

"""Every entry point is a thin layer over the one orchestrator, the Python API
(issue 30): ``prunecheck check`` and ``search`` (in process, ``--out`` and
``--json``), the API (``check_policy``, ``search_policy``, ``check_loop``,
``assert_loop_safe``) and the pytest plugin (``--prunecheck-out``) give the
same verdict, the same reproduction and byte-identical bundles for the same
subject and seed; and the failure database is replayed first whichever entry
point saved the failure.

The fast suite checks a built-in policy and the fake agent loop
(tests/loops_fake.py) with one placement or one scenario class and few
examples, the plugin through its fixture object; the thorough variants
(``slow``) add a ``runtime:`` subject and a framework trimmer, ``search``,
and the plugin in an inner pytest run.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from timeline_sketch import timeline_sketched

from prunecheck import (
    UnsafeLoop,
    UnsafePolicy,
    check_policy,
    search_policy,
    verdict_json,
    verdict_junit,
)
from prunecheck.model.trace import Trace
from prunecheck.pytest_plugin import MARK, PrunecheckFixture
from prunecheck.sim.api.loop_api import assert_loop_safe, check_loop
from prunecheck.sim.cli.app import main
from prunecheck.sim.drivers import action_search
from prunecheck.sim.evidence.trace_file import read_trace

pytest_plugins = ("pytester",)

ROOT = Path(__file__).resolve().parent.parent
LOOP = f"loop:{ROOT / 'tests' / 'loops_fake.py'}:buggy"
#: One placement, a small suite, a short search: what every entry point is given.
POLICY_ARGS = ["--check-at", "after_append", "--levels", "0.6", "--seeds", "1",
               "--slow-levels", "none", "--seed", "3"]  # fmt: skip
POLICY_OPTIONS: dict[str, Any] = {
    "placements": ["after_append"],  # as --check-at: the runtime the subject implies
    "levels": (0.6,),
    "seeds": (1,),
    "slow_levels": (),
    "seed": 3,
}
LOOP_ARGS = ["--scenario", "cancel", "--max-examples", "10", "--seed", "1"]
LOOP_OPTIONS: dict[str, Any] = {"scenarios": ["cancel"], "max_examples": 10, "seed": 1}


@pytest.fixture
def short_shrink(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every loop search shrinks briefly (as in tests/test_loop_runs.py): the
    entry points share the one search, what is compared is what they make of it."""
    monkeypatch.setattr(action_search, "SHRINK_RUNS", 4)
    monkeypatch.setattr(action_search, "POLISH_RUNS", 8)


@pytest.fixture(autouse=True)
def _sketched(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """Bundles without their timeline's pixels (the same sketch for every
    entry point, so the bytes still compare), written under ``tmp_path``."""
    monkeypatch.chdir(tmp_path)
    with timeline_sketched():
        yield


def _files(folder: Path) -> dict[str, bytes]:
    """A bundle's files by name and content (the plugin's own mark left out)."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.name != MARK}


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    status = main(argv)
    doc = json.loads(capsys.readouterr().out)
    assert isinstance(doc, dict)
    return status, doc


def _policy_agrees(spec: str, max_examples: int, tmp: Path, capsys: Any) -> None:
    status, doc = _cli(["check", spec, *POLICY_ARGS, "--max-examples", str(max_examples),
                        "--out", str(tmp / "cli"), "--json", "--no-failures"], capsys)  # fmt: skip
    api = check_policy(spec, max_examples=max_examples, failures=False, **POLICY_OPTIONS)
    assert (status, doc["verdict"]) == (1, api.verdict.value) == (1, "unsafe")
    assert api.reproduction is not None
    assert doc["placements"][0]["reproduction_events"] == len(api.reproduction.events)
    # the document is the API's: the same bytes from check_policy's result
    bundles = {
        p["check_at"]: Path(p["reproduction"]) for p in doc["placements"] if p["reproduction"]
    }
    assert json.dumps(verdict_json(api, bundles)) == json.dumps(doc)
    assert 'name="prunecheck.check.after_append"' in verdict_junit(api, bundles)
    plugin = PrunecheckFixture(tmp / "plugin", "test_trim", dict(POLICY_OPTIONS))
    with pytest.raises(UnsafePolicy) as raised:
        plugin.assert_policy_safe(spec, max_examples=max_examples, failures=False)
    assert raised.value.bundle is not None
    cli = _files(tmp / "cli")
    assert "trace.json" in cli
    assert cli == _files(api.bundle(tmp / "api")) == _files(raised.value.bundle)


def _loop_agrees(tmp: Path, capsys: Any) -> None:
    status, doc = _cli(["check", LOOP, *LOOP_ARGS, "--out", str(tmp / "cli"), "--json",
                        "--no-failures"], capsys)  # fmt: skip
    with pytest.raises(UnsafeLoop) as by_api:
        assert_loop_safe(LOOP, bundle_dir=tmp / "api", failures=False, **LOOP_OPTIONS)
    api = by_api.value.result  # check_loop's result
    assert status == 1 and doc["verdict"] == "unsafe" and api.verdict.value == "UNSAFE"
    assert [p["verdict"] for p in doc["placements"]] == ["unsafe"]
    # the document is the API's: check_loop's result gives the command's (but
    # the bundle's folder, written apart, and what the command line adds)
    ours = verdict_json(api, {"cancel": tmp / "cli"}, max_steps=doc["details"]["max_steps"],
                        offline=doc["details"]["offline"])  # fmt: skip
    assert json.dumps(ours) == json.dumps(doc)
    assert 'name="prunecheck.check.loop"' in verdict_junit(api)
    plugin = PrunecheckFixture(tmp / "plugin", "test_agent")
    with pytest.raises(UnsafeLoop) as by_plugin:
        plugin.assert_loop_safe(LOOP, failures=False, **LOOP_OPTIONS)
    assert by_api.value.bundle is not None and by_plugin.value.bundle is not None
    cli = _files(tmp / "cli")
    assert "schedule.json" in cli
    assert cli == _files(by_api.value.bundle) == _files(by_plugin.value.bundle)
    assert str(by_api.value) == str(by_plugin.value).replace(str(tmp / "plugin" / "test_agent"),
                                                             str(tmp / "api"))  # fmt: skip


def test_a_policy_check_agrees_across_entry_points(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _policy_agrees("lowest_salience", 0, tmp_path, capsys)


@pytest.mark.usefixtures("short_shrink")
def test_an_agent_loop_check_agrees_across_entry_points(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _loop_agrees(tmp_path, capsys)


@pytest.mark.usefixtures("short_shrink")
def test_the_failure_database_is_replayed_first_whichever_entry_point_saved_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "db"
    # a loop: the API saves, the command line replays (and the plugin's fixture too)
    first = check_loop(LOOP, failures=db, **LOOP_OPTIONS)
    assert first.unsafe and first.unsafe[0].saved is None
    assert main(["check", LOOP, *LOOP_ARGS, "--failures", str(db), "--out", "replayed"]) == 1
    out = capsys.readouterr().out
    assert "replayed first: the saved schedule" in out and str(db) in out
    status, doc = _cli(["search", LOOP, *LOOP_ARGS, "--failures", str(db), "--json"], capsys)
    assert status == 1 and doc["placements"][0]["from_failure_database"] is True
    again = PrunecheckFixture(None, "t")
    with pytest.raises(UnsafeLoop) as raised:
        again.assert_loop_safe(LOOP, failures=db, **LOOP_OPTIONS)
    cell = raised.value.result.unsafe[0]
    assert cell.saved is not None and cell.found is not None and first.unsafe[0].found is not None
    assert cell.found.steps == first.unsafe[0].found.steps  # the same schedule, replayed
    # a policy: the command line saves, the API replays (check and search)
    argv = ["check", "lowest_salience", *POLICY_ARGS, "--max-examples", "0"]
    assert main([*argv, "--failures", str(db)]) == 1
    assert "replayed first" not in capsys.readouterr().out
    checked = check_policy("lowest_salience", max_examples=0, failures=db, **POLICY_OPTIONS)
    assert checked.reproduction is not None
    assert checked.reproduction.meta["found_by"]["driver"] == "failure database"
    searched = search_policy("lowest_salience", failures=db, max_examples=1)
    assert searched.examples == 0 and searched.trace is not None
    assert searched.trace.meta["found_by"]["driver"] == "failure database"


# ------------------------------------------------------------------ thorough
SUBJECTS = [
    "lowest_salience",
    "runtime:examples/agent_loop.py:NaiveLoop",
    "langchain:strategy=last",
]


@pytest.mark.slow
@pytest.mark.parametrize("spec", SUBJECTS)
def test_check_agrees_for_every_subject_with_a_search(
    spec: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _policy_agrees(spec.replace("examples/", f"{ROOT}/examples/"), 20, tmp_path, capsys)


@pytest.mark.slow
@pytest.mark.parametrize("spec", SUBJECTS)
def test_search_agrees_for_every_subject(
    spec: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = spec.replace("examples/", f"{ROOT}/examples/")
    status, doc = _cli(["search", spec, "--seed", "3",
                        "--max-examples", "60", "--out", "cli", "--json", "--no-failures"],
                       capsys)  # fmt: skip
    api = search_policy(spec, seed=3, max_examples=60, failures=False)
    assert status == 1 and api.found and doc["verdict"] == "unsafe" and api.trace is not None
    assert doc["details"]["reproduction_events"] == len(api.trace.events)
    shown: Trace = read_trace(tmp_path / "cli" / "trace.json")  # run on to the harm
    assert shown.events[: len(api.trace.events)] == api.trace.events


@pytest.mark.slow
def test_search_of_a_loop_agrees_with_the_api(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from prunecheck import search_loop

    status, doc = _cli(["search", LOOP, *LOOP_ARGS, "--out", "cli", "--json", "--no-failures"],
                       capsys)  # fmt: skip
    api = search_loop(LOOP, scenario="cancel", seed=1, max_examples=10, failures=False)
    assert status == 1 and api.found is not None and doc["verdict"] == "unsafe"
    saved = json.loads((tmp_path / "cli" / "schedule.json").read_text(encoding="utf-8"))
    assert len(saved["steps"]) == len(api.found.steps)


INNER = f"""
def test_policy(prunecheck):
    prunecheck.assert_policy_safe("lowest_salience", placements=["after_append"], levels=(0.6,),
                                  seeds=(1,), slow_levels=(), seed=3, max_examples=20,
                                  failures=False)

def test_agent(prunecheck):
    prunecheck.assert_loop_safe("{LOOP}", scenarios=["cancel"], max_examples=10, seed=1,
                                failures=False)
"""


@pytest.mark.slow
def test_the_plugin_in_a_pytest_run_writes_the_bundles_the_command_line_writes(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile(test_inner=INNER)
    out = pytester.path / "bundles"
    result = pytester.runpytest_inprocess("-p", "prunecheck.pytest_plugin",
                                          f"--prunecheck-out={out}")  # fmt: skip
    result.assert_outcomes(failed=2)
    capsys.readouterr()
    assert main(["check", "lowest_salience", *POLICY_ARGS, "--max-examples", "20", "--out",
                 str(pytester.path / "cli-policy"), "--no-failures"]) == 1  # fmt: skip
    assert main(["check", LOOP, *LOOP_ARGS, "--out", str(pytester.path / "cli-loop"),
                 "--no-failures"]) == 1  # fmt: skip
    assert _files(out / "test_policy") == _files(pytester.path / "cli-policy")
    assert _files(out / "test_agent") == _files(pytester.path / "cli-loop")

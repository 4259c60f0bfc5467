"""check_policy: verdicts, reproductions, and misbehaving policies that get a
clear error while the finished scenarios are kept."""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from timeline_sketch import timeline_sketched

from prunecheck import UnsafePolicy, Verdict, assert_policy_safe, check_policy
from prunecheck.model.errors import PolicyError
from prunecheck.model.model_system import ModelSystem
from prunecheck.model.policies import ContextView, builtin_policy
from prunecheck.model.system import incidents_of
from prunecheck.model.trace import dumps, loads
from prunecheck.sim.cli.app import main
from prunecheck.sim.subjects.loader import load_system

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SMALL: dict[str, Any] = {"levels": (0.6,), "seeds": (1,), "max_examples": 50}
#: One placement where a test is not about placements (each placement is a whole check).
ONE: dict[str, Any] = {**SMALL, "placements": ("after_append",)}
#: The suite alone at one placement: an unsafe verdict without the search's
#: shrinking (about a second a counterexample), where the search is not the point.
SUITE: dict[str, Any] = {**ONE, "max_examples": 0}
#: A safe verdict at the strictest placement after a short search (make test), and
#: at every placement after the longer one (make test-all).
SHORT: dict[str, Any] = {**ONE, "max_examples": 20}
PLACED = pytest.mark.parametrize(
    "where",
    [
        pytest.param(SHORT, id="after_append"),
        pytest.param(SMALL, id="every", marks=pytest.mark.slow),
    ],
)


def _example(name: str) -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    "where",  # the suite's reproduction (make test); the search's (make test-all)
    [pytest.param(SUITE, id="suite"), pytest.param(ONE, id="search", marks=pytest.mark.slow)],
)
def test_openai_keep_last_is_unsafe_with_a_replayable_reproduction(where: dict[str, Any]) -> None:
    trim = _example("openai_keep_last").trim
    result = check_policy(trim, format="openai", **where)
    assert result.verdict is Verdict.UNSAFE and not result.safe
    assert {"orphaned_result", "provider_rejection"} <= set(result.violations)
    repro = result.reproduction
    assert repro is not None and 1 <= len(repro.events) <= 12
    assert repro.config.gate == "none" and repro.config.provider == "openai"
    assert result.policy_object is not None
    replayed = incidents_of(loads(dumps(repro)), ModelSystem(result.policy_object))
    assert any(i.is_violation for i in replayed)
    assert "VIOLATION" in result.narrative


@PLACED
def test_openai_commit_boundary_trimmer_is_safe(where: dict[str, Any]) -> None:
    result = check_policy(f"{EXAMPLES}/openai_commit_boundary.py:trim", format="openai", **where)
    assert result.verdict is Verdict.SAFE and result.reproduction is None
    assert result.violations == {} and result.search_examples >= where["max_examples"]
    assert sum(r.invocations for r in result.scenarios) > 0


@pytest.mark.parametrize(
    ("attr", "safe", "where"),
    [
        # the suite finds keep_last unsafe (make test); the search too (make test-all)
        pytest.param("keep_last", False, SUITE, id="keep_last-False-suite"),
        pytest.param("trim", True, SHORT, id="trim-True-after_append"),
        pytest.param("keep_last", False, SMALL, id="keep_last-False-every", marks=pytest.mark.slow),
        pytest.param("trim", True, SMALL, id="trim-True-every", marks=pytest.mark.slow),
    ],
)
def test_anthropic_trimmers(attr: str, safe: bool, where: dict[str, Any]) -> None:
    result = check_policy(f"{EXAMPLES}/anthropic_trim.py:{attr}", format="anthropic", **where)
    assert result.safe is safe
    assert result.policy.endswith(f"anthropic_trim.py:{attr}@anthropic")
    assert (result.reproduction is None) is safe


@pytest.mark.parametrize(
    "where",  # the suite's reproduction (make test); the search's (make test-all)
    [pytest.param(SUITE, id="suite"), pytest.param(ONE, id="search", marks=pytest.mark.slow)],
)
def test_same_seed_same_reproduction(where: dict[str, Any]) -> None:
    one = check_policy("lowest_salience", **where)
    two = check_policy("lowest_salience", **where)
    assert one.reproduction is not None and two.reproduction is not None
    assert dumps(one.reproduction) == dumps(two.reproduction)
    assert one.incidents == two.incidents and one.summary() == two.summary()


@PLACED
def test_commit_gate_makes_a_raw_policy_safe(where: dict[str, Any]) -> None:
    assert check_policy("lowest_salience", gate="commit", **where).safe


def test_unsafe_without_search_falls_back_to_the_shortest_failing_prefix() -> None:
    result = check_policy("lowest_salience", levels=(0.6,), seeds=(1,), max_examples=0)
    repro = result.reproduction
    assert repro is not None and repro.meta["found_by"] == {"driver": "simulate"}
    replayed = incidents_of(repro, load_system("lowest_salience"))
    first = next(i.step for i in replayed if i.is_violation)
    # shrunk to the first violation, then (when it shows harm) run on to it
    assert first == repro.meta["shrunk"]["to"] - 1
    harm = repro.meta.get("harm")
    assert len(repro.events) == first + 1 + (harm["added"] if harm else 0)


def _after(calls: int, failure: Any) -> Any:
    """recency, until the ``calls``-th call, which does ``failure``."""
    count = [0]
    recency = builtin_policy("recency")
    assert recency is not None

    def select(view: ContextView, need: int) -> Iterable[str] | object:
        count[0] += 1
        if count[0] >= calls:
            result: object = failure(view)
            return result
        return recency.select(view, need)

    return select


def _raise(view: ContextView) -> object:
    raise KeyError("m404")


def _hang(view: ContextView) -> object:
    time.sleep(30)
    return []


@pytest.mark.parametrize(
    ("failure", "words"),
    [
        (_raise, "raised KeyError: 'm404'"),
        (lambda view: 42, "must return an iterable of message ids or actions, got int"),
        (lambda view: ["m999"], "unknown message id 'm999'"),
        (_hang, "did not return within 0.3 s"),
    ],
)
def test_misbehaving_policy_is_an_error_naming_policy_and_step(failure: Any, words: str) -> None:
    result = check_policy(
        _after(30, failure),
        name="flaky",
        levels=(0.2, 0.6),
        seeds=(1,),
        max_examples=10,
        timeout=0.3,
    )
    assert result.verdict is Verdict.ERROR and not result.safe
    assert result.error is not None and words in result.error
    assert "scenario 'load 0.6, seed 1'" in result.error
    assert "policy 'flaky' at step " in result.error
    finished, stopped = result.scenarios
    assert finished.error is None and finished.invocations > 0  # kept
    assert stopped.error == result.error


def test_list_function_that_mutates_its_input_is_an_error() -> None:
    def trim_in_place(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        del messages[:-3]
        return messages

    result = check_policy(trim_in_place, format="openai", **SMALL)
    assert result.verdict is Verdict.ERROR
    assert result.error is not None and "mutated its input" in result.error
    assert "trim_in_place@openai' at step" in result.error


def test_object_that_is_not_a_policy_is_refused() -> None:
    with pytest.raises(PolicyError, match="format='openai'"):
        check_policy(42)  # type: ignore[arg-type]  # not a spec, on purpose


def test_assert_policy_safe_raises_with_the_narrative(tmp_path: Path) -> None:
    with pytest.raises(UnsafePolicy) as info, timeline_sketched():  # the bundle's pixels: not read
        assert_policy_safe("lowest_salience", bundle_dir=tmp_path / "b", **SUITE)
    text = str(info.value)
    assert "policy lowest_salience is UNSAFE" in text and "minimal reproduction" in text
    assert info.value.bundle is not None and (info.value.bundle / "trace.json").is_file()
    assert isinstance(info.value, AssertionError)
    assert assert_policy_safe("unit_safe", **SUITE).safe


def test_cli_check_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the exit statuses, not the search, are the point: the suite finds keep_last
    # unsafe (no shrinking of a search's counterexample), a short search stays safe
    suite = ["--levels", "0.6", "--seeds", "1", "--check-at", "after_append"]
    with timeline_sketched():  # the bundle's trace is read, not its timeline's pixels
        status = main(
            [
                "check",
                "--format",
                "openai",
                f"{EXAMPLES}/openai_keep_last.py:trim",
                "--out",
                str(tmp_path / "repro"),
                *suite,
                "--max-examples",
                "0",
            ]
        )
    assert status == 1
    out = capsys.readouterr().out
    assert "verdict: UNSAFE" in out and "minimal reproduction" in out
    assert loads((tmp_path / "repro" / "trace.json").read_text()).events
    assert (
        main(
            [
                "check",
                "--format",
                "openai",
                f"{EXAMPLES}/openai_commit_boundary.py:trim",
                "--quiet",
                *suite,
                "--max-examples",
                "10",
            ]
        )
        == 0
    )
    assert capsys.readouterr().out.startswith("verdict: safe")


def test_cli_check_policy_error_prints_finished_scenarios(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "def select(view, need):\n    if view.turn >= 4:\n"
        "        raise RuntimeError('lost track')\n    return []\n"
    )
    status = main(
        ["check", f"{bad}:select", "--levels", "0.2,1", "--seeds", "1", "--max-examples", "0"]
    )
    captured = capsys.readouterr()
    assert status == 2
    assert "load 0.2, seed 1" in captured.out  # finished before the error
    assert "raised RuntimeError: lost track" in captured.err
    assert "Traceback" not in captured.err


@pytest.mark.slow
def test_a_policy_that_hangs_only_in_the_search_costs_its_time_limit_once() -> None:
    calls: list[float] = []

    def hangs_on_three(view: ContextView, need: int) -> list[str]:
        start = time.perf_counter()
        try:
            if len(view.messages) >= 3:
                time.sleep(30)
            return []
        finally:
            calls.append(time.perf_counter() - start)

    result = check_policy(hangs_on_three, levels=(), seeds=(), max_examples=100, timeout=0.5)
    assert result.verdict is Verdict.ERROR and result.error is not None
    assert result.error.startswith("adversarial search: policy 'hangs_on_three' at step ")
    assert "did not return within 0.5 s" in result.error
    assert sum(1 for c in calls if c >= 0.4) == 1  # later hangs were cut short


@pytest.mark.slow
def test_check_out_writes_every_bundle_of_a_reproduction_that_spans_sessions(
    tmp_path: Path,
) -> None:
    """The policy is safe in an agent's first session and unsafe later: the
    suite's reproduction crosses a new session, which the timeline once could
    not draw (KeyError: 'session', a half-written bundle); issue 19."""
    from prunecheck.model.trace import loads
    from prunecheck.sim.cli.app import main

    spec = f"{Path(__file__).resolve().parent}/policies/late_session.py:select"
    out = tmp_path / "bundle"
    argv = [
        "check",
        spec,
        "--levels",
        "1",
        "--seeds",
        "1",
        "--max-examples",
        "0",
        "--out",
        str(out),
    ]
    assert main(argv) == 1
    folders = [out, *(p for p in out.iterdir() if p.is_dir())]
    assert len(folders) >= 2  # every unsafe placement's bundle
    spans = False
    for folder in folders:
        for name in ("trace.json", "narrative.md", "timeline.png", "test_reproduction.py"):
            assert (folder / name).is_file(), (folder, name)
        kinds = [e.kind for e in loads((folder / "trace.json").read_text()).events]
        spans = spans or "session" in kinds
    assert spans


@pytest.mark.parametrize(
    ("placements", "examples"),
    [
        # the suite alone (its reproduction shrunk): the search and its shrinking
        # cost ten times as much, side by side in make test-all below
        pytest.param(("after_append", "before_invoke"), 0, id="unsafe-and-safe"),
        pytest.param(
            ("after_append", "before_invoke"), 40, id="unsafe-and-safe-40", marks=pytest.mark.slow
        ),
        pytest.param(
            ("after_append", "after_batch", "before_invoke"),
            40,
            id="every-40",
            marks=pytest.mark.slow,
        ),
    ],
)
def test_placements_checked_side_by_side_give_the_same_result_as_one_by_one(
    placements: tuple[str, ...], examples: int
) -> None:
    """One placement unsafe, one safe, the suite only (make test); with the
    search, and all three (make test-all)."""
    options: dict[str, Any] = {"levels": (0.6,), "seeds": (1,), "max_examples": examples}
    spec = f"{Path(__file__).resolve().parent}/policies/complete_history_trim.py:trim_openai"
    options["placements"] = placements
    serial = check_policy(spec, format="openai", jobs=1, **options)
    forked = check_policy(spec, format="openai", jobs=len(placements), **options)
    assert {p.verdict for p in serial.placements} == {Verdict.SAFE, Verdict.UNSAFE}
    assert forked.summary() == serial.summary() and forked.narrative == serial.narrative
    assert [p.verdict for p in forked.placements] == [p.verdict for p in serial.placements]
    for one, two in zip(serial.placements, forked.placements, strict=True):
        assert (one.reproduction is None) is (two.reproduction is None)
        if one.reproduction is not None and two.reproduction is not None:
            assert dumps(one.reproduction) == dumps(two.reproduction)
    assert forked.policy_object is not None  # bundles can be written from it


def test_suite_reproductions_are_shrunk_and_run_on_to_the_harm() -> None:
    spec = f"{Path(__file__).resolve().parent}/policies/size_hidden.py:giant_output"
    result = check_policy(spec, max_examples=0, placements=("before_invoke",))
    repro = result.reproduction
    assert repro is not None and repro.meta["found_by"] == {"driver": "simulate"}
    shrunk = repro.meta["shrunk"]
    assert shrunk["from"] >= 200 and shrunk["to"] <= 15 and shrunk["fixpoint"]
    harm = repro.meta.get("harm")
    assert harm is None or harm["violation_at"] == shrunk["to"]
    assert "shrunk from" in failure_report_text(result)


def failure_report_text(result: Any) -> str:
    from prunecheck.sim.api.check import failure_report

    return failure_report(result)

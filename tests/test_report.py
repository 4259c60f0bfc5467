"""Tests of the failure-rate report (prunecheck.sim.reports.writer, .summary, .cmd_report)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.exposure import ANY_VIOLATION, ORPHAN_REJECTION
from prunecheck.model.gates import Gate
from prunecheck.model.incidents import IncidentKind
from prunecheck.model.policies import BUILTINS
from prunecheck.sim.cli.app import main
from prunecheck.sim.cli.report import LEVELS, TIGHTNESS, default_parts, seeds_at
from prunecheck.sim.drivers.workload import load_at
from prunecheck.sim.reports.claims import INVARIANT, QUOTES
from prunecheck.sim.reports.data import ReportData
from prunecheck.sim.reports.summary import summary_text
from prunecheck.sim.reports.writer import write_report
from prunecheck.sim.stats.sessions import SessionEnd, SessionRecord
from prunecheck.sim.sweeps.runs import Row, RunSpec
from prunecheck.sim.sweeps.sweep import configs, plan, run_sweep

ORPHAN_400 = ORPHAN_REJECTION
DUP = IncidentKind.DUPLICATED_SIDE_EFFECT
PNG = b"\x89PNG\r\n\x1a\n"


def _data(rows: list[Row], knobs: tuple[Row, ...] = ()) -> ReportData:
    return ReportData(
        main=tuple(rows),
        tightness=(),
        knobs=knobs,
        tight_level=0.5,
        seeds=(1,),
        horizon=60.0,
        command="prunecheck report --test",
    )


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> ReportData:
    """A real (small) sweep: two policies, three gates, two loads, one seed."""
    out = tmp_path_factory.mktemp("sweep") / "results.jsonl"
    base = RuntimeConfig()
    gates = (Gate.NONE, Gate.COMMIT, Gate.SPILL)
    main = plan(
        ["lowest_salience", "unit_safe"],
        configs(base, gates=gates),
        [0.25, 1.0],
        [1],
        horizon=150.0,
    )
    tight = plan(
        ["lowest_salience"],
        configs(base, gates=gates),
        [0.5],
        [1],
        tightness=(0.2, 0.8),
        horizon=150.0,
    )
    outcome = run_sweep([*main, *tight], out, jobs=1, quiet=True)
    rows = {r.key: r for r in outcome.rows}
    return ReportData(
        main=tuple(rows[s.key] for s in main),
        tightness=tuple(rows[s.key] for s in tight),
        knobs=(),
        tight_level=0.5,
        seeds=(1,),
        horizon=150.0,
        command="prunecheck test",
    )


PLOTS = [
    "verdicts.png",
    "survival.png",
    "failure-vs-load.png",
    "failure-vs-tightness.png",
    "failures-by-gate.png",
    "cost-of-safety.png",
    "runtime-knobs.png",
]


def _sections(summary: str) -> dict[str, str]:
    parts = summary.split("\n## ")
    return {part.split("\n", 1)[0]: part for part in parts[1:]}


def _claim(summary: str, title: str) -> str:
    """The block of the claim called ``title``: its quote, what is checked, its verdicts."""
    blocks = [b for b in summary.split("\n### ")[1:] if b.split("\n", 1)[0].endswith(title)]
    assert len(blocks) == 1, title
    return blocks[0].split("\n## ", 1)[0]


def _sketch(*args: object, **_: object) -> None:
    """Stands for a drawing function of the writer: writes a PNG header to
    the path it was given (the one Path among its arguments)."""
    path = next(a for a in args if isinstance(a, Path))
    path.write_bytes(PNG)


@pytest.fixture
def sketched_plots(monkeypatch: pytest.MonkeyPatch) -> None:
    """The writer's drawing functions write a PNG header alone (:func:`_sketch`):
    for tests of which plots, the summary or the page, not the pixels, which
    make test draws from tests/report_rows.py's rows (the rows_drawn fixture)."""
    import prunecheck.sim.reports.writer as writer

    for name in ("draw_verdicts", "survival", "rate_grid", "failures", "costs", "knobs"):
        monkeypatch.setattr(writer, name, _sketch)


@pytest.mark.slow
def test_the_report_draws_every_plot_of_a_real_sweep(small: ReportData, tmp_path: Path) -> None:
    """The plots of a real sweep's rows, drawn (about 4 s of CPU: make
    test-all).  Its fast twin below checks which plots and the summary
    without drawing; make test draws every plot from tests/report_rows.py's
    rows (the rows_drawn fixture: tests/test_figures.py, test_browser.py)."""
    files = write_report(small, tmp_path / "a")
    # no knobs part in this sweep: its plot is not drawn
    assert [f.name for f in files] == [
        *(p for p in PLOTS if p != "runtime-knobs.png"),
        "summary.md",
        "index.html",
    ]
    for png in files[:-2]:
        assert png.read_bytes().startswith(PNG) and png.stat().st_size > 20_000


def test_the_report_writes_plots_and_a_summary_from_the_rows(
    small: ReportData, tmp_path: Path, sketched_plots: None
) -> None:
    """write_report of a real sweep: which plots it draws, and the summary.
    The drawing functions are sketched here (drawing costs about 4 s of CPU:
    :func:`test_the_report_draws_every_plot_of_a_real_sweep` draws them)."""
    files = write_report(small, tmp_path / "a")
    # no knobs part in this sweep: its plot is not drawn
    assert [f.name for f in files] == [
        *(p for p in PLOTS if p != "runtime-knobs.png"),
        "summary.md",
        "index.html",
    ]
    assert all(png.read_bytes() == PNG for png in files[:-2])  # each sketched to its own file
    summary = files[-2].read_text()
    commit = [s for r in small.main if r.spec.config.gate is Gate.COMMIT for s in r.sessions]
    n = len(commit)
    bound = 1000 * (1 - 0.025 ** (1 / n))  # the exact 95% bound when none is seen
    assert (
        f"0 of {n:,} sessions saw any violation: below {bound:.1f} per 1,000 sessions "
        "with 95% confidence | holds"
    ) in summary
    raw = [
        s
        for r in small.main
        if r.spec.config.gate is Gate.NONE and r.spec.policy == "lowest_salience"
        for s in r.sessions
    ]
    k = sum(1 for s in raw if ORPHAN_400 in s.first)
    assert f"({k} of {len(raw)})" in summary  # lowest_salience's orphan-400 sessions
    assert "- [survival.png](survival.png)" in summary
    assert "survival.png" in files[-1].read_text()  # and the page shows it


def test_the_summary_states_the_unit_of_every_rate(small: ReportData) -> None:
    summary = summary_text(small, [])
    sections = _sections(summary)
    assert "Units: what every number counts" in sections
    units = sections["Units: what every number counts"]
    for word in (
        "**Session**",
        "Clopper–Pearson",
        "Kaplan–Meier",
        "log-log",
        "bootstrap",
        "censored",
        "independent",
    ):
        assert word in units, word
    tables = [name for name, text in sections.items() if "\n| " in text]
    assert len(tables) >= 6
    for name in tables:
        if name in ("What the classes mean", "What a load level is"):
            continue
        text = sections[name]
        header = next(line for line in text.splitlines() if line.startswith("| "))
        assert (
            "Unit" in text
            or "per 1,000 sessions" in header
            or "per 1,000" in header
            or "sessions" in text.split("\n| ")[0]
        ), name
    # Session rates and survival medians per policy and gate
    table = sections["Session rates and time to first violation, per policy and gate"]
    assert "| policy | gate | sessions |" in table and "median turns to first violation" in table
    row = next(line for line in table.splitlines() if line.startswith("| unit_safe | commit"))
    assert row.split(" | ")[-2] == "not reached"
    row = next(line for line in table.splitlines() if line.startswith("| lowest_salience | none"))
    assert row.split(" | ")[-2].isdigit()  # it breaks: a median number of turns


@pytest.mark.slow
def test_plots_and_summary_are_byte_identical_for_the_same_rows(
    small: ReportData, tmp_path: Path
) -> None:
    first = write_report(small, tmp_path / "a")
    second = write_report(small, tmp_path / "b")
    for a, b in zip(first, second, strict=True):
        assert a.read_bytes() == b.read_bytes(), a.name
    assert b"Matplotlib" not in first[0].read_bytes()


def _sessions(n: int, hits: dict[str, int], turn: int = 3) -> tuple[SessionRecord, ...]:
    """``n`` sessions; for each key, the first ``hits[key]`` of them met it at ``turn``."""
    out = []
    for i in range(n):
        first = {}
        for key, count in hits.items():
            if i < count:
                first[key] = (30.0, turn)
                kind = key.split(":")[0]
                if IncidentKind(kind).is_violation:
                    first[ANY_VIOLATION] = (30.0, turn)
        out.append(SessionRecord(100.0, 10, SessionEnd.NATURAL, 20, {}, first))
    return tuple(out)


def _row(
    policy: str,
    gate: Gate,
    level: float,
    sessions: int,
    hits: dict[str, int] | None = None,
    error: str | None = None,
) -> Row:
    spec = RunSpec(policy, RuntimeConfig(gate=gate), level, load_at(level), 1, 60.0)
    records = _sessions(sessions, hits or {})
    invocations = 20 * sessions
    exposed = {k: v * 2 for k, v in (hits or {}).items()}
    violations = [
        v * 2 for k, v in (hits or {}).items() if IncidentKind(k.split(":")[0]).is_violation
    ]
    if violations:
        exposed[ANY_VIOLATION] = max(violations)
    return Row(
        spec.key,
        spec,
        invocations,
        invocations * 10,
        120.0,
        0.0,
        dict(exposed),
        exposed,
        {},
        error,
        records,
    )


def test_verdicts_are_worded_from_the_numbers_when_they_disagree() -> None:
    rows = [
        # Blind policy: orphan 400s fall with load; no truncation at all.
        _row("recency", Gate.NONE, 0.0, 100, {ORPHAN_400: 30}),
        _row("recency", Gate.NONE, 1.0, 100, {ORPHAN_400: 10, DUP: 5}),
        # The commit gate lets violations through and overruns less than none.
        _row("recency", Gate.COMMIT, 1.0, 100, {ORPHAN_400: 2}),
        _row("recency", Gate.SPILL, 1.0, 100, {"hard_ceiling_overrun": 40}),
        _row(
            "recency",
            Gate.NONE,
            0.5,
            100,
            {"hard_ceiling_overrun": 30},
            error="policy 'x' at step 3: boom",
        ),
    ]
    text = summary_text(_data(rows), [])
    assert (
        "| sessions (the verdict) | 0 [0–12.2] per 1,000 sessions (0 of 300) | does not "
        "hold: none seen |" in _claim(text, "evicting a streaming result truncates its payload")
    )
    assert re.search(
        r"\| sessions \(the verdict\) \| load 0: 300 \[[^]]+\] → load 1: 100 .*\| "
        r"does not hold: not higher",
        _claim(text, "orphaned-result 400s grow with load"),
    )
    assert "| 2 of 100 sessions saw a violation" in text
    assert "does not hold: orphaned-result 400s in 2, any violation in 2" in text
    assert (
        "| gate none: 100 [" in text
        and "gate commit: 0 [0–36.2] per 1,000 sessions | does not hold" in text
    )
    assert "does not hold: spill is not below commit beyond the intervals" in text
    assert "policy 'x' at step 3: boom" in text


def test_verdicts_hold_when_the_numbers_agree() -> None:
    rows = [
        _row("recency", Gate.NONE, 0.0, 200, {ORPHAN_400: 2, DUP: 1, "truncated_payload": 1}),
        _row(
            "recency",
            Gate.NONE,
            1.0,
            200,
            {ORPHAN_400: 150, DUP: 100, "truncated_payload": 60, "hard_ceiling_overrun": 1},
        ),
        _row("recency", Gate.COMMIT, 1.0, 200, {"hard_ceiling_overrun": 100}),
        _row("recency", Gate.SPILL, 1.0, 200, {"hard_ceiling_overrun": 5}),
    ]
    text = summary_text(_data(rows), [])
    for label in ("orphaned-result 400s", "duplicated side effects", "truncated payloads"):
        assert re.search(
            r"\| sessions \(the verdict\) \| .* \| holds, rising at every level \|",
            _claim(text, f"{label} grow with load"),
        ), label
    assert (
        "| 0 of 200 sessions saw any violation: below 18.3 per 1,000 sessions with 95% "
        "confidence | holds |" in text
    )
    assert (
        "gate none: 2.5 [0.1–13.8] → gate commit: 500 [429–571] per 1,000 sessions | "
        "holds |" in text
    )
    assert "(200.0 times as many; gate none → commit" in text
    assert "holds: spill absorbs 95% of them" in text
    assert "No run ended with a policy error." in text


def test_the_summary_says_where_per_invocation_and_session_conclusions_differ() -> None:
    # Per invocation the salience policy looks worse (its few broken sessions
    # run long); per session the two policies truncate alike.
    rows = [
        _row("lowest_salience", Gate.NONE, 0.0, 100, {"truncated_payload": 10}),
        _row("clear_old_results", Gate.NONE, 0.0, 100, {"truncated_payload": 10}),
    ]
    rows[0] = Row(
        rows[0].key,
        rows[0].spec,
        2000,
        20000,
        120.0,
        0.0,
        rows[0].incidents,
        {"truncated_payload": 600},
        {},
        None,
        rows[0].sessions,
    )
    text = summary_text(_data(rows), [])
    line = next(x for x in text.splitlines() if "truncation comes from the salience" in x)
    assert "| not shown: lowest_salience truncates about as often as the others |" in line
    assert line.endswith("| **yes**: per invocation “holds” |")  # the overview's row
    block = _claim(text, "the truncation comes from the salience policy")
    assert "**The conclusion changes per model invocation**: there it “holds”." in block


def test_the_summary_quotes_every_claim_next_to_its_verdict() -> None:
    """A reader without the incident report reads each claim in its own words,
    with what was checked and the verdict, in the claim's own block."""
    blind = [
        _row(p, Gate.NONE, lv, 100, {ORPHAN_400: 20, "truncated_payload": 5})
        for p in ("lowest_salience", "recency")
        for lv in (0.0, 1.0)
    ]
    gated = [
        _row("recency", g, 1.0, 100, {"hard_ceiling_overrun": 10})
        for g in (Gate.COMMIT, Gate.SPILL)
    ]
    text = summary_text(_data([*blind, *gated]), [])
    blocks = text.split("\n### ")[1:]
    assert len(blocks) == 11  # 3 failures, salience, 3 × load, 2 × gate, cost, spill
    for quote in QUOTES:
        holding = [b for b in blocks if f"\n> “{quote}”\n" in b]
        assert holding, quote
        for block in holding:
            assert "\nChecked here: " in block
            assert re.search(r"\n\| sessions \(the verdict\) \| [^|]+ \| [a-z]", block)
    assert f"> “{INVARIANT}”" in text
    for unreadable in ("domain document", "write-up", "seed document"):
        assert unreadable not in text.lower()


def test_a_partial_report_says_what_it_covers() -> None:
    rows = [_row("recency", Gate.NONE, 0.0, 10, {ORPHAN_400: 3})]
    data = ReportData(
        main=tuple(rows),
        tightness=(),
        knobs=(),
        tight_level=0.5,
        seeds=(1,),
        horizon=60.0,
        command="x",
        planned=40,
        time_limit=5.0,
    )
    text = summary_text(data, [])
    assert (
        "**Partial report.** The time limit (5 s) stopped the sweep after 1 of 40 planned "
        "runs" in text
    )


def test_the_default_sweep_covers_every_policy_gate_knob_and_load() -> None:
    main, tight, knobs = default_parts([1, 2], ["mine.py:select"])
    policies = {*BUILTINS, "mine.py:select"}
    assert {s.policy for s in main} == policies == {s.policy for s in tight}
    assert {s.policy for s in knobs} == policies - {"unit_safe"}
    assert len(main) == len(policies) * len(Gate) * sum(len(seeds_at(lv, [1, 2])) for lv in LEVELS)
    # lighter loads get more seeds (fewer sessions per run), at most 8 times as many
    assert len(seeds_at(0.0, [1, 2])) == 8 * 2 and seeds_at(1.0, [1, 2]) == [1, 2]
    assert {s.load.tightness for s in tight} == set(TIGHTNESS)
    assert {(s.config.check_at.value, s.config.retry.value) for s in knobs} == {
        ("after_append", "rerun_batch"),
        ("after_batch", "rerun_batch"),
        ("before_invoke", "rerun_batch"),
        ("after_append", "idempotent"),
    }
    keys = [s.key for s in (*main, *tight, *knobs)]
    assert len(set(keys)) < len(keys)  # shared runs (e.g. the main grid's) are run once


def test_report_rejects_bad_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["report", "--out", str(tmp_path), "--seeds", "0"]) == 2
    assert "--seeds: must be a whole number of at least 1" in capsys.readouterr().err
    assert main(["report", "--out", str(tmp_path), "--policy", "nope.py:select"]) == 2
    assert "file nope.py does not exist" in capsys.readouterr().err
    assert main(["report", "--help"]) == 0
    assert "prunecheck report --out reports --seed 1" in capsys.readouterr().out


@pytest.mark.slow
def test_report_command_end_to_end(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["report", "--out", str(tmp_path), "--quick", "--seeds", "1", "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "run now, 0 reused" in err
    names = sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("."))
    assert names == sorted([*PLOTS, "results.jsonl", "summary.md", "index.html"])
    assert main(["report", "--out", str(tmp_path), "--quick", "--seeds", "1", "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "(0 run now," in err
    assert "prunecheck report: nothing was simulated: every run came from " in err
    assert f"delete {tmp_path / 'results.jsonl'} (make report-fresh)" in err


def test_report_with_a_time_limit_writes_a_partial_report_and_exits_3(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    sketched_plots: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The plots of the partial report are sketched (the time limit and what
    the summary says are the point; the slow end-to-end test draws a report
    of the command). The sweep's clock is a counter that moves 0.01 s each time it
    is read, so the limit ends the sweep after the same few dozen runs on an idle
    machine and under load (on the wall clock a loaded machine spent all of it
    before the first run)."""
    import itertools
    import types

    from prunecheck.sim.sweeps import sweep

    ticks = itertools.count()
    clock = types.SimpleNamespace(monotonic=lambda: next(ticks) * 0.01)
    monkeypatch.setattr(sweep, "time", clock)
    status = main(
        [
            "report",
            "--out",
            str(tmp_path),
            "--quick",
            "--seeds",
            "1",
            "--quiet",
            "--jobs",
            "1",
            "--time-limit",
            "0.5",  # about 50 clock readings: that many of the 470 runs finish
        ]
    )
    err = capsys.readouterr().err
    assert status == 3 and "out of time (--time-limit 0.5 s)" in err
    summary = (tmp_path / "summary.md").read_text()
    assert "**Partial report.**" in summary
    kept = len((tmp_path / "results.jsonl").read_text().splitlines())
    assert f"after {kept} of " in summary


def test_the_report_says_whether_it_reuses_or_simulates(tmp_path: Path) -> None:
    from prunecheck.sim.cli.report import _plan_message

    results = tmp_path / "results.jsonl"
    assert _plan_message(results, 5, set(), 0) == (
        f"prunecheck report: simulating all 5 runs (none stored in {results})."
    )
    assert "holds 7 rows of other code or settings: not reused" in _plan_message(
        results, 5, set(), 7
    )
    every = _plan_message(results, 2, {"a", "b"}, 2)
    assert every.startswith(f"prunecheck report: reusing all 2 runs stored in {results}")
    assert f"To re-simulate from nothing, delete {results} (make report-fresh)." in every
    assert "reusing 1 runs stored" in _plan_message(results, 2, {"a"}, 1)
    assert "simulating the other 1" in _plan_message(results, 2, {"a"}, 1)

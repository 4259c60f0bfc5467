"""Every option of ``check`` and ``search`` given with a ``loop:`` subject
changes what runs, or exits 2 naming the option (issue 30).

One row per option of each command (:data:`ROWS`): a wired option runs twice,
without and with it, and the row's ``differs`` says what changed between the
two — the schedules the harness applied (recorded from every ``LoopRun``: their
count, widths, sizes, steps), the exit status, the output, a file; a refused
option exits 2 with one paragraph naming it, before any schedule runs.
:func:`test_every_option_has_a_row` fails when an option is added to either
command without a decision.  Everything runs on the fake framework
(tests/loops_fake.py), a few schedules each, with Hypothesis's shrinking cut
short.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import jsonschema
import pytest

from prunecheck.sim.api.documents import SCHEMA_VERSION
from prunecheck.sim.cli import build_parser, loop_runs
from prunecheck.sim.cli.app import main
from prunecheck.sim.cli.loop_options import REFUSED, SEARCH_REFUSED, WIRED
from prunecheck.sim.drivers import action_search
from prunecheck.sim.evidence.loop_bundle import BUNDLE_FILES
from prunecheck.sim.subjects.loops import scheduler
from prunecheck.sim.subjects.loops import system as loop_system
from prunecheck.sim.subjects.loops.steps import ReplyStep, Step

ROOT = Path(__file__).resolve().parent.parent
FAKE = f"loop:{ROOT / 'tests' / 'loops_fake.py'}"
SCHEMA = ROOT / "schemas" / f"verdict-{SCHEMA_VERSION}.json"


@dataclass(frozen=True, slots=True)
class Ran:
    """One command line's outcome: status, output and every schedule applied."""

    status: int
    out: str
    err: str
    runs: tuple[tuple[Step, ...], ...]
    tmp: Path

    def steps(self, kind: str) -> list[Any]:
        """Every step of ``kind`` applied, over all runs (``Any``: its attributes are read)."""
        return [s for r in self.runs for s in r if s.kind == kind]

    def per_run(self, *kinds: str) -> list[int]:
        return [sum(1 for s in r if s.kind in kinds) for r in self.runs]


@dataclass(frozen=True, slots=True)
class Row:
    """An option of a command: the line without it (None: refused), the line
    with it, and what must differ between the two (refused: the flag named)."""

    command: str
    dest: str
    argv: str
    base: str | None = None
    differs: Callable[[Ran, Ran], bool] | None = None
    flag: str = ""


_CHECK = f"check {FAKE}:careful --scenario parallel --max-examples 4 --seed 1"
_SEARCH = f"search {FAKE}:careful --scenario parallel --max-examples 4 --seed 1"
_UNSAFE_CHECK = f"check {FAKE}:buggy --scenario cancel --max-examples 10 --seed 1"
_UNSAFE_SEARCH = f"search {FAKE}:buggy --scenario cancel --max-examples 10 --seed 1"
_TIMING = f"search {FAKE}:timing --scenario tool_timeout --max-examples 6 --seed 1"
#: A careful agent on a release of the fake framework that drops a cancelled
#: batch: its finding is the framework's (exit 0 unless --fail-on-framework).
_FLAWED_CHECK = f"check {FAKE}:on_flawed_release --scenario cancel --max-examples 10 --seed 1"


def _schedules(a: Ran) -> list[list[str]]:
    return [[repr(s) for s in r] for r in a.runs]


def _width(a: Ran) -> int:
    return max((len(s.calls) for s in a.steps("reply")), default=0)


def _batches(a: Ran) -> int:
    """The most replies with calls one schedule held."""
    return max(sum(1 for s in r if isinstance(s, ReplyStep) and s.calls) for r in a.runs)


def _chose(agent: str) -> Callable[[Ran, Ran], bool]:
    """The line checked ``agent`` (and ran schedules), the line without it another one."""
    return lambda b, g: bool(g.runs) and f":{agent} " in g.out and f":{agent} " not in b.out


def _sizes(a: Ran) -> set[int]:
    return {len(s.output) for s in a.steps("complete")}


def _doc(a: Ran) -> dict[str, Any] | None:
    try:
        doc = json.loads(a.out)
    except ValueError:
        return None
    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8")))
    validator.validate(doc)
    assert isinstance(doc, dict)
    return doc


def _placements(a: Ran) -> list[str]:
    doc = _doc(a)
    if doc is None:
        return []
    places = doc["placements"]
    assert isinstance(places, list)
    return [f"{p['scenario_class']}:{p['verdict']}" for p in places]


def _bundle(a: Ran) -> list[str]:
    folder = a.tmp / "repro"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def _saved(a: Ran) -> int:
    """Schedules the run saved in its failure database (``--failures db``)."""
    return len(list((a.tmp / "db").glob("loop-*/*.json")))


def _junit_cases(a: Ran) -> list[str]:
    path = a.tmp / "report.xml"
    if not path.is_file():
        return []
    return [c.get("name", "") for c in ElementTree.parse(path).iter("testcase")]


def _wired(command: str, dest: str, base: str, option: str,
           differs: Callable[[Ran, Ran], bool]) -> Row:  # fmt: skip
    return Row(command, dest, f"{base} {option}", base, differs)


def _refused(command: str, dest: str, option: str, flag: str) -> Row:
    base = _CHECK if command == "check" else _SEARCH
    return Row(command, dest, f"{base} {option}", flag=flag)


ROWS: tuple[Row, ...] = (
    # ------------------------------------------------------------ check, wired
    Row("check", "policy_option",
        f"check --policy {_CHECK.split()[1]} {' '.join(_CHECK.split()[2:])}",
        f"check {FAKE}:buggy {' '.join(_CHECK.split()[2:])}", _chose("careful")),
    _wired("check", "seed", _CHECK, "--seed 2", lambda b, g: _schedules(g) != _schedules(b)),
    _wired("check", "max_examples", _CHECK, "--max-examples 8",
           lambda b, g: (len(b.runs), len(g.runs)) == (4, 8)),
    _wired("check", "max_events", _CHECK, "--max-events 3",
           lambda b, g: max(map(len, g.runs)) <= 3 < max(map(len, b.runs))),
    _wired("check", "scenario", f"check {FAKE}:careful --max-examples 4 --seed 1",
           "--scenario cancel",
           lambda b, g: bool(g.steps("cancel")) and "crash then" in b.out
           and "crash then" not in g.out and not g.steps("crash")),
    _wired("check", "out", _UNSAFE_CHECK, "--out repro",
           lambda b, g: _bundle(g) == sorted(BUNDLE_FILES) and not _bundle(b) and g.status == 1),
    Row("check", "force", f"{_UNSAFE_CHECK} --out full --force", f"{_UNSAFE_CHECK} --out full",
        lambda b, g: (b.status, g.status) == (2, 1) and (g.tmp / "full" / "repro.py").is_file()),
    _wired("check", "quiet", _CHECK, "--quiet",
           lambda b, g: len(g.out.splitlines()) == 1 < len(b.out.splitlines())
           and g.out.startswith("verdict: safe")),
    _wired("check", "time_limit", _CHECK, "--time-limit 1e-9",
           lambda b, g: (b.status, g.status) == (0, 3) and not g.runs and "out of time" in g.out),
    _wired("check", "json", _UNSAFE_CHECK, "--json",
           lambda b, g: _doc(b) is None and _placements(g) == ["cancel:unsafe"]),
    _wired("check", "junit", f"check {FAKE}:buggy --scenario cancel,trim --max-examples 10 "
           "--seed 1", "--junit report.xml",
           lambda b, g: not _junit_cases(b) and len(_junit_cases(g)) == 2),
    _wired("check", "fail_vacuous", f"{_CHECK} --max-events 1", "--fail-vacuous",
           lambda b, g: (b.status, g.status) == (0, 4)),
    _wired("check", "fail_on_framework", _FLAWED_CHECK, "--fail-on-framework",
           lambda b, g: (b.status, g.status) == (0, 1) and "framework findings" in b.out),
    # the suite runs with PRUNECHECK_FAILURES=off: --failures turns the database on
    _wired("check", "failures", _UNSAFE_CHECK, "--failures db",
           lambda b, g: _saved(g) == 1 and _saved(b) == 0 and g.status == 1),
    _wired("check", "no_failures", f"{_UNSAFE_CHECK} --failures db", "--no-failures",
           lambda b, g: _saved(b) == 1 and _saved(g) == 0 and g.status == 1),
    # ----------------------------------------------------------- search, wired
    Row("search", "policy_option",
        f"search --policy {_SEARCH.split()[1]} {' '.join(_SEARCH.split()[2:])}",
        f"search {FAKE}:buggy {' '.join(_SEARCH.split()[2:])}", _chose("careful")),
    _wired("search", "seed", _SEARCH, "--seed 2", lambda b, g: _schedules(g) != _schedules(b)),
    _wired("search", "max_examples", _SEARCH, "--max-examples 8",
           lambda b, g: (len(b.runs), len(g.runs)) == (4, 8)),
    _wired("search", "max_steps", _SEARCH, "--max-steps 3",
           lambda b, g: max(map(len, g.runs)) <= 3 < max(map(len, b.runs))),
    _wired("search", "scenario", _SEARCH.replace("--scenario parallel", ""),
           "--scenario crash_resume",
           lambda b, g: bool(g.steps("resume")) and not b.steps("crash")),
    _wired("search", "max_calls", f"{_SEARCH} --max-examples 8", "--max-calls 1",
           lambda b, g: _width(g) == 1 < _width(b)),
    _wired("search", "max_batches", _SEARCH, "--max-batches 1",
           lambda b, g: _batches(g) == 1 < _batches(b)),
    _wired("search", "max_users", _SEARCH, "--max-users 1",
           lambda b, g: max(g.per_run("user", "new_message")) == 1
           < max(b.per_run("user", "new_message"))),
    _wired("search", "sizes", _SEARCH, "--sizes 500",
           lambda b, g: _sizes(g) == {2000} and max(_sizes(b)) < 100),
    _wired("search", "time_steps", _TIMING, "--time-steps 7",
           lambda b, g: {s.seconds for s in g.steps("advance")} == {7.0}
           and bool({s.seconds for s in b.steps("advance")} - {7.0})),
    _wired("search", "target", _UNSAFE_SEARCH, "--target duplicated_side_effect",
           lambda b, g: (b.status, g.status) == (1, 0)),
    _wired("search", "out", _UNSAFE_SEARCH, "--out repro",
           lambda b, g: _bundle(g) == sorted(BUNDLE_FILES) and not _bundle(b)),
    Row("search", "force", f"{_UNSAFE_SEARCH} --out full --force", f"{_UNSAFE_SEARCH} --out full",
        lambda b, g: (b.status, g.status) == (2, 1) and (g.tmp / "full" / "repro.py").is_file()),
    _wired("search", "time_limit", _SEARCH, "--time-limit 1e-9",
           lambda b, g: (b.status, g.status) == (0, 3) and not g.runs and "out of time" in g.out),
    _wired("search", "json", _UNSAFE_SEARCH, "--json",
           lambda b, g: _doc(b) is None and _placements(g) == ["cancel:unsafe"]),
    _wired("search", "fail_vacuous", f"{_SEARCH} --max-users 0", "--fail-vacuous",
           lambda b, g: (b.status, g.status) == (0, 4)),
    _wired("search", "fail_on_framework", _FLAWED_CHECK.replace("check", "search", 1),
           "--fail-on-framework",
           lambda b, g: (b.status, g.status) == (0, 1) and "framework findings" in b.out),
    _wired("search", "failures", _UNSAFE_SEARCH, "--failures db",
           lambda b, g: _saved(g) == 1 and _saved(b) == 0 and g.status == 1),
    _wired("search", "no_failures", f"{_UNSAFE_SEARCH} --failures db", "--no-failures",
           lambda b, g: _saved(b) == 1 and _saved(g) == 0 and g.status == 1),
    # ---------------------------------------------------------------- refused
    *(
        _refused(command, dest, option, option.split()[0])
        for command in ("check", "search")
        for dest, option in (
            ("format", "--format openai"),
            ("gate", "--gate commit"),
            ("check_at", "--check-at before_invoke"),
            ("retry", "--retry idempotent"),
            ("on_stream_loss", "--on-stream-loss drop"),
            ("repair", "--repair drop_orphans"),
            ("budget", "--budget 4000"),
            ("hard_ceiling", "--hard-ceiling 9000"),
            ("max_retries", "--max-retries 1"),
            ("policy_timeout", "--policy-timeout 3"),
        )
    ),
    _refused("search", "provider", "--provider openai", "--provider"),
    _wired("check", "provider", _UNSAFE_CHECK, "--provider openai,anthropic",
           lambda b, g: "providers (judged on the minimal schedules' requests):" in g.out
           and "providers (judged" not in b.out and g.status == b.status == 1),
    _refused("check", "langchain_option", "--langchain strategy=last", "--langchain"),
    *(
        _refused("check", dest, option, option.split()[0])
        for dest, option in (
            ("levels", "--levels 0.5"),
            ("seeds", "--seeds 1-2"),
            ("slow_levels", "--slow-levels none"),
            ("horizon", "--horizon 30"),
        )
    ),
    _refused("search", "runtime_option", "--runtime examples/agent_loop.py:NaiveLoop",
             "--runtime"),
    *(
        _refused("search", dest, option, option.split()[0])
        for dest, option in (
            ("max_chunks", "--max-chunks 2"),
            ("max_texts", "--max-texts 1"),
            ("max_writes", "--max-writes 1"),
        )
    ),
)  # fmt: skip


def _options(command: str) -> set[str]:
    parser = build_parser([command])
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {
        a.dest
        for a in sub.choices[command]._actions
        if a.option_strings and not isinstance(a, argparse._HelpAction)
    }


@pytest.mark.parametrize("command", ["check", "search"])
def test_every_option_has_a_row(command: str) -> None:
    """An option added to check or search without a decision for loops fails here."""
    rows = {r.dest for r in ROWS if r.command == command}
    assert rows == _options(command)
    assert _options(command) <= set(WIRED) | set(REFUSED)
    for r in ROWS:
        refused = SEARCH_REFUSED if r.command == "search" else REFUSED
        assert (r.base is None) == (r.dest in refused), r


_RUNS: list[list[Step]] = []


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[list[list[Step]]]:
    """Every schedule the harness applies, recorded; shrinking cut short (the
    rows ask what runs, not how short a counterexample gets)."""

    class Recorded(scheduler.LoopRun):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            _RUNS.append(self.steps)

    monkeypatch.setattr(loop_system, "LoopRun", Recorded)
    monkeypatch.setattr(action_search, "SHRINK_RUNS", 4)
    monkeypatch.setattr(action_search, "POLISH_RUNS", 8)
    monkeypatch.chdir(tmp_path)
    _RUNS.clear()
    yield _RUNS
    _RUNS.clear()


def _run(line: str, tmp: Path, capsys: pytest.CaptureFixture[str]) -> Ran:
    folder = tmp / str(len(list(tmp.iterdir())))
    folder.mkdir()
    (folder / "full").mkdir()
    (folder / "full" / "keep.txt").write_text("the user's file\n", encoding="utf-8")
    _RUNS.clear()
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(folder)
        status = main(line.split())
    out, err = capsys.readouterr()
    return Ran(status, out, err, tuple(tuple(r) for r in _RUNS), folder)


@pytest.mark.parametrize(
    "row",
    [pytest.param(r, id=f"{r.command}-{r.dest}") for r in ROWS],
)
def test_each_option_changes_what_runs_or_is_refused(
    row: Row, recorded: list[list[Step]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    got = _run(row.argv, tmp_path, capsys)
    assert "Traceback" not in got.err
    if row.base is None:
        assert got.status == 2, (got.out, got.err)
        lines = [line for line in got.err.splitlines() if line.startswith("prunecheck")]
        assert len(lines) == 1 and row.flag in lines[0], got.err
        assert not got.runs  # refused before any schedule ran
        return
    base = _run(row.base, tmp_path, capsys)
    assert row.differs is not None
    assert row.differs(base, got), (base.status, got.status, got.out[-800:], got.err[-800:])


def test_json_and_junit_carry_a_placement_per_scenario_class(
    recorded: list[list[Step]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Per class: its verdict, every violation kind, the first violation (step,
    kind, detail, provider text), the reproduction's path; JUnit: a case per class."""
    got = _run(f"{_UNSAFE_CHECK.replace('cancel', 'cancel,interrupt')} --out repro --json "
               "--junit report.xml", tmp_path, capsys)  # fmt: skip
    doc = _doc(got)
    assert got.status == 1 and doc is not None
    cancel, interrupt = doc["placements"]
    assert (cancel["scenario_class"], cancel["verdict"]) == ("cancel", "unsafe")
    first = cancel["first_violation"]
    assert first["class"] in cancel["violations"] and first["step"] >= 1 and first["detail"]
    assert first["step"] <= cancel["reproduction_steps"]
    assert cancel["reproduction"] == str(got.tmp / "repro")
    assert (got.tmp / "repro" / "schedule.json").is_file()
    assert doc["first_violation"] == first and doc["reproduction"] == cancel["reproduction"]
    assert (interrupt["verdict"], interrupt["note"]) == (
        "not_applicable",
        "no human-in-the-loop approval is configured",
    )
    assert doc["runtime"] is None and doc["exercised"]["scenario_classes"] == 1
    assert doc["details"]["subject"] == "loop"
    cases = list(ElementTree.parse(got.tmp / "report.xml").iter("testcase"))
    assert [c.get("name") for c in cases] == [
        "cancel: cancellation",
        "interrupt: interrupt/approval then resume (n/a: no human-in-the-loop approval is "
        "configured)",
    ]
    failure = cases[0].find("failure")
    assert failure is not None and failure.text is not None
    assert first["detail"] in failure.get("message", "")
    assert f"reproduction: {got.tmp / 'repro'}" in failure.text
    assert cases[1].find("failure") is None


def test_search_json_has_the_class_searched_as_its_placement(
    recorded: list[list[Step]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    got = _run(f"{_UNSAFE_SEARCH} --json", tmp_path, capsys)
    doc = _doc(got)
    assert got.status == 1 and doc is not None and doc["command"] == "search"
    (entry,) = doc["placements"]
    assert entry["verdict"] == "unsafe" and entry["reproduction"] is None
    assert doc["first_violation"] == entry["first_violation"] is not None
    # same seed, same document
    again = _doc(_run(f"{_UNSAFE_SEARCH} --json", tmp_path, capsys))
    assert again == doc


class _Told:
    """A progress that keeps what it is told."""

    def __init__(self, quiet: bool) -> None:
        self.quiet, self.told = quiet, []  # type: tuple[bool, list[str]]

    def start(self, total: int, what: str = "tasks") -> None:
        self.told.append(f"start {total} {what}")

    def step(self, label: str) -> None:
        self.told.append(label.rsplit(": ", 1)[-1])

    def close(self) -> None:
        self.told.append("close")


@pytest.mark.parametrize("quiet", [False, True])
def test_check_reports_progress_per_scenario_class_unless_quiet(
    quiet: bool, recorded: list[list[Step]], tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    bars: list[_Told] = []

    def progress_for(limit: float | None, *, command: str, quiet: bool = False) -> _Told:
        bars.append(_Told(quiet))
        return bars[-1]

    monkeypatch.setattr(loop_runs, "progress_for", progress_for)
    line = f"check {FAKE}:careful --scenario parallel,cancel,interrupt --max-examples 4 --seed 1"
    _run(line + (" --quiet" if quiet else ""), tmp_path, capsys)
    (bar,) = bars
    assert bar.quiet is quiet  # progress_for is silent when quiet
    # the two classes that apply, each named as it starts; interrupt (n/a) is not searched
    assert bar.told == [
        "start 2 scenario classes",
        "scenario class plain parallel batches",
        "scenario class cancellation",
        "close",
    ]


def test_the_python_api_takes_the_same_knobs_and_runs_the_same_schedules(
    recorded: list[list[Step]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command line searches through the API: the same options, the same schedules."""
    import prunecheck
    from prunecheck.sim.subjects.loops.scenarios import LoopShape

    line = f"{_SEARCH} --max-calls 2 --max-users 2 --sizes 40 --time-steps 7 --max-steps 8"
    cli = _run(line.replace("--max-examples 4", "--max-examples 8"), tmp_path, capsys)
    _RUNS.clear()
    shape = LoopShape(width=2, users=2, sizes=(40,), advances=(7.0,))
    prunecheck.search_loop(f"{FAKE}:careful", scenario="parallel", seed=1, max_examples=8,
                           max_steps=8, shape=shape)  # fmt: skip
    assert _schedules(cli) == [[repr(s) for s in r] for r in _RUNS] != []
    assert _width(cli) == 2 and _sizes(cli) == {160}
    _RUNS.clear()
    checked = prunecheck.check_loop(f"{FAKE}:careful", scenarios=["parallel"], max_examples=4,
                                    seed=1, max_steps=3, time_limit=60.0)  # fmt: skip
    assert checked.cells[0].verdict.value == "safe" and max(map(len, _RUNS)) <= 3

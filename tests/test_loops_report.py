"""``make loops`` (sim/reports/loops.py) on the fake framework and on one real
framework's example: rows, settings, scripts, determinism (the same seed gives
byte-identical rows, bar the wall-clock column, and byte-identical bundles)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from loops_fake import FakeAdapter

from prunecheck.model.incidents import Incident, IncidentKind
from prunecheck.sim.api.loop_verdict import Cell, CellVerdict, LoopCheck, check_loop
from prunecheck.sim.drivers import action_search
from prunecheck.sim.drivers.action_search import Outcome
from prunecheck.sim.evidence.loop_bundle import bundle_texts
from prunecheck.sim.reports.loops import (
    GUARD_MARK,
    GUARD_NOTE,
    Row,
    as_shown,
    discover,
    is_guarded,
    main,
    render,
    setting_of,
)
from prunecheck.sim.subjects.loops.contract import ToolCall
from prunecheck.sim.subjects.loops.scenarios import SCENARIOS, ScenarioClass
from prunecheck.sim.subjects.loops.steps import (
    Cancel,
    Complete,
    Crash,
    NewMessage,
    ReplyStep,
    Step,
    Timeout,
    User,
)
from prunecheck.sim.subjects.loops.target import LoopTarget, load_target

FAKE = Path(__file__).resolve().parent / "loops_fake.py"


def _examples(folder: Path) -> Path:
    folder.mkdir()
    (folder / "a.py").write_text(
        f'"""Check with::\n\n    prunecheck check loop:{FAKE}:buggy\n"""\n', encoding="utf-8"
    )
    (folder / "b.py").write_text(
        f'"""prunecheck check loop:{FAKE}:trimming_buggy and again\n'
        f'prunecheck check loop:{FAKE}:buggy"""\n',
        encoding="utf-8",
    )
    return folder


@pytest.mark.parametrize(
    "shrink",
    [
        # a short shrink (Hypothesis's 4 runs and the step deletion's 8): the same
        # schedules found and shrunk, byte for byte, run after run (determinism is
        # the point, not how short they get); the default shrink in make test-all
        pytest.param((4, 8), id="short-shrink"),
        pytest.param(None, id="default-shrink", marks=pytest.mark.slow),
    ],
)
def test_the_table_is_the_same_bar_the_wall_clock_for_the_same_seed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shrink: tuple[int, int] | None
) -> None:
    if shrink is not None:
        monkeypatch.setattr(action_search, "SHRINK_RUNS", shrink[0])
        monkeypatch.setattr(action_search, "POLISH_RUNS", shrink[1])
    examples = _examples(tmp_path / "ex")
    assert discover(examples) == [f"loop:{FAKE}:buggy", f"loop:{FAKE}:trimming_buggy"]
    (examples / "c.py").write_text(f'"""prunecheck check loop:{FAKE}:careful"""\n')
    tables, written = [], []
    for n in (1, 2):
        out = tmp_path / f"run{n}" / "loops.md"
        argv = ["--out", str(out), "--scripts", str(out.parent / "loops"), "--examples",
                str(examples), "--seed", "1", "--max-examples", "30", "--no-run",
                "--only", "*buggy"]  # fmt: skip
        assert main(argv) == 0
        tables.append(re.sub(r"\| \d+ s \|", "| - |", out.read_text(encoding="utf-8")))
        scripts = sorted(p.name for p in (out.parent / "loops").iterdir())
        assert "loops_fake-buggy-crash_new_message.json" in scripts  # the cell's schedule
        # its script: the buggy agent's, or shared with the other agent's same script
        assert any(
            re.fullmatch(r"loops_fake[\w+-]*crash_new_message[\w+-]*\.py", s) for s in scripts
        )
        files = {p: (out.parent / "loops" / p).read_bytes() for p in scripts}
        files["rows.json"] = re.sub(rb"\| \d+ s \|", b"| - |", files["rows.json"])  # wall clock
        written.append(files)
    assert tables[0] == tables[1]
    assert written[0] == written[1]  # every script and schedule, byte for byte
    table = tables[0]
    assert "| `loop:" in table and "**UNSAFE**" in table and "n/a: no human-in-the-loop" in table
    assert ":careful`" not in table  # --only *buggy: both buggy agents, not the careful one
    assert "orphaned_result" in table  # the trim that cuts units, at the framework's hook
    assert re.search(r"\]\(loops/loops_fake[\w+-]*crash_new_message[\w+-]*\.py\)", table)
    assert GUARD_NOTE in table


def test_only_rechecks_its_rows_and_keeps_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each row is saved as it is made (rows.json); --only rechecks the rows
    it matches and keeps the others; rows of another seed are not kept."""
    monkeypatch.setattr(action_search, "SHRINK_RUNS", 2)
    monkeypatch.setattr(action_search, "POLISH_RUNS", 2)
    examples = _examples(tmp_path / "ex")
    out = tmp_path / "run" / "loops.md"
    base = ["--out", str(out), "--scripts", str(out.parent / "loops"), "--examples",
            str(examples), "--max-examples", "8", "--no-run"]  # fmt: skip

    def rows(*more: str) -> list[str]:
        assert main([*base, *more]) == 0
        return [ln.split("`")[1] for ln in out.read_text(encoding="utf-8").splitlines()
                if ln.startswith("| `loop:")]  # fmt: skip

    buggy, trimming = f"loop:{FAKE}:buggy", f"loop:{FAKE}:trimming_buggy"
    assert rows("--seed", "1", "--only", "*:buggy") == [buggy]
    assert sorted(rows("--seed", "1", "--only", "*trimming_buggy")) == sorted([buggy, trimming])
    assert '"seed": 1' in (out.parent / "loops" / "rows.json").read_text(encoding="utf-8")
    assert rows("--seed", "2", "--only", "*trimming_buggy") == [trimming]


def _cell(name: ScenarioClass, steps: tuple[Step, ...]) -> Cell:
    scenario = SCENARIOS[name]
    if not steps:
        return Cell(scenario, CellVerdict.SAFE, None, 5, 5, 3, "")
    lost = Incident(IncidentKind.SILENT_LOSS, 2, ("call_1",), "lost")
    return Cell(scenario, CellVerdict.UNSAFE, Outcome(steps, (lost,), 1), 5, 9, 1, "")


def test_a_guarded_agents_failures_outside_the_trim_are_marked(tmp_path: Path) -> None:
    guarded = tmp_path / "guarded.py"
    guarded.write_text("from prunecheck.guard import ListGuard\nagent = ListGuard\n")
    plain = tmp_path / "plain.py"
    plain.write_text("def agent():\n    from prunecheck.guard import ListGuard  # not top level\n")
    adapter = FakeAdapter()
    targets = [LoopTarget(f"loop:{f}:agent", f"{f}:agent", None, adapter) for f in (guarded, plain)]
    assert [is_guarded(t) for t in targets] == [True, False]
    batch: tuple[Step, ...] = (User("u"), ReplyStep("", (ToolCall("call_1", "read_file", "{}"),)))
    failing = {
        ScenarioClass.CANCEL: (*batch, Cancel(), User("v")),
        ScenarioClass.CRASH_NEW_MESSAGE: (*batch, Crash(), NewMessage("v")),
        ScenarioClass.TOOL_TIMEOUT: (*batch, Timeout("call_1"), User("v")),
        ScenarioClass.TRIM: (*batch, Complete("call_1", "x"), User("v")),  # the trim's own
    }
    cells = tuple(_cell(name, failing.get(name, ())) for name in SCENARIOS)
    rows = [Row(t.spec, "fake", LoopCheck(t, cells, 1), "", {}, 1.0, is_guarded(t))
            for t in targets]  # fmt: skip
    table = render(rows, seed=1, max_examples=5).splitlines()
    lines = [r for r in table if r.startswith("| `loop:")]
    for line, mark in zip(lines, (True, False), strict=True):
        shown = dict(zip(SCENARIOS, line.split(" | ")[2:-1], strict=True))
        marked = {n for n, text in shown.items() if text.endswith(f"{GUARD_MARK} outside the trim")}
        # a guarded agent's failures that need a cancel, a crash or a timeout are outside the trim
        assert marked == (set(failing) - {ScenarioClass.TRIM} if mark else set())
        assert all(shown[n].startswith("**UNSAFE**") for n in failing)
    assert GUARD_NOTE.startswith(GUARD_MARK) and GUARD_NOTE in table


def test_only_with_a_pattern_no_spec_matches_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # a checkout under folders with an x in their names (/home/max/...): the
    # pattern matches the spec as written, relative to the current folder
    checkout = tmp_path / "xx" / "max"
    (checkout / "ex").mkdir(parents=True)
    (checkout / "ex" / "a.py").write_text(
        f'"""prunecheck check loop:{checkout}/agent.py:buggy"""\n', encoding="utf-8"
    )
    monkeypatch.chdir(checkout)
    argv = ["--out", str(tmp_path / "loops.md"), "--examples", "ex", "--only", "*x*"]
    assert main(argv) == 2
    assert "--only *x*: no spec of ex matches" in capsys.readouterr().err
    assert not (tmp_path / "loops.md").exists()


def test_only_patterns_match_the_spec_as_written() -> None:
    home = Path("/home/max/repo")
    assert as_shown(f"loop:{home}/examples/loops/a_guarded.py:agent", home) == (
        "loop:examples/loops/a_guarded.py:agent"
    )
    assert as_shown("loop:/elsewhere/x.py:agent", home) == "loop:/elsewhere/x.py:agent"
    assert as_shown("loop:examples/x.py:agent", home) == "loop:examples/x.py:agent"


@pytest.mark.slow
def test_a_real_framework_row_and_its_bundles_are_the_same_for_the_same_seed() -> None:
    """Two checks of AutoGen's default loop under cancellation, few schedules: the
    same row bar the wall clock, the same bundle (schedule, narrative, requests,
    incidents, script) byte for byte — no id, time or path of the run leaks in."""
    pytest.importorskip("autogen_agentchat")
    spec = "loop:examples/loops/autogen_plain.py:agent"
    renders, bundles = [], []
    for _ in (1, 2):
        target = load_target(spec)
        result = check_loop(target, seed=3, max_examples=6, scenarios=[ScenarioClass.CANCEL])
        (cell,) = result.cells
        assert cell.found is not None, "AutoGen's cancel hangs the turn: the search finds it"
        row = Row(spec, target.framework, result, "", {}, 0.0, False, setting_of(target))
        renders.append(render([row], seed=3, max_examples=6))
        bundles.append(bundle_texts(target, cell.found, seed=3, scenario="cancel"))
    assert renders[0] == renders[1]
    assert bundles[0] == bundles[1]
    assert (
        "| `loop:examples/loops/autogen_plain.py:agent` | default loop + persistence |"
        in (renders[0])
    )

"""Progress on a stderr that is not a terminal (issue 36): a line at a
steady interval, on stderr only, never on stdout, none with ``--quiet`` or
``PRUNECHECK_PROGRESS_INTERVAL=0``.  Lines are counted against a fake clock,
never against wall time."""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from prunecheck.model.errors import ConfigError
from prunecheck.sim.cli.app import main
from prunecheck.sim.support import progress
from prunecheck.sim.support.progress import LogProgress, Progress, TerminalProgress, progress_for

ROOT = Path(__file__).resolve().parent.parent
TRACE = ROOT / "tests" / "corpus" / "seed_parallel_batch.json"
SPANS = ROOT / "examples" / "incident" / "spans.otlp.jsonl"


class _Clock:
    """A clock that moves only when told to (``tick`` seconds a reading
    with ``tick``)."""

    def __init__(self, tick: float = 0.0) -> None:
        self.now, self.tick = 0.0, tick

    def __call__(self) -> float:
        self.now += self.tick
        return self.now


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _log(clock: _Clock, interval: float = 10.0, **kw: float) -> tuple[LogProgress, io.StringIO]:
    out = io.StringIO()
    return LogProgress(out, "check", interval, clock=clock, ticker=False, **kw), out


def test_a_line_comes_once_the_interval_is_over_and_then_at_the_same_pace() -> None:
    clock = _Clock()
    bar, out = _log(clock)
    bar.start(3)
    bar.step("checks after_append: load 0.2, seed 1")
    clock.now = 9.9
    bar.step("checks after_append: load 0.5, seed 1")
    assert out.getvalue() == ""  # not yet: under the interval
    clock.now = 10.0
    bar.beat()
    clock.now = 15.0
    bar.beat()  # 5 s after the last line: none
    clock.now = 20.5
    bar.step("checks after_append: adversarial search")
    tell = bar.runs(200)
    assert tell is not None
    tell(40)  # 20.5 s: not 10 s after the last line
    clock.now = 31.0
    tell(60)
    bar.close()
    assert out.getvalue().splitlines() == [
        "prunecheck check: still running after 10 s: task 2 of 3 "
        "(checks after_append: load 0.5, seed 1)",
        "prunecheck check: still running after 20 s: task 3 of 3 "
        "(checks after_append: adversarial search)",
        "prunecheck check: still running after 31 s: task 3 of 3 "
        "(checks after_append: adversarial search), run 60/200",
    ]


def test_counted_items_and_out_of_order_tasks_and_the_time_limit() -> None:
    clock = _Clock(tick=1.0)  # every reading a second later
    bar, out = _log(clock, interval=2.0, deadline=100.0)
    bar.start(5000, "events")
    tell = bar.runs(5000)
    assert tell is not None
    for done in (1024, 2048, 3072, 4096, 5000):
        tell(done)
    sweep, log = _log(_Clock(tick=1.0), interval=1.0)
    sweep.start(4, "runs")
    for key in ("recency/commit", "unit_safe/none"):
        sweep.finished(key)
    lines = out.getvalue().splitlines()
    assert lines and all(" of 5000 events" in line for line in lines)
    assert all("time limit in" in line for line in lines)
    counts = [int(line.split(": ")[2].split(" of ")[0]) for line in lines]
    assert len(counts) >= 2 and counts == sorted(counts) and counts[-1] <= 5000
    assert log.getvalue().splitlines()[-1].endswith("2 of 4 runs (unit_safe/none)")


def test_the_ticker_writes_while_nothing_reports_and_stops_when_closed() -> None:
    """The one test on the real clock: a line comes while the command is
    silent (asserted by its effect, waiting up to 30 s), none after close."""
    out = io.StringIO()
    wrote = threading.Event()

    class _Seen(io.StringIO):
        def write(self, text: str) -> int:
            wrote.set()
            return out.write(text)

    bar = LogProgress(_Seen(), "explore", interval=0.01)
    bar.start(3, "levels")
    bar.step("explore recency: depth 1 of 3, 1 states")
    assert wrote.wait(30.0)
    bar.close()
    assert bar._thread is None
    seen = out.getvalue()
    assert seen.startswith("prunecheck explore: still running after ")
    assert "1 of 3 levels (explore recency: depth 1 of 3, 1 states)" in seen
    bar.beat()  # closed: no more lines
    assert out.getvalue() == seen


def test_which_progress(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRUNECHECK_PROGRESS_INTERVAL", "7.5")
    piped = progress_for(None, io.StringIO(), command="search")
    assert isinstance(piped, LogProgress) and piped.interval == 7.5
    assert piped.command == "search"
    assert type(progress_for(None, io.StringIO(), quiet=True)) is Progress
    assert type(progress_for(None, _Terminal())) is TerminalProgress
    monkeypatch.setenv("PRUNECHECK_PROGRESS_INTERVAL", "0")
    assert type(progress_for(None, io.StringIO())) is Progress
    monkeypatch.delenv("PRUNECHECK_PROGRESS_INTERVAL")
    default = progress_for(None, io.StringIO())
    assert isinstance(default, LogProgress) and default.interval == 10.0
    for bad in ("-1", "soon", "nan", "inf"):
        monkeypatch.setenv("PRUNECHECK_PROGRESS_INTERVAL", bad)
        with pytest.raises(ConfigError, match="PRUNECHECK_PROGRESS_INTERVAL"):
            progress_for(None, io.StringIO())


@pytest.fixture
def fake_clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every progress line due at every update: a clock a second further
    at each reading, an interval of one second, no ticker thread."""
    monkeypatch.setattr(progress, "_clock", _Clock(tick=1.0))
    monkeypatch.setattr(progress, "_TICKER", False)
    monkeypatch.setenv("PRUNECHECK_PROGRESS_INTERVAL", "1")
    yield


COMMANDS = [
    pytest.param(
        "check",
        "check unit_safe --check-at before_invoke --levels 0.2 --seeds 1 --slow-levels none "
        "--max-examples 3 --horizon 5 --no-failures",
        id="check",
    ),
    pytest.param("search", "search unit_safe --max-examples 3 --no-failures", id="search"),
    pytest.param("explore", "explore unit_safe --depth 2", id="explore"),
    pytest.param("replay", f"replay {TRACE}", id="replay"),
    pytest.param("import", f"import {SPANS}", id="import"),
    pytest.param(
        "sweep",
        "sweep --out {tmp}/r.jsonl unit_safe --gate none --levels 0.2 --seeds 1 --horizon 5 "
        "--jobs 1",
        id="sweep",
    ),
    pytest.param(
        "report",
        "report --out {tmp}/rep --seeds 1 --quick --jobs 1",
        id="report",
        marks=pytest.mark.slow,
    ),
]


@pytest.mark.parametrize(("command", "argv"), COMMANDS)
def test_each_long_command_prints_progress_lines_on_stderr_only(
    command: str,
    argv: str,
    fake_clock: None,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    words = argv.format(tmp=tmp_path).split()
    status = main(words)
    out, err = capsys.readouterr()
    assert status in (0, 1), err
    said = [line for line in err.splitlines() if "still running after" in line]
    assert said, err
    assert all(line.startswith(f"prunecheck {command}: still running after ") for line in said)
    assert "still running" not in out
    if "--quiet" not in words and command in ("check", "replay", "sweep"):
        assert main([*words, "--quiet"]) == status
        assert "still running" not in capsys.readouterr().err


def test_json_stdout_stays_one_document_while_progress_goes_to_stderr(
    fake_clock: None, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["search", "unit_safe", "--max-examples", "3", "--no-failures", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["command"] == "search"
    assert "prunecheck search: still running after" in err


def test_report_names_itself_in_its_progress_lines(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The fast twin of the slow report case above: report's sweep reports
    as ``prunecheck report``."""
    import prunecheck.sim.cli.report as report

    asked: dict[str, object] = {}

    class _Stop(Exception):
        pass

    def run_sweep(*args: object, **kw: object) -> None:
        asked.update(kw)
        raise _Stop

    monkeypatch.setattr(report, "run_sweep", run_sweep)
    with pytest.raises(_Stop):
        main(["report", "--out", str(tmp_path / "rep"), "--seeds", "1", "--quick", "--jobs", "1"])
    assert asked["command"] == "report" and asked["quiet"] is False


@pytest.mark.parametrize("jobs", [1, 2])
def test_forked_placements_report_each_one_done(jobs: int) -> None:
    """check's placements side by side tell the progress as each finishes
    (the parent saw nothing of them but their start before)."""
    from prunecheck.sim.support.forked import fork_map

    seen: list[int] = []
    assert fork_map(lambda x: x * x, [1, 2, 3], jobs=jobs, done=seen.append) == [1, 4, 9]
    assert sorted(seen) == [0, 1, 2]
    clock = _Clock(tick=1.0)
    bar, out = _log(clock, interval=1.0)
    bar.start(3, "placements")
    for i in seen:
        bar.finished(f"checks {['after_append', 'after_batch', 'before_invoke'][i]} done")
    assert (
        out.getvalue().splitlines()[-1].startswith("prunecheck check: still running after ")
        and " 3 of 3 placements (checks " in out.getvalue().splitlines()[-1]
    )

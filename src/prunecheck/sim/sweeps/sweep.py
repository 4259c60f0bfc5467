"""Sweeps: policies × gates × runtime configurations × load levels × seeds.

A sweep is a list of :class:`RunSpec`; each runs :func:`~.simulator.simulate`
once and becomes one :class:`Row`, a JSON line in the results file.  Runs go
in parallel across processes; every finished row is appended and flushed at
once, so a sweep killed halfway keeps its finished runs, and running it again
skips every run whose key is already in the file.  When the sweep ends, the
file is rewritten sorted by key: the same runs give a byte-identical file
whatever the scheduling.

Bad saved state is reported and discarded, never fatal: a torn last line
(the sweep was killed mid-write) or a line that is not a row is dropped with
a warning, and its run is simply run again.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import closing, suppress
from dataclasses import dataclass, replace
from itertools import product
from pathlib import Path
from typing import TextIO

from prunecheck.model.config import CheckAt, RetryMode, RuntimeConfig
from prunecheck.model.errors import ConfigError, PolicyError
from prunecheck.model.gates import Gate
from prunecheck.sim.drivers.simulator import DEFAULT_HORIZON
from prunecheck.sim.drivers.workload import load_at
from prunecheck.sim.subjects.cage_worker import die_with_parent
from prunecheck.sim.subjects.time_limit import DEFAULT_TIMEOUT
from prunecheck.sim.support.ledger import CHECKSUM, is_intact, locked, seal
from prunecheck.sim.support.outputs import output_file, refusing_full_disk, write_atomically
from prunecheck.sim.support.progress import progress_for
from prunecheck.sim.sweeps.runs import Row, RunSpec, work

__all__ = [
    "RESULTS_FILE",
    "SweepOutcome",
    "configs",
    "holds_results",
    "plan",
    "policy_failure",
    "read_rows",
    "run_sweep",
]


@dataclass(frozen=True, slots=True)
class SweepOutcome:
    """What :func:`run_sweep` did: the rows of the requested runs (in key
    order), how many it ran now and how many it reused from the file, and
    how many it did not run because the time limit came first."""

    rows: tuple[Row, ...]
    ran: int
    reused: int
    skipped: int = 0

    @property
    def complete(self) -> bool:
        return self.skipped == 0


# -------------------------------------------------------------------- plans
def configs(
    base: RuntimeConfig,
    *,
    gates: Iterable[Gate] = tuple(Gate),
    check_at: Iterable[CheckAt] = (CheckAt.AFTER_APPEND,),
    retry: Iterable[RetryMode] = (RetryMode.RERUN_BATCH,),
) -> list[RuntimeConfig]:
    """``base`` under every combination of gate, check time and retry mode."""
    return [
        replace(base, gate=g, check_at=c, retry=r) for g, c, r in product(gates, check_at, retry)
    ]


def plan(
    policies: Sequence[str],
    runtime: Sequence[RuntimeConfig],
    levels: Sequence[float],
    seeds: Sequence[int],
    *,
    tightness: Sequence[float | None] = (None,),
    horizon: float = DEFAULT_HORIZON,
) -> list[RunSpec]:
    """Every combination, each load from :func:`~.load.load_at` (with
    ``tightness`` overriding the level's when not None)."""
    specs = []
    for policy, config, level, tight, seed in product(policies, runtime, levels, tightness, seeds):
        load = load_at(level) if tight is None else load_at(level, tightness=tight)
        specs.append(RunSpec(policy, config, level, load, seed, horizon))
    return specs


# ---------------------------------------------------------------- one run
def policy_failure(rows: Sequence[Row], out: Path) -> PolicyError | None:
    """The error to exit with (2) when some run ended in a policy error: the
    first such run's words, how many others, and where the rest is saved."""
    failed = [r for r in rows if r.error is not None]
    if not failed:
        return None
    first = failed[0]
    more = f" ({len(failed) - 1} more run(s) failed too)" if len(failed) > 1 else ""
    text, _, hint = (first.error or "").partition(" Hint: ")
    return PolicyError(
        f"run {first.key}",
        f"ended in a policy error{more}: {text}",
        (hint + " " if hint else "") + f"No verdict for it; the "
        f"{len(rows) - len(failed)} finished run(s) are saved in {out}, and "
        "running the same command again reruns only the failed ones.",
    )


# ------------------------------------------------------------ results file
def _line(row: Row) -> str:
    return json.dumps(seal(row.to_json()), sort_keys=True) + "\n"


def read_rows(path: Path, warn: Callable[[str], None] | None = None) -> dict[str, Row]:
    """The rows stored in ``path`` by key (empty if it does not exist).

    A torn last line or a line that is not a row is discarded with a
    warning through ``warn``; it is never fatal.
    """
    say = warn or (lambda text: print(text, file=sys.stderr))
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(
            str(path),
            f"cannot be read as a results file ({exc}).",
            "give --out a new file, or delete the damaged one.",
        ) from None
    rows: dict[str, Row] = {}
    lines = text.split("\n")
    _refuse_foreign(path, lines)
    _refuse_loop_rows(path, lines)
    discarded = 0
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        torn = number == len(lines) and not text.endswith("\n")
        try:
            data = json.loads(line)
            if not torn and not is_intact(data):
                raise ValueError(
                    "its checksum does not match its content: edited by hand, or "
                    "written by an older prunecheck"
                )
            row = Row.from_json(data)
        except (ValueError, TypeError, KeyError, ConfigError, RecursionError) as exc:
            discarded += 1
            if discarded <= _WARNINGS_SHOWN:
                what = (
                    "torn last line (the sweep was interrupted mid-write)"
                    if torn
                    else f"line {number} is not a result row ({type(exc).__name__}: {exc})"
                )
                say(
                    f"prunecheck sweep: warning: {path}: {what}; discarded, its run will be "
                    "run again."
                )
            continue
        rows[row.key] = row
    if discarded > _WARNINGS_SHOWN:
        say(
            f"prunecheck sweep: warning: {path}: {discarded - _WARNINGS_SHOWN} more lines "
            f"discarded for the same kind of reason ({discarded} in all); their runs will be "
            "run again."
        )
    return rows


def _is_ours(line: str) -> bool:
    """Whether a line is (or was: damaged, or stale from an older prunecheck)
    a prunecheck result row: a JSON object with a row checksum or a run key."""
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        return False
    return isinstance(data, dict) and (CHECKSUM in data or "key" in data)


#: What a results file is, in messages.
RESULTS_FILE = "a prunecheck results file"


def holds_results(path: Path) -> bool:
    """Whether ``path`` is a results file a sweep wrote (its first line a
    result row, or a row cut short): one it may resume and rewrite."""
    try:
        with path.open("rb") as handle:
            first = handle.readline(1 << 20).decode("utf-8", errors="replace")
    except OSError:
        return False
    torn = not first.endswith("\n")  # a sweep cut off while writing its first row
    return _is_ours(first) or (torn and first.startswith('{"config": {"budget": '))


#: The ``kind`` of a loop sweep's rows (``loop_sweep.ROW_KIND``; not imported: a
#: policy sweep loads no agent-loop code).
LOOP_ROW_KIND = "loop_session"


def _refuse_loop_rows(path: Path, lines: Sequence[str]) -> None:
    """Refuse a loop sweep's results file: a policy sweep would rewrite it without
    its sessions (O(size of the file): a substring test per line, parsed if it hits)."""
    for number, line in enumerate(lines, 1):
        if f'"kind": "{LOOP_ROW_KIND}"' not in line:
            continue
        with suppress(ValueError, RecursionError):
            data = json.loads(line)
            if is_intact(data) and data.get("kind") == LOOP_ROW_KIND:
                raise ConfigError(
                    str(path),
                    f"line {number} is a session of an agent loop's sweep, not a policy's run; "
                    "a policy sweep would rewrite the file without it.",
                    "give --out a new file: a policy sweep keeps its own results file.",
                )


def _refuse_foreign(path: Path, lines: Sequence[str]) -> None:
    """Refuse a file of another tool's data: complete lines, none of them a
    prunecheck row (a torn line alone is a sweep interrupted mid-write)."""
    complete = [line for line in lines[:-1] if line.strip()]
    if not complete or any(_is_ours(line) for line in complete[:1000]):
        return
    raise ConfigError(
        str(path),
        f"holds {len(complete)} line(s) of other data, none of them a prunecheck result "
        "row; prunecheck never discards a file it did not write.",
        "give --out a new file (or a results file an earlier sweep wrote).",
    )


def _write_sorted(path: Path, rows: Iterable[Row]) -> None:
    """Rewrite ``path`` atomically with ``rows`` sorted by key (on failure,
    a full disk, ``path`` is left as it was and no temporary file stays)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    ordered = sorted(rows, key=lambda r: r.key)
    write_atomically(path, lambda out: out.writelines(_line(r) for r in ordered))


#: Discarded lines of a results file warned about one by one; the rest are counted.
_WARNINGS_SHOWN = 3


# ------------------------------------------------------------------- sweep
def run_sweep(
    specs: Sequence[RunSpec],
    out: Path,
    *,
    jobs: int | None = None,
    quiet: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
    warn: Callable[[str], None] | None = None,
    on_row: Callable[[Row], None] | None = None,
    exclusive: bool = False,
    scheduler: str | None = None,
    time_limit: float | None = None,
    command: str = "sweep",
    fresh: bool = False,
) -> SweepOutcome:
    """Run every spec whose key is not in ``out`` yet; return all their rows.

    Parameters
    ----------
    specs: the runs (duplicates are run once).
    out: the results file (JSON lines); created if missing.
    jobs: worker processes (default: the machine's cores; 1 runs in-process).
    quiet: no progress (else a bar on a terminal, a line every
        ``$PRUNECHECK_PROGRESS_INTERVAL`` seconds on any other stderr).
    timeout: seconds one policy call may take before it counts as hung.
    warn: where warnings about discarded lines go (default: stderr).
    on_row: called with each new row as it is written.
    exclusive: when done, keep only these runs' rows in ``out`` (a report's
        file then holds exactly its runs); by default rows of other runs stay.
    scheduler: run on Dask instead (``local`` or ``tcp://HOST:PORT``, see
        :mod:`.dask_pool`); ``jobs`` is then a LocalCluster's worker count.
    time_limit: seconds (wall clock) after which no new run starts; runs in
        flight finish and are kept.  The outcome then says how many runs were
        ``skipped``; rerunning resumes with them.
    command: the command its progress lines name (``sweep``, ``report``).
    fresh: start from nothing, replacing what ``out`` holds (``--force``);
        by default an existing ``out`` must be a results file (it is resumed).
    """
    # a device, FIFO, folder or another tool's file refused; a symlink's target written
    out = output_file(out, force=fresh, owned=holds_results, mine=RESULTS_FILE)
    if not fresh and out.is_file():  # a loop sweep's file: refused before the lock is taken
        with suppress(OSError, UnicodeDecodeError):
            _refuse_loop_rows(out, out.read_text(encoding="utf-8").split("\n"))
    with locked(out, "sweep"):  # a second writer refuses (exit 2): no lost rows
        return _run_sweep(
            specs,
            out,
            jobs=jobs,
            quiet=quiet,
            timeout=timeout,
            warn=warn,
            on_row=on_row,
            exclusive=exclusive,
            scheduler=scheduler,
            time_limit=time_limit,
            command=command,
            fresh=fresh,
        )


def _run_sweep(
    specs: Sequence[RunSpec],
    out: Path,
    *,
    jobs: int | None,
    quiet: bool,
    timeout: float,
    warn: Callable[[str], None] | None,
    on_row: Callable[[Row], None] | None,
    exclusive: bool,
    scheduler: str | None,
    time_limit: float | None,
    command: str,
    fresh: bool,
) -> SweepOutcome:
    deadline = None if time_limit is None else time.monotonic() + time_limit
    wanted = {s.key: s for s in specs}
    stored = {} if fresh else read_rows(out, warn)
    new: dict[str, Row] = {}

    def kept() -> str:
        return (
            f"the {len(stored) + len(new)} finished runs are kept in it "
            f"({len(new)} of them run now)."
        )

    with refusing_full_disk(out, kept):
        return _sweep_into(
            specs,
            out,
            stored,
            new,
            wanted,
            jobs=jobs,
            quiet=quiet,
            timeout=timeout,
            on_row=on_row,
            exclusive=exclusive,
            scheduler=scheduler,
            deadline=deadline,
            command=command,
        )


def _sweep_into(
    specs: Sequence[RunSpec],
    out: Path,
    stored: dict[str, Row],
    new: dict[str, Row],
    wanted: dict[str, RunSpec],
    *,
    jobs: int | None,
    quiet: bool,
    timeout: float,
    on_row: Callable[[Row], None] | None,
    exclusive: bool,
    scheduler: str | None,
    deadline: float | None,
    command: str,
) -> SweepOutcome:
    _write_sorted(out, stored.values())  # drop any torn line before appending
    # A run that ended in a policy error is run again (the policy may be fixed).
    todo = [s for k, s in sorted(wanted.items()) if k not in stored or stored[k].error]
    # Heaviest runs first, so the last worker is not left with a long one.
    todo.sort(key=lambda s: (-s.level * s.load.agents, s.key))
    # never more workers than runs to do (--jobs 10000 for 8 runs starts 8)
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(todo)))
    bar = progress_for(command=command, quiet=quiet)
    bar.start(len(todo), "runs")
    bar.step(f"simulating {len(todo)} runs ({len(wanted) - len(todo)} reused)")
    with out.open("a", encoding="utf-8") as sink, closing(bar):

        def keep(row: Row) -> None:
            _append(sink, row)
            new[row.key] = row
            bar.finished(row.key.split("#")[0])
            if on_row is not None:
                on_row(row)

        if scheduler is not None:
            from prunecheck.sim.sweeps.dask_pool import run_on_dask

            def keep_in_time(row: Row) -> None:
                keep(row)
                if deadline is not None and time.monotonic() >= deadline:
                    raise _OutOfTime  # run_on_dask cancels the rest

            with suppress(_OutOfTime):
                run_on_dask(todo, scheduler, jobs, timeout, keep_in_time)
        elif jobs == 1 or len(todo) <= 1:
            for spec in todo:
                if deadline is not None and time.monotonic() >= deadline:
                    break
                keep(work(spec, timeout))
        else:
            _parallel(todo, jobs, timeout, keep, deadline)
    rows = {**stored, **new}
    _write_sorted(out, (r for k, r in rows.items() if not exclusive or k in wanted))
    done = [k for k in sorted(wanted) if k in rows]
    return SweepOutcome(
        tuple(rows[k] for k in done), len(new), len(done) - len(new), len(wanted) - len(done)
    )


class _OutOfTime(Exception):
    """The time limit passed while Dask was delivering rows."""


def _append(sink: TextIO, row: Row) -> None:
    sink.write(_line(row))
    sink.flush()


def _parallel(
    todo: Sequence[RunSpec],
    jobs: int,
    timeout: float,
    keep: Callable[[Row], None],
    deadline: float | None = None,
) -> None:
    """Run ``todo`` on ``jobs`` worker processes, keeping each row as it
    arrives.  At most ``jobs`` runs are handed out at a time (the pool's own
    queue would start a few more after the deadline), so "out of time" means
    exactly: nothing starts after ``deadline``; the runs in flight finish and
    count."""
    specs = iter(todo)
    with ProcessPoolExecutor(max_workers=jobs, initializer=die_with_parent) as pool:
        running: dict[Future[Row], RunSpec] = {}

        def hand_out() -> None:
            while len(running) < jobs and (deadline is None or time.monotonic() < deadline):
                spec = next(specs, None)
                if spec is None:
                    return
                running[pool.submit(work, spec, timeout)] = spec

        try:
            hand_out()
            while running:
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    spec = running.pop(future)
                    try:
                        row = future.result()
                    except BrokenProcessPool:
                        raise PolicyError(
                            "sweep",
                            f"a worker process died while running {spec.key} (a "
                            "policy that exits the process, crashes the interpreter or exhausts "
                            "memory?); the finished runs are saved.",
                            "run that policy alone with --jobs 1 to see the failure; rerunning "
                            "the same command resumes.",
                        ) from None
                    keep(row)
                hand_out()
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise

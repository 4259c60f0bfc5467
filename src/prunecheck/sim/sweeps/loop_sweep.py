"""``prunecheck sweep loop:…``: an agent loop's session failure rates under load.

The check of a loop (:mod:`prunecheck.sim.api.loop_verdict`) answers "can it
break?" with a minimal schedule; a sweep answers "how often does a session
break?".  For each applicable scenario class of the agent, each load level
and each of ``sessions`` seeded sessions, it runs one session of the agent's
real loop (offline, in the cage, as ``check`` runs it) in the SimPy
simulator's time (:mod:`prunecheck.sim.drivers.action_simulator`): at level
``L`` the tools' latencies and the user's pace are :func:`load_at(L)
<prunecheck.sim.drivers.workload.load_at>`'s and every fault's rate is
scaled by ``L`` (0: no fault at all).  Each session is one JSON line of the
results file, appended and flushed as it finishes, under the file's lock:
an interrupted sweep resumes where it stopped, and a second writer is
refused.  At the end the file is rewritten sorted by key, so the same seed
gives the same bytes.  :func:`loop_rate_table` reads the rows into the table
``sweep`` prints: per class and level, the sessions that ended in a
violation, with an exact 95 % interval per 1,000 sessions, and the kinds met.
"""

from __future__ import annotations

import json
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from prunecheck.model.errors import ConfigError
from prunecheck.sim.drivers.action_simulator import session_rng, simulate_session
from prunecheck.sim.drivers.workload import load_at
from prunecheck.sim.stats.sessions import session_rate
from prunecheck.sim.subjects.loops.confine import confined
from prunecheck.sim.subjects.loops.offline import offline
from prunecheck.sim.subjects.loops.scenarios import SCENARIOS, ScenarioClass
from prunecheck.sim.subjects.loops.system import LoopSystem
from prunecheck.sim.subjects.loops.target import load_target
from prunecheck.sim.support.ledger import is_intact, locked, seal
from prunecheck.sim.support.outputs import write_atomically

__all__ = [
    "LoopRow",
    "LoopSweep",
    "class_rank",
    "loop_groups",
    "loop_rate_table",
    "read_loop_rows",
    "row_key",
    "run_loop_sweep",
]

#: The ``kind`` field of a loop sweep's rows.
ROW_KIND = "loop_session"


@dataclass(frozen=True, slots=True)
class LoopRow:
    """One session of a loop sweep (one line of the results file)."""

    spec: str
    scenario: str
    level: float
    index: int
    seed: int
    steps: int
    requests: int
    faults: int
    violations: tuple[str, ...]
    first_violation: int | None
    error: str | None
    sim_time: float

    @property
    def key(self) -> str:
        return row_key(self.spec, self.scenario, self.level, self.seed, self.index)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["violations"] = list(self.violations)
        return {"kind": ROW_KIND, "key": self.key, **data}

    @classmethod
    def from_json(cls, data: Any) -> LoopRow:
        if not isinstance(data, dict) or data.get("kind") != ROW_KIND:
            raise ValueError("not a loop session row")
        fields = {k: data[k] for k in cls.__dataclass_fields__}
        fields["violations"] = tuple(str(v) for v in fields["violations"])
        row = cls(**fields)
        if row.key != data.get("key"):
            raise ValueError("its key does not match its fields")
        return row


@dataclass(frozen=True, slots=True)
class LoopSweep:
    """What a loop sweep left in its results file."""

    rows: tuple[LoopRow, ...]
    ran: int
    reused: int
    not_applicable: tuple[str, ...]


def row_key(spec: str, scenario: str, level: float, seed: int, index: int) -> str:
    """The results file's key of one session (sorts by agent, class, level, index)."""
    return f"{spec}|{scenario}|p{level:g}|seed{seed}|{index:06d}"


def _line(row: LoopRow) -> str:
    return json.dumps(seal(row.to_json()), sort_keys=True) + "\n"


def _refuse_other_rows(path: Path, number: int, data: Any) -> None:
    """A whole row of another sweep (a policy's) is refused, never discarded: the
    file would be rewritten without it."""
    if isinstance(data, dict) and data.get("kind") != ROW_KIND:
        raise ConfigError(
            str(path),
            f"line {number} is a row of a policy sweep, not a session of an agent loop; a "
            "loop sweep would rewrite the file without it.",
            "give --out a new file: a loop sweep keeps its own results file.",
        )


def read_loop_rows(path: Path, warn: Callable[[str], None] | None = None) -> dict[str, LoopRow]:
    """The loop rows stored in ``path`` by key (empty if it does not exist); a
    torn or damaged line, or a row of an earlier loop sweep's driver, is discarded
    with a warning and its session runs again; a policy sweep's row is refused
    (:class:`ConfigError`)."""
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
    rows: dict[str, LoopRow] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            if not is_intact(data):
                raise ValueError("its checksum does not match its content")
            _refuse_other_rows(path, number, data)
            row = LoopRow.from_json(data)
        except (ValueError, TypeError, KeyError, RecursionError) as exc:
            say(f"prunecheck sweep: warning: {path}: line {number} is not a loop session row "
                f"({exc}); discarded, its session will be run again.")  # fmt: skip
            continue
        rows[row.key] = row
    return rows


def run_loop_sweep(
    spec: str,
    out: Path,
    *,
    levels: Sequence[float],
    sessions: int,
    seed: int = 0,
    scenarios: Sequence[ScenarioClass] | None = None,
    max_steps: int = 16,
    fresh: bool = False,
    on_row: Callable[[int, int], None] | None = None,
) -> LoopSweep:
    """Run (or resume) the sessions of ``spec`` into ``out`` (see the module's docs).

    Parameters
    ----------
    spec : str
        The ``loop:`` spec of the agent.
    out : Path
        The results file (JSON lines; resumed when it holds rows).
    levels : sequence of float
        The load levels (0 to 1): the workload's latencies and the faults' rate.
    sessions : int
        Sessions per class and level.
    seed : int
        The sweep's seed: session ``i`` of a class and level has its own stream.
    scenarios : sequence of ScenarioClass or None
        The classes (None: every class the agent supports).
    max_steps : int
        Steps of one session at most.
    fresh : bool
        Start over: rows already in ``out`` are not reused.
    on_row : callable or None
        Told ``(done, total)`` after each session (progress).
    """
    if not fresh:  # a policy sweep's file is refused before the agent is loaded or a lock taken
        read_loop_rows(out, warn=lambda _: None)
    target = load_target(spec)
    caps = target.adapter.capabilities(target.target)
    chosen = [SCENARIOS[s] for s in (scenarios or list(SCENARIOS))]
    live = [s for s in chosen if s.applies(caps)]
    skipped = tuple(s.name.value for s in chosen if not s.applies(caps))
    plan = [(s, level, i) for s in live for level in levels for i in range(sessions)]
    with locked(out, "sweep"):  # a second writer refuses (exit 2): no lost rows
        stored = {} if fresh else read_loop_rows(out)
        write_atomically(out, lambda sink: sink.writelines(_line(r) for r in stored.values()))
        ran = reused = 0
        wanted: dict[str, LoopRow] = {}
        with out.open("a", encoding="utf-8") as sink, confined(), offline():
            for done, (scenario, level, index) in enumerate(plan, 1):
                key = row_key(spec, scenario.name.value, level, seed, index)
                row = stored.get(key)
                if row is None:
                    system = LoopSystem(target, scenario, max_steps)
                    rng = session_rng(seed, index, f"{scenario.name.value}:{level:g}")
                    run = simulate_session(system, rng, load=load_at(level), pressure=level)
                    row = LoopRow(spec, scenario.name.value, level, index, seed, run.steps,
                                  run.requests, run.faults, run.violations, run.first_violation,
                                  run.error, run.sim_time)  # fmt: skip
                    sink.write(_line(row))
                    sink.flush()
                    ran += 1
                else:
                    reused += 1
                wanted[key] = row
                if on_row is not None:
                    on_row(done, len(plan))
        ordered = sorted(wanted.values(), key=lambda r: r.key)
        write_atomically(out, lambda sink: sink.writelines(_line(r) for r in ordered))
    return LoopSweep(tuple(ordered), ran, reused, skipped)


def class_rank(scenario: str) -> int:
    """Where the scenario class named ``scenario`` stands in the classes' order (unknown: last)."""
    return next((i for i, c in enumerate(ScenarioClass) if c.value == scenario), len(ScenarioClass))


def loop_groups(rows: Iterable[LoopRow]) -> list[tuple[tuple[str, str, float], list[LoopRow]]]:
    """The sessions of each agent, scenario class and load level, in that order
    (classes in :class:`ScenarioClass`'s order): what the table and the plot count."""
    groups: dict[tuple[str, str, float], list[LoopRow]] = defaultdict(list)
    for row in rows:
        groups[(row.spec, row.scenario, row.level)].append(row)
    return sorted(groups.items(), key=lambda kv: (kv[0][0], class_rank(kv[0][1]), kv[0][2]))


def loop_rate_table(rows: Iterable[LoopRow], not_applicable: Sequence[str] = ()) -> str:
    """The session failure rates of a loop sweep: per class and load level, the
    sessions that ended in a violation (exact 95 % interval per 1,000), the
    violation kinds met (sessions each) and the sessions the subject ended in
    an error."""
    lines = ["| agent | scenario class | load | sessions | violated "
             "(per 1,000, 95 % interval) | kinds (sessions) | faults | errors |",
             "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for (spec, scenario, level), group in loop_groups(rows):
        violated = sum(1 for r in group if r.violations)
        kinds: Counter[str] = Counter(k for r in group for k in r.violations)
        met = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())) or "none"
        rate = session_rate(violated, len(group))
        errors = sum(1 for r in group if r.error)
        faults = sum(r.faults for r in group)
        lines.append(f"| `{spec}` | {scenario} | {level:g} | {len(group)} | {violated} "
                     f"({rate.per_1000_text()}) | {met} | {faults} | {errors} |")  # fmt: skip
    if not_applicable:
        lines.append("")
        lines.append(f"not applicable to this agent: {', '.join(not_applicable)}")
    return "\n".join(lines) + "\n"

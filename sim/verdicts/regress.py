"""Runtime regression checks: a baseline of incident rates, and a
statistical comparison against it.

A *baseline* is a fixed, seeded suite — simulated runs at a few load levels
× seeds of one policy in one runtime — plus the reproduction corpus (traces
kept in the repository, replayed with their own policy and budget under the
runtime's knobs).  :func:`compare` holds a new run of the same suite
against it, class by class, over *sessions* (the statistical unit, see
:mod:`.sessions`): the share of sessions that met an incident of the class,
baseline against current, by a one-sided Fisher exact test (sessions are
independent trials; invocations inside one are not), with a minimum-effect
guard so that a tiny, significant change on many sessions is not called a
regression.  A change the test cannot tell from chance is reported as
"not significant", never as "unchanged".  The time to the first violation
is compared too, by a one-sided log-rank test over user turns (reported;
the rates decide).  A corpus trace that now shows violations it did not
show before is a regression whatever the tests say.

File format (JSON, version 2; written sorted, so the same suite gives a
byte-identical file)::

    {"format": "prunecheck-baseline", "version": 2, "complete": true,
     "policy": "lowest_salience", "config": {...RuntimeConfig...},
     "suite": {"levels": [0.2, 0.6, 1.0], "seeds": [1, 2, 3], "horizon": 300.0},
     "runs": [{"level": 0.2, "seed": 1, "invocations": 29, "events": 135,
               "incidents": {...}, "exposed": {...}, "error": null,
               "sessions": [{...SessionRecord...}, ...]}, ...],
     "corpus": {"dir": "tests/corpus", "traces": [{"path": "x.json",
                "violations": {...}, "error": null}, ...]}}

Version 1 files (counts per invocation, no sessions) are refused with a
hint to re-create them: their numbers cannot be compared over sessions.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from prunecheck.model.errors import ConfigError, PrunecheckError
from prunecheck.model.incidents import IncidentKind
from prunecheck.model.policies import Policy
from prunecheck.model.runtime import RuntimeConfig
from prunecheck.model.trace import Trace, incidents_of, loads
from prunecheck.sim.adapters.loader import DEFAULT_TIMEOUT, guarded, load_policy
from prunecheck.sim.stats.sessions import (
    SessionRecord,
    observations,
    sessions_from_json,
    sessions_to_json,
)
from prunecheck.sim.stats.survival import logrank_greater
from prunecheck.sim.verdicts.check import DEFAULT_HORIZON, DEFAULT_LEVELS, DEFAULT_SEEDS

__all__ = [
    "FORMAT",
    "VERSION",
    "Baseline",
    "Change",
    "ClassChange",
    "Comparison",
    "CorpusResult",
    "Recorder",
    "Suite",
    "SuiteRun",
    "compare",
    "corpus_paths",
    "error_of",
    "fisher_greater",
    "read_baseline",
    "run_corpus",
    "run_suite",
    "write_baseline",
]

FORMAT = "prunecheck-baseline"
VERSION = 2
#: The extra class the simulator counts: sessions that met any violation.
ANY = "any_violation"


@dataclass(frozen=True, slots=True)
class Suite:
    """The fixed scenario suite: one simulated run per level × seed."""

    levels: tuple[float, ...] = DEFAULT_LEVELS
    seeds: tuple[int, ...] = DEFAULT_SEEDS
    horizon: float = DEFAULT_HORIZON

    def to_json(self) -> dict[str, Any]:
        return {"levels": list(self.levels), "seeds": list(self.seeds), "horizon": self.horizon}

    @classmethod
    def from_json(cls, data: object, where: str) -> Suite:
        if not isinstance(data, dict):
            raise ConfigError(f"{where}: suite", "must be a JSON object.")
        try:
            return cls(tuple(float(x) for x in data["levels"]),
                       tuple(int(x) for x in data["seeds"]), float(data["horizon"]))
        except (KeyError, TypeError, ValueError):
            raise ConfigError(f"{where}: suite", "must hold levels, seeds and horizon.",
                              "re-create the file with 'prunecheck baseline'.") from None

    def size(self) -> int:
        return len(self.levels) * len(self.seeds)


@dataclass(frozen=True, slots=True)
class SuiteRun:
    """One simulated run: incidents and exposed invocations per class, and
    its sessions."""

    level: float
    seed: int
    invocations: int
    events: int
    incidents: Mapping[str, int]
    exposed: Mapping[str, int]
    error: str | None = None
    sessions: tuple[SessionRecord, ...] = ()

    @property
    def key(self) -> tuple[float, int]:
        return (self.level, self.seed)


@dataclass(frozen=True, slots=True)
class CorpusResult:
    """One corpus trace replayed under a runtime's knobs."""

    path: str
    violations: Mapping[str, int]
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Baseline:
    """A suite's results for one policy in one runtime (also a current run)."""

    policy: str
    config: RuntimeConfig
    suite: Suite
    runs: tuple[SuiteRun, ...] = ()
    corpus: tuple[CorpusResult, ...] = ()
    corpus_dir: str | None = None
    complete: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT, "version": VERSION, "complete": self.complete,
            "policy": self.policy, "config": self.config.to_json(),
            "suite": self.suite.to_json(),
            "runs": [{"level": r.level, "seed": r.seed, "invocations": r.invocations,
                      "events": r.events, "incidents": dict(r.incidents),
                      "exposed": dict(r.exposed), "error": r.error,
                      "sessions": sessions_to_json(r.sessions)} for r in self.runs],
            "corpus": {"dir": self.corpus_dir,
                       "traces": [{"path": c.path, "violations": dict(c.violations),
                                   "error": c.error} for c in self.corpus]},
        }


def write_baseline(baseline: Baseline, path: str | Path) -> None:
    """Write atomically (a reader never sees half a file)."""
    target = Path(path)
    text = json.dumps(baseline.to_json(), indent=1, sort_keys=True) + "\n"
    tmp = target.with_name(target.name + ".tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, target)
    except OSError as exc:
        raise ConfigError(str(path), f"cannot be written ({exc.strerror}).",
                          "check that the folder exists and is writable.") from None


def read_baseline(path: str | Path) -> Baseline:
    """Read a baseline file; :class:`ConfigError` naming it if malformed."""
    where = str(path)
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(where, "does not exist.", "write one with 'prunecheck baseline "
                          "--out FILE'.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(where, f"cannot be read ({exc}).") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(where, f"is not JSON ({exc.msg} at line {exc.lineno}).",
                          "a baseline is the JSON file 'prunecheck baseline' wrote.") from None
    except RecursionError:
        raise ConfigError(where, "nests JSON too deeply to be a baseline.",
                          "a baseline is the JSON file 'prunecheck baseline' wrote.") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ConfigError(where, f"is not a prunecheck baseline ('format' must be {FORMAT!r}).",
                          "write one with 'prunecheck baseline --out FILE'.")
    if data.get("version") == 1:
        raise ConfigError(where, "is a version 1 baseline: it counts model invocations, and "
                          "regress now compares sessions (version 2), which it does not hold.",
                          "re-create it with 'prunecheck baseline --out FILE' and the same "
                          "flags, from the runtime you trust.")
    if data.get("version") != VERSION:
        raise ConfigError(where, f"baseline version {data.get('version')!r} is not supported "
                          f"(this prunecheck reads version {VERSION}).",
                          "re-create it with 'prunecheck baseline'.")
    try:
        runs = tuple(SuiteRun(float(r["level"]), int(r["seed"]), int(r["invocations"]),
                              int(r["events"]), _counts(r["incidents"]), _counts(r["exposed"]),
                              r.get("error"), sessions_from_json(r["sessions"]))
                     for r in data["runs"])
        corpus = data.get("corpus") or {}
        traces = tuple(CorpusResult(str(c["path"]), _counts(c["violations"]), c.get("error"))
                       for c in corpus.get("traces", []))
        return Baseline(str(data["policy"]),
                        RuntimeConfig.from_json(data["config"], f"{where}: config"),
                        Suite.from_json(data["suite"], where), runs, traces,
                        corpus.get("dir"), bool(data.get("complete")))
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise ConfigError(where, f"is malformed ({type(exc).__name__}: {exc}).",
                          "re-create it with 'prunecheck baseline'.") from None


def _counts(data: object) -> dict[str, int]:
    if not isinstance(data, dict):
        raise TypeError("counts must be an object")
    return {str(k): int(v) for k, v in data.items()}


# ---------------------------------------------------------------------- running
def run_suite(spec: str, policy: Policy, config: RuntimeConfig, suite: Suite
              ) -> Iterator[SuiteRun]:
    """Run the suite, yielding each run as it finishes; stops after a run
    that a policy error ended (its ``error`` says so)."""
    from prunecheck.sim.drivers.simulator import simulate
    from prunecheck.sim.drivers.workload import load_at

    for level in suite.levels:
        for seed in suite.seeds:
            result = simulate(spec, config, load_at(level), seed, policy=policy,
                              horizon=suite.horizon)
            error = (f"run at load {level:g}, seed {seed}: {result.error}"
                     if result.error else None)
            yield SuiteRun(level, seed, result.invocations, result.events,
                           {k: n for k, n in result.incidents.items() if n},
                           {k: n for k, n in result.exposed.items() if n and ":" not in k},
                           error, result.sessions)
            if error:
                return


def corpus_paths(folder: str | None) -> list[Path]:
    """The traces of a corpus folder, sorted (none if ``folder`` is None)."""
    if folder is None:
        return []
    path = Path(folder)
    if not path.is_dir():
        raise ConfigError(f"--corpus {folder}", "is not a folder.",
                          "give the folder of reproduction traces (e.g. tests/corpus).")
    return sorted(path.glob("*.json"))


def run_corpus(paths: Sequence[Path], config: RuntimeConfig, *,
               timeout: float = DEFAULT_TIMEOUT) -> list[CorpusResult]:
    """Replay each corpus trace with its own policy and budget under
    ``config``'s knobs (gate, checks, retry, stream loss, repair, provider).
    A trace that cannot be read or replayed is reported, never fatal."""
    out = []
    for path in paths:
        try:
            trace = loads(path.read_text(encoding="utf-8"), str(path))
            knobs = replace(config, budget=trace.config.budget,
                            hard_ceiling=trace.config.hard_ceiling)
            policy = guarded(load_policy(trace.policy), timeout)
            rerun = Trace(trace.policy, knobs, trace.events, trace.seed, trace.times)
            kinds: dict[str, int] = {}
            for incident in incidents_of(rerun, policy):
                if incident.is_violation:
                    kinds[incident.kind.value] = kinds.get(incident.kind.value, 0) + 1
            out.append(CorpusResult(path.name, kinds))
        except (PrunecheckError, OSError, UnicodeDecodeError) as exc:
            text = exc.paragraph() if isinstance(exc, PrunecheckError) else str(exc)
            out.append(CorpusResult(path.name, {}, text))
    return out


# ------------------------------------------------------------------- comparing
def fisher_greater(k1: int, n1: int, k2: int, n2: int) -> float:
    """One-sided Fisher exact p-value that proportion ``k2/n2`` exceeds ``k1/n1``.

    Given the ``k1 + k2`` successes, the chance that ``n2`` draws from the
    ``n1 + n2`` trials hold ``k2`` or more of them (hypergeometric tail).

    >>> round(fisher_greater(0, 100, 10, 100), 4)
    0.0008
    >>> fisher_greater(5, 100, 5, 100) > 0.5
    True
    """
    k1, k2 = min(k1, n1), min(k2, n2)
    if n1 <= 0 or n2 <= 0:
        return 1.0
    total, successes = n1 + n2, k1 + k2
    top = min(successes, n2)
    if k2 <= max(0, successes - n1):
        return 1.0

    def log_comb(n: int, k: int) -> float:
        return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)

    base = log_comb(total, n2)
    terms = [log_comb(successes, x) + log_comb(total - successes, n2 - x) - base
             for x in range(k2, top + 1)]
    peak = max(terms)
    return min(1.0, math.exp(peak) * sum(math.exp(t - peak) for t in terms))


class Change(StrEnum):
    REGRESSION = "REGRESSION"
    IMPROVED = "improved"
    COSTLIER = "costlier"
    CHEAPER = "cheaper"
    NOT_SIGNIFICANT = "not significant"
    SAME = "same counts"


@dataclass(frozen=True, slots=True)
class ClassChange:
    """One incident class, baseline against current."""

    kind: str
    base: tuple[int, int]  # (sessions that met the class, sessions)
    current: tuple[int, int]
    p_value: float
    change: Change

    @staticmethod
    def rate(pair: tuple[int, int]) -> float:
        k, n = pair
        return 1000.0 * k / n if n else 0.0


@dataclass(frozen=True, slots=True)
class Comparison:
    """What changed, class by class and corpus trace by corpus trace."""

    classes: tuple[ClassChange, ...]
    corpus: tuple[tuple[str, str], ...]  # (trace, what changed), regressions only
    notes: tuple[str, ...] = ()
    runs: int = 0
    alpha: float = 0.01
    survival: tuple[float, float] | None = None  # log-rank (z, p): current fails sooner

    @property
    def regressed(self) -> bool:
        return bool(self.corpus) or any(c.change is Change.REGRESSION for c in self.classes)

    def table(self) -> str:
        """The table of what changed (plain text)."""
        head = (f"{'incident class':<24} {'baseline /1k sessions':>22} "
                f"{'current /1k sessions':>22} {'p-value':>9}  verdict")
        lines = [head, "-" * len(head)]
        for c in self.classes:
            lines.append(f"{c.kind.replace('_', ' '):<24} {_rate(c.base):>22} "
                         f"{_rate(c.current):>22} {_p(c.p_value):>9}  {c.change}")
        if not self.classes:
            lines.append("(no incident in either run)")
        if self.survival is not None:
            z, p = self.survival
            word = "sooner: significant" if p < self.alpha else "not significant"
            lines.append(f"time to first violation (user turns), log-rank test that the current "
                         f"runtime fails sooner: z = {z:.2f}, p = {_p(p)} — {word}")
        for trace, text in self.corpus:
            lines.append(f"corpus {trace}: REGRESSION — {text}")
        lines.extend(self.notes)
        return "\n".join(lines) + "\n"


def _rate(pair: tuple[int, int]) -> str:
    return f"{ClassChange.rate(pair):.1f} ({pair[0]}/{pair[1]})"


def _p(p: float) -> str:
    return "<1e-12" if p < 1e-12 else f"{p:.2g}"


def compare(baseline: Baseline, current: Baseline, *, alpha: float = 0.01,
            min_effect: float = 10.0, min_ratio: float = 1.25) -> Comparison:
    """Compare the runs both hold (matched by level and seed) and the corpus.

    A class *regressed* when its share of sessions grew with one-sided
    p < ``alpha`` and by at least ``min_effect`` per 1,000 sessions and
    ``min_ratio`` times (the ratio is waived when the baseline saw none).
    Cost classes (deferral, overrun, spill, re-injection) and session aborts
    are reported as costlier / cheaper and never regress.  A difference the
    test cannot tell from chance is "not significant".
    """
    mine = {r.key: r for r in current.runs if r.error is None}
    pairs = [(r, mine[r.key]) for r in baseline.runs if r.error is None and r.key in mine]
    base_sessions = [s for b, _ in pairs for s in b.sessions]
    cur_sessions = [s for _, c in pairs for s in c.sessions]
    kinds = [ANY, *(k.value for k in IncidentKind)]
    classes = []
    for kind in kinds:
        base = (sum(1 for s in base_sessions if kind in s.first), len(base_sessions))
        cur = (sum(1 for s in cur_sessions if kind in s.first), len(cur_sessions))
        if not base[0] and not cur[0]:
            continue
        up, down = fisher_greater(*base, *cur), fisher_greater(*cur, *base)
        grown = _effect(base, cur, min_effect, min_ratio)
        shrunk = _effect(cur, base, min_effect, min_ratio)
        violation = kind == ANY or IncidentKind(kind).is_violation
        if up < alpha and grown:
            change, p = (Change.REGRESSION if violation else Change.COSTLIER), up
        elif down < alpha and shrunk:
            change, p = (Change.IMPROVED if violation else Change.CHEAPER), down
        else:
            change = Change.SAME if base == cur else Change.NOT_SIGNIFICANT
            p = min(up, down)
        classes.append(ClassChange(kind, base, cur, p, change))
    survival = None
    if any(ANY in s.first for s in (*base_sessions, *cur_sessions)):
        survival = logrank_greater(observations(base_sessions, ANY),
                                   observations(cur_sessions, ANY))
    corpus, notes = _corpus_changes(baseline, current)
    if len(pairs) < baseline.suite.size():
        notes.append(f"note: {len(pairs)} of {baseline.suite.size()} suite runs compared "
                     "(the others are missing or ended by a policy error).")
    return Comparison(tuple(classes), tuple(corpus), tuple(notes), len(pairs), alpha, survival)


def _effect(a: tuple[int, int], b: tuple[int, int], min_effect: float,
            min_ratio: float) -> bool:
    ra, rb = ClassChange.rate(a), ClassChange.rate(b)
    return rb - ra >= min_effect and (ra == 0 or rb >= ra * min_ratio)


def _corpus_changes(baseline: Baseline, current: Baseline
                    ) -> tuple[list[tuple[str, str]], list[str]]:
    before = {c.path: c for c in baseline.corpus}
    changes: list[tuple[str, str]] = []
    notes: list[str] = []
    for now in current.corpus:
        old = before.get(now.path)
        if now.error is not None:
            notes.append(f"corpus {now.path}: not replayed — {now.error}")
        elif old is None:
            notes.append(f"corpus {now.path}: new since the baseline, not compared")
        elif old.error is None and not old.violations and now.violations:
            shown = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in now.violations.items())
            changes.append((now.path, f"now shows {shown}; the baseline showed none"))
    return changes, notes


Progress = Callable[[Baseline], None]


@dataclass(slots=True)
class Recorder:
    """Collects a suite's runs as they finish and hands each snapshot to
    ``save`` (a file writer), so an interrupted run keeps what finished."""

    baseline: Baseline
    save: Progress | None = None
    runs: list[SuiteRun] = field(default_factory=list)

    def add(self, run: SuiteRun) -> None:
        self.runs.append(run)
        self.baseline = replace(self.baseline, runs=tuple(self.runs))
        if self.save is not None:
            self.save(self.baseline)

    def finish(self, corpus: Sequence[CorpusResult], complete: bool) -> Baseline:
        self.baseline = replace(self.baseline, corpus=tuple(corpus), complete=complete)
        if self.save is not None:
            self.save(self.baseline)
        return self.baseline


def error_of(runs: Sequence[SuiteRun]) -> str | None:
    """The policy error that ended a suite, if any."""
    return next((r.error for r in runs if r.error), None)

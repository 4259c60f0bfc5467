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
is compared too, by a one-sided log-rank test over user turns: a
significantly sooner first violation is a regression too.  A corpus trace
that now shows violations it did not show before is a regression whatever
the tests say.

The file format is :mod:`.baseline_file`'s; the suite is :mod:`.suite`'s;
the comparison is :mod:`.compare`'s.  This module runs them.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.errors import ConfigError, PrunecheckError
from prunecheck.model.system import System, incidents_of
from prunecheck.model.trace import loads
from prunecheck.sim.api.baseline_file import (
    Baseline,
    CorpusResult,
    SuiteRun,
)
from prunecheck.sim.api.suite import Suite, class_exposure, run_scenario
from prunecheck.sim.subjects.loader import load_system
from prunecheck.sim.subjects.time_limit import DEFAULT_TIMEOUT
from prunecheck.sim.support.inputs import read_input

__all__ = ["Recorder", "corpus_paths", "error_of", "run_corpus", "run_suite"]


def run_suite(system: System[Any], config: RuntimeConfig, suite: Suite) -> Iterator[SuiteRun]:
    """Run the suite, yielding each run as it finishes; stops after a run
    that a policy error ended (its ``error`` says so)."""
    for scenario in suite.scenarios():
        result = run_scenario(system, config, scenario, suite.horizon)
        error = (
            f"run at load {scenario.level:g}, seed {scenario.seed}: {result.error}"
            if result.error
            else None
        )
        yield SuiteRun(
            scenario.level,
            scenario.seed,
            result.invocations,
            result.events,
            {k: n for k, n in result.incidents.items() if n},
            class_exposure(result.exposed),
            error,
            result.sessions,
        )
        if error:
            return


def corpus_paths(folder: str | None) -> list[Path]:
    """The traces of a corpus folder, sorted (none if ``folder`` is None)."""
    if folder is None:
        return []
    path = Path(folder)
    if not path.is_dir():
        raise ConfigError(
            f"--corpus {folder}",
            "is not a folder.",
            "give the folder of reproduction traces (e.g. tests/corpus).",
        )
    return sorted(path.glob("*.json"))


def run_corpus(
    paths: Sequence[Path], config: RuntimeConfig, *, timeout: float = DEFAULT_TIMEOUT
) -> list[CorpusResult]:
    """Replay each corpus trace with its own policy and budget under
    ``config``'s knobs (gate, checks, retry, stream loss, repair, provider).
    A trace that cannot be read or replayed is reported, never fatal."""
    out = []
    for path in paths:
        began = time.perf_counter()
        try:
            # a FIFO in the corpus is reported like any unreadable trace, never waited on
            trace = loads(read_input(path, "a trace").decode("utf-8"), str(path))
            knobs = replace(
                config, budget=trace.config.budget, hard_ceiling=trace.config.hard_ceiling
            )
            system = load_system(trace.policy, timeout)
            rerun = replace(trace, config=knobs, meta={})
            kinds = Counter(i.kind.value for i in incidents_of(rerun, system) if i.is_violation)
            took = time.perf_counter() - began
            out.append(CorpusResult(path.name, dict(kinds), seconds=took))
        except (PrunecheckError, OSError, UnicodeDecodeError) as exc:
            text = exc.paragraph() if isinstance(exc, PrunecheckError) else str(exc)
            out.append(CorpusResult(path.name, {}, text, time.perf_counter() - began))
    return out


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

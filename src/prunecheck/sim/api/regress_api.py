"""``prunecheck.baseline_policy`` and ``regress_policy``: ``baseline`` and ``regress`` from Python.

The orchestration of ``prunecheck baseline`` and ``prunecheck regress``
lives here and the command line prints what these return, as ``check`` and
``search`` do with :mod:`.check` and :mod:`.python_api`: one orchestrator,
so a regression found from Python and from the command line is the same
comparison of the same runs.  The suite, the corpus and the statistics are
:mod:`.regress`'s, :mod:`.suite`'s and :mod:`.compare`'s.

Examples
--------
>>> from prunecheck import baseline_policy, regress_policy
>>> base = baseline_policy("lowest_salience", out="baseline.json")  # doctest: +SKIP
>>> result = regress_policy("baseline.json", "my_trim.py:select")  # doctest: +SKIP
>>> result.regressed, result.status, print(result.comparison.table())  # doctest: +SKIP
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.errors import ConfigError
from prunecheck.sim.api.baseline_file import (
    Baseline,
    read_baseline,
    runtime_digest,
    write_baseline,
)
from prunecheck.sim.api.compare import Comparison, compare
from prunecheck.sim.api.regress import Recorder, corpus_paths, error_of, run_corpus, run_suite
from prunecheck.sim.api.suite import BASELINE_SEEDS, Suite
from prunecheck.sim.subjects.digest import policy_digest
from prunecheck.sim.subjects.loader import load_system
from prunecheck.sim.subjects.time_limit import DEFAULT_TIMEOUT

__all__ = ["BaselineRun", "RegressResult", "baseline_policy", "regress_policy"]


@dataclass(frozen=True, slots=True)
class BaselineRun:
    """What ``baseline_policy`` recorded: the baseline (also written to
    ``out`` after every run) and the policy error that stopped it, if any
    (then ``baseline.complete`` is false and ``regress`` refuses it)."""

    baseline: Baseline
    error: str | None

    @property
    def status(self) -> int:
        """The command line's exit status: 0, or 2 for a policy error."""
        return 2 if self.error is not None else 0


@dataclass(frozen=True, slots=True)
class RegressResult:
    """What ``regress_policy`` found.

    Attributes
    ----------
    baseline: the baseline compared against (as read).
    current: the same suite and corpus run now (also written to ``out``).
    comparison: class by class, over sessions (:class:`.compare.Comparison`).
    error: the policy error that stopped the current suite, or None (the
        runs that finished are compared all the same).
    suite_seconds: wall-clock seconds of the current suite's runs.
    """

    baseline: Baseline
    current: Baseline
    comparison: Comparison
    error: str | None
    suite_seconds: float

    @property
    def regressed(self) -> bool:
        return self.comparison.regressed

    @property
    def status(self) -> int:
        """The command line's exit status: 2 a policy error, 1 a regression, else 0."""
        return 2 if self.error is not None else 1 if self.regressed else 0


def _record(
    spec: str,
    config: RuntimeConfig,
    suite: Suite,
    corpus: str | None,
    out: Path | None,
    policy_timeout: float,
    *,
    corpus_after_error: bool,
) -> tuple[Baseline, str | None, float]:
    """Run ``suite`` and the corpus for ``spec``; every finished run goes to
    ``out`` at once (an interrupted run keeps what finished)."""
    paths = corpus_paths(corpus)
    system = load_system(spec, policy_timeout)
    save = (lambda b: write_baseline(b, out)) if out is not None else None
    recorder = Recorder(
        Baseline(
            spec,
            config,
            suite,
            corpus_dir=corpus,
            policy_digest=policy_digest(spec),
            runtime_digest=runtime_digest(config),
        ),
        save,
    )
    began = time.perf_counter()
    for item in run_suite(system, config, suite):
        recorder.add(item)
    seconds = time.perf_counter() - began
    error = error_of(recorder.runs)
    ran = error is None or corpus_after_error
    corpus_runs = run_corpus(paths, config, timeout=policy_timeout) if ran else []
    return recorder.finish(corpus_runs, complete=error is None), error, seconds


def baseline_policy(
    policy: str,
    *,
    config: RuntimeConfig | None = None,
    levels: Sequence[float] | None = None,
    seeds: Sequence[int] | None = None,
    horizon: float | None = None,
    corpus: str | Path | None = None,
    out: str | Path | None = None,
    policy_timeout: float = DEFAULT_TIMEOUT,
) -> BaselineRun:
    """Record a baseline of ``policy``: the fixed suite (``levels`` ×
    ``seeds``, default the baseline's seeds) under ``config``, and the
    reproduction traces of the folder ``corpus`` replayed.  Written to
    ``out`` (the ``prunecheck baseline`` format) after every run."""
    hours = float(horizon) if horizon is not None else None  # as the command line reads it
    suite = Suite.of(levels, seeds, hours, default_seeds=BASELINE_SEEDS)
    folder = str(corpus) if corpus is not None else None
    baseline, error, _ = _record(
        policy,
        config or RuntimeConfig(),
        suite,
        folder,
        Path(out) if out is not None else None,
        policy_timeout,
        corpus_after_error=False,
    )
    return BaselineRun(baseline, error)


def regress_policy(
    baseline: str | Path,
    policy: str | None = None,
    *,
    config: RuntimeConfig | None = None,
    corpus: str | Path | None = None,
    out: str | Path | None = None,
    alpha: float = 0.01,
    min_effect: float = 10.0,
    min_ratio: float = 1.25,
    policy_timeout: float = DEFAULT_TIMEOUT,
) -> RegressResult:
    """Run the baseline file's suite again with ``policy`` (default the
    baseline's) under ``config`` (default the baseline's runtime), replay
    its corpus (or ``corpus``), and compare class by class over sessions
    (one-sided Fisher exact test at ``alpha`` with a minimum effect of
    ``min_effect`` per 1,000 sessions and ``min_ratio``; the first
    violation's time by a log-rank test).  Raises :class:`ConfigError` for
    an incomplete baseline or one that shares no finished run with now."""
    where = str(baseline)
    base = read_baseline(where)
    if not base.complete:
        raise ConfigError(
            where,
            f"is an incomplete baseline ({len(base.runs)} of "
            f"{base.suite.size()} runs): its run stopped early.",
            "re-create it with 'prunecheck baseline' once the policy runs.",
        )
    spec = policy or base.policy
    folder = str(corpus) if corpus is not None else base.corpus_dir
    current, error, seconds = _record(
        spec,
        config or base.config,
        base.suite,
        folder,
        Path(out) if out is not None else None,
        policy_timeout,
        corpus_after_error=True,
    )
    result = compare(base, current, alpha=alpha, min_effect=min_effect, min_ratio=min_ratio)
    if result.runs == 0 and error is None:  # nothing compared is no verdict, not a pass
        raise ConfigError(
            where,
            f"shares no finished run with the current suite: 0 of {base.suite.size()} suite "
            "runs were compared (the baseline's runs are missing or ended in a policy error), "
            "so there is no verdict.",
            "re-create the baseline with 'prunecheck baseline' from the runtime you trust.",
        )
    return RegressResult(base, current, result, error, seconds)

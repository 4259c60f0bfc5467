"""The records of a check: its verdict, each scenario's result, and the
:class:`CheckResult` that ``check_policy`` returns."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from prunecheck.model.errors import TraceError
from prunecheck.model.incidents import IncidentKind
from prunecheck.model.policies import Policy
from prunecheck.model.runtime import CheckAt, RuntimeConfig
from prunecheck.model.trace import Trace, dumps
from prunecheck.sim.verdicts.suite import Scenario

__all__ = ["CheckResult", "ScenarioResult", "Verdict"]


class Verdict(StrEnum):
    SAFE = "safe"
    UNSAFE = "unsafe"
    ERROR = "error"
    #: The time limit came before a verdict: no violation in what was covered.
    OUT_OF_TIME = "out_of_time"


@dataclass(frozen=True, slots=True)
class ScenarioResult:
    """What one scenario produced: incidents per kind, and invocations that
    met each kind (``exposed``, with ``any_violation``), non-zero only."""

    scenario: Scenario
    incidents: Mapping[str, int]
    invocations: int
    events: int
    error: str | None = None
    exposed: Mapping[str, int] = field(default_factory=dict)
    capped: bool = False

    @property
    def violations(self) -> int:
        return sum(n for k, n in self.incidents.items() if IncidentKind(k).is_violation)


@dataclass(frozen=True, slots=True)
class CheckResult:
    """The verdict on one policy in one runtime.

    Attributes
    ----------
    policy: the policy's spec (or name).
    config: the runtime it was checked in.
    verdict: safe, unsafe, or error (the policy raised, hung, returned garbage).
    scenarios: the suite's runs that finished, in order.
    incidents: every incident kind seen in the suite and the reproduction,
        with counts (costs included; see :attr:`violations`).
    reproduction: the shortest failing trace found (None when safe).
    narrative: the reproduction replayed step by step (or the error).
    error: the policy error, as one paragraph, or None.
    search_examples: runs the adversarial search tried.
    placements: one result per budget-check placement checked (each with
        its own verdict and reproduction), in ``CheckAt`` order; this
        result combines them: unsafe if any is, and its reproduction is
        that of the first unsafe placement.
    timed_out: the time limit stopped the check; what it covered is in
        ``scenarios`` and ``search_examples``.
    """

    policy: str
    config: RuntimeConfig
    verdict: Verdict
    scenarios: tuple[ScenarioResult, ...]
    incidents: Mapping[str, int]
    reproduction: Trace | None
    narrative: str
    error: str | None = None
    search_examples: int = 0
    policy_object: Policy | None = field(default=None, repr=False, compare=False)
    placements: tuple[CheckResult, ...] = ()
    timed_out: bool = False

    @property
    def safe(self) -> bool:
        return self.verdict is Verdict.SAFE

    def placement(self, check_at: CheckAt | str) -> CheckResult | None:
        """The result for one placement, or None if it was not checked."""
        return next((p for p in self.placements if p.config.check_at == CheckAt(check_at)),
                    None)

    @property
    def violations(self) -> dict[str, int]:
        return {k: n for k, n in self.incidents.items() if IncidentKind(k).is_violation}

    def summary(self, *, verdict: bool = True) -> str:
        """A plain-text table of the scenarios, one row per placement with
        its verdict, and the verdict line (see :mod:`.placements`)."""
        from prunecheck.sim.verdicts.placements import summary

        return summary(self, verdict=verdict)

    def verdict_line(self, bundles: Mapping[str, Path] | None = None) -> str:
        """One line: the verdict and, when placements disagree, which
        runtime it holds for; ``bundles`` names where reproductions went."""
        from prunecheck.sim.verdicts.placements import verdict_line

        return verdict_line(self, bundles)

    def bundle(self, out_dir: str | Path, *, force: bool = False) -> Path:
        """Write the reproduction bundle (trace, narrative, …) to ``out_dir``.

        Raises
        ------
        TraceError
            if there is no reproduction (the policy was found safe).
        """
        if self.reproduction is None:
            raise TraceError(f"check of {self.policy!r}", "has no reproduction to write.",
                             "only an unsafe verdict comes with a reproduction.")
        out = Path(out_dir)
        try:
            bundles = importlib.import_module("prunecheck.sim.reproductions.bundle")
        except ImportError:  # the bundle writer of the search issue is not installed
            out.mkdir(parents=True, exist_ok=True)
            (out / "trace.json").write_text(dumps(self.reproduction), encoding="utf-8")
            (out / "narrative.md").write_text(self.narrative, encoding="utf-8")
            return out
        return Path(bundles.write_bundle(self.reproduction, out, policy=self.policy_object,
                                         force=force))

"""The fixed, seeded suite that ``check``, ``baseline`` and ``regress`` run:
one simulated run per load level × seed, each ``horizon`` simulated
seconds (:func:`~prunecheck.sim.drivers.simulator.simulate`).  Defined once
here, so a check's scenarios and a baseline's runs are the same runs.

A suite may also hold *slow-call* scenarios (``slow_levels``): one run per
slow level × seed in which batches now and then start a slow call — a whole
test run or a build, minutes long — while the user goes on writing and
budget checks fire (``Load.slow_calls``).  That is where a policy that
reads message ages meets a unit over a minute old whose call is still
running.  ``check`` runs them (``DEFAULT_SLOW_LEVELS``); a baseline does
not, unless told, so that its runs stay those of before.

>>> Suite().size(), [s.name for s in Suite((0.2,), (1, 2)).scenarios()]
(9, ['load 0.2, seed 1', 'load 0.2, seed 2'])
>>> [s.name for s in Suite((0.2,), (1,), slow_levels=(1.0,)).scenarios()]
['load 0.2, seed 1', 'load 1, seed 1, slow calls']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from prunecheck.model.config import CheckAt, RuntimeConfig
from prunecheck.model.errors import ConfigError
from prunecheck.model.system import System

if TYPE_CHECKING:
    from prunecheck.sim.drivers.simulator import RunResult

__all__ = [
    "BASELINE_SEEDS",
    "DEFAULT_HORIZON",
    "DEFAULT_LEVELS",
    "DEFAULT_MAX_EVENTS",
    "DEFAULT_SEEDS",
    "DEFAULT_SLOW_LEVELS",
    "SLOW_CALLS",
    "Scenario",
    "Suite",
    "class_exposure",
    "run_scenario",
]

#: Load levels of the fixed suite (0: one patient agent … 1: four busy ones).
DEFAULT_LEVELS: tuple[float, ...] = (0.2, 0.6, 1.0)
#: Seeds of the fixed suite.
DEFAULT_SEEDS: tuple[int, ...] = (1, 2, 3)
#: Load levels of ``check``'s slow-call scenarios (one per seed).
DEFAULT_SLOW_LEVELS: tuple[float, ...] = (1.0,)
#: ``Load.slow_calls`` of a slow-call scenario: a batch in four also starts
#: a test run or a build minutes long.
SLOW_CALLS = 0.25
#: Seeds of a baseline (and so of ``regress``): more sessions than a check
#: needs, so that a regression of about one session in ten is significant
#: (see :func:`prunecheck.sim.api.compare.detectable_rate`).
BASELINE_SEEDS: tuple[int, ...] = tuple(range(1, 9))
#: Simulated seconds per scenario.
DEFAULT_HORIZON = 300.0
#: Events one scenario may apply (all agents together) before it is capped.
DEFAULT_MAX_EVENTS = 50_000


@dataclass(frozen=True, slots=True)
class Scenario:
    """One simulated run of the suite."""

    level: float
    seed: int
    check_at: CheckAt | None = None
    #: Batches now and then start a slow call (``SLOW_CALLS``).
    slow_calls: bool = False

    @property
    def name(self) -> str:
        slow = ", slow calls" if self.slow_calls else ""
        return f"load {self.level:g}, seed {self.seed}{slow}"


@dataclass(frozen=True, slots=True)
class Suite:
    """The fixed scenario suite: one simulated run per level × seed, and
    one with slow calls per slow level × seed."""

    levels: tuple[float, ...] = DEFAULT_LEVELS
    seeds: tuple[int, ...] = DEFAULT_SEEDS
    horizon: float = DEFAULT_HORIZON
    slow_levels: tuple[float, ...] = ()

    @classmethod
    def of(
        cls,
        levels: Sequence[float] | None = None,
        seeds: Sequence[int] | None = None,
        horizon: float | None = None,
        *,
        default_seeds: Sequence[int] = DEFAULT_SEEDS,
    ) -> Suite:
        """The suite with these settings; the defaults for any not given
        (None or empty, as from a command line)."""
        return cls(
            tuple(levels) if levels else DEFAULT_LEVELS,
            tuple(seeds) if seeds else tuple(default_seeds),
            horizon or DEFAULT_HORIZON,
        )

    def scenarios(self, check_at: CheckAt | None = None) -> tuple[Scenario, ...]:
        """Its runs, in order: every seed at the first level, then the next;
        then the slow-call runs in the same order."""
        plain = tuple(
            Scenario(level, seed, check_at) for level in self.levels for seed in self.seeds
        )
        return plain + tuple(
            Scenario(level, seed, check_at, slow_calls=True)
            for level in self.slow_levels
            for seed in self.seeds
        )

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "levels": list(self.levels),
            "seeds": list(self.seeds),
            "horizon": self.horizon,
        }
        if self.slow_levels:  # written only when there are any: files of before stay as they were
            data["slow_levels"] = list(self.slow_levels)
        return data

    @classmethod
    def from_json(cls, data: object, where: str) -> Suite:
        if not isinstance(data, dict):
            raise ConfigError(f"{where}: suite", "must be a JSON object.")
        try:
            return cls(
                tuple(float(x) for x in data["levels"]),
                tuple(int(x) for x in data["seeds"]),
                float(data["horizon"]),
                tuple(float(x) for x in data.get("slow_levels", ())),
            )
        except (KeyError, TypeError, ValueError):
            raise ConfigError(
                f"{where}: suite",
                "must hold levels, seeds and horizon.",
                "re-create the file with 'prunecheck baseline'.",
            ) from None

    def size(self) -> int:
        return (len(self.levels) + len(self.slow_levels)) * len(self.seeds)


def run_scenario(
    system: System[Any],
    config: RuntimeConfig,
    scenario: Scenario,
    horizon: float,
    *,
    max_events: int | None = None,
) -> RunResult:
    """Simulate one scenario of the suite with ``system``."""
    from prunecheck.sim.drivers.simulator import simulate  # SimPy only when a suite runs
    from prunecheck.sim.drivers.workload import load_at

    slow = {"slow_calls": SLOW_CALLS} if scenario.slow_calls else {}
    return simulate(
        system,
        config,
        load_at(scenario.level, **slow),
        scenario.seed,
        horizon=horizon,
        max_events=max_events,
    )


def class_exposure(exposed: Mapping[str, int]) -> dict[str, int]:
    """Invocations exposed per incident class (non-zero; the per-rule
    ``kind:rule`` keys left out), as check and baseline report them."""
    return {k: n for k, n in exposed.items() if n and ":" not in k}

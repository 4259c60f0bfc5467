"""Load: the few named knobs that say how hard a simulated run pushes a runtime.

A :class:`Load` is plain data.  :func:`load_at` maps one scalar *load level*
(0 = a single patient agent with narrow batches, 1 = four busy agents with
wide, slow, heavily streamed batches on a tight budget) to a full set of
knobs; that scalar is the x-axis of the sweep's plots.  :class:`Workload`
turns a load and a budget into random draws (token sizes, latencies, batch
widths), always through a ``random.Random`` the caller passes in.

Examples
--------
>>> load_at(0.0).agents, load_at(1.0).agents
(1, 4)
>>> load_at(0.5, tightness=0.9).tightness
0.9
"""

from __future__ import annotations

import math
import random
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from prunecheck.model.errors import ConfigError

__all__ = [
    "GIANT_RESULT",
    "SESSION_TURNS",
    "SLOW_CALL_MEAN",
    "TINY_RESULT",
    "Load",
    "Workload",
    "load_at",
]

#: Share of tool results that are tiny (5-64 tokens).
TINY_RESULT = 0.4
#: Share of tool results that are giant (0.5-1.3 budgets): ``Load.giant_share``'s default.
GIANT_RESULT = 0.01
#: A session ends naturally after the turn that answers this many user
#: messages: ``Load.session_turns``'s default.
SESSION_TURNS = 10
#: Mean seconds of a slow call (a whole test run, a build): minutes, far
#: past the minute after which age-based policies call a unit idle.
SLOW_CALL_MEAN = 150.0
#: Knobs written to JSON only when they differ from their defaults, so
#: files and sweep rows of the usual load stay as they were before the
#: knobs existed (a row's key still holds every knob that changes a result).
_QUIET_DEFAULTS = {"session_turns": SESSION_TURNS, "giant_share": GIANT_RESULT, "slow_calls": 0.0}


@dataclass(frozen=True, slots=True)
class Load:
    """How hard a run pushes the runtime.

    Attributes
    ----------
    agents: offered concurrency: agents sharing one world of files.
    user_interval: mean seconds between a user's messages (per agent); they
        arrive on their own clock, also while a batch is in flight.
    batch_width: mean width of a parallel batch (at least 1).
    latency_tail: sigma of the lognormal tool latency (median 0.8 s): the
        heavier, the more a batch's results straggle.
    chunks: mean number of chunks a result or an assistant message streams in.
    tightness: a typical turn's tokens against the working budget (0.5: a
        turn brings about half a budget of tokens).
    background: probability that a call is a long-running background call
        (median 45 s), pending across user turns.
    edit_interval: mean seconds between writes of the editor, a process
        outside the agents that changes files.
    write_share: probability that a call writes its file.
    session_turns: user messages after which a session ends naturally (the
        turn that answers the last one completes first).
    giant_share: share of tool results that are giant (half a budget to
        more than a whole one).
    slow_calls: probability that a batch also starts a slow call — a whole
        test run or a build, minutes long (mean ``SLOW_CALL_MEAN`` s, never
        timed out) — while the user goes on writing and budget checks fire.
        0 (the default, and every level of :func:`load_at`) draws nothing
        for it, so runs without slow calls are the runs of before.

    How often a rejected invocation is retried is the runtime's
    ``max_retries`` (a :class:`~prunecheck.model.config.RuntimeConfig` knob),
    not a load knob; files written before that still carry ``retries``,
    which is read and ignored.
    """

    agents: int = 2
    user_interval: float = 20.0
    batch_width: float = 2.5
    latency_tail: float = 0.9
    chunks: float = 3.0
    tightness: float = 0.4
    background: float = 0.04
    edit_interval: float = 30.0
    write_share: float = 0.2
    session_turns: int = SESSION_TURNS
    giant_share: float = GIANT_RESULT
    slow_calls: float = 0.0

    def __post_init__(self) -> None:
        checks = (
            ("agents", self.agents >= 1, "at least 1"),
            ("user_interval", self.user_interval > 0, "positive (seconds)"),
            ("batch_width", self.batch_width >= 1, "at least 1"),
            ("latency_tail", self.latency_tail >= 0, "non-negative"),
            ("chunks", self.chunks >= 1, "at least 1"),
            ("tightness", 0 < self.tightness <= 4, "in (0, 4]"),
            ("background", 0 <= self.background <= 1, "a probability"),
            ("edit_interval", self.edit_interval > 0, "positive (seconds)"),
            ("write_share", 0 <= self.write_share <= 1, "a probability"),
            ("session_turns", self.session_turns >= 1, "at least 1"),
            (
                "giant_share",
                0 <= self.giant_share <= 1 - TINY_RESULT,
                f"a probability of at most {1 - TINY_RESULT:g} (the rest of tiny results)",
            ),
            ("slow_calls", 0 <= self.slow_calls <= 1, "a probability"),
        )
        for name, ok, rule in checks:
            if not ok:
                raise ConfigError(f"load.{name}", f"must be {rule}, got {getattr(self, name)!r}.")

    def to_json(self) -> dict[str, Any]:
        return {
            k: v
            for k, v in asdict(self).items()
            if k not in _QUIET_DEFAULTS or v != _QUIET_DEFAULTS[k]
        }

    @classmethod
    def from_json(cls, data: object, where: str = "load") -> Load:
        """Parse a load; :class:`ConfigError` naming the field if malformed."""
        if not isinstance(data, dict):
            raise ConfigError(where, "must be a JSON object of load knobs.")
        names = {f.name: f for f in fields(cls)}
        data = {k: v for k, v in data.items() if k != "retries"}  # now RuntimeConfig's
        unknown = set(data) - set(names)
        if unknown:
            raise ConfigError(
                where, f"unknown knob(s) {sorted(unknown)}.", f"knobs are {', '.join(names)}."
            )
        kwargs: dict[str, Any] = {}
        for name, value in data.items():
            integral = name in ("agents", "session_turns")
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or (integral and not isinstance(value, int))
            ):
                kind = "an integer" if integral else "a number"
                raise ConfigError(f"{where}.{name}", f"must be {kind}, got {value!r}.")
            kwargs[name] = value if integral else float(value)
        return cls(**kwargs)


def _between(low: float, high: float, level: float) -> float:
    return low + (high - low) * level


def _geometric(low: float, high: float, level: float) -> float:
    return low * math.pow(high / low, level)


def load_at(level: float, **overrides: Any) -> Load:
    """The load at ``level`` in [0, 1]; ``overrides`` replace single knobs.

    Every knob grows with the level: more agents sharing the files, users
    writing more often, wider batches with heavier latency tails, results
    streamed in more chunks, background calls, an editor changing files more
    often and turns that fill more of the budget.
    """
    if not 0.0 <= level <= 1.0:
        raise ConfigError(
            "load level",
            f"must be between 0 and 1, got {level!r}.",
            "0 is a single patient agent, 1 four busy agents.",
        )
    load = Load(
        agents=1 + int(3 * level + 1e-9),
        user_interval=round(_geometric(40.0, 8.0, level), 3),
        batch_width=round(_between(1.2, 4.0, level), 3),
        latency_tail=round(_between(0.4, 1.4, level), 3),
        chunks=round(_between(1.0, 8.0, level), 3),
        tightness=round(_between(0.2, 0.6, level), 3),
        background=round(_between(0.0, 0.08, level), 3),
        edit_interval=round(_geometric(60.0, 10.0, level), 3),
    )
    return replace(load, **overrides) if overrides else load


class Workload:
    """Random draws for one agent under ``load`` against a ``budget``.

    Token sizes scale with ``tightness × budget``, so that the same load
    means the same pressure on any budget.  Every method draws from the
    ``random.Random`` given at construction, nothing else.
    """

    __slots__ = ("_budget", "_chunk_extra", "_load", "_rng", "_turn", "system_tokens")

    def __init__(self, load: Load, budget: int, rng: random.Random) -> None:
        self._load = load
        self._rng = rng
        self._budget = budget
        self._turn = load.tightness * budget  # tokens of a typical turn
        self._chunk_extra = load.chunks - 1.0
        self.system_tokens = max(200, budget // 50)

    def _lognormal(self, mean: float, sigma: float) -> float:
        # A lognormal with the given mean: mu = ln(mean) - sigma^2 / 2.
        return self._rng.lognormvariate(math.log(mean) - sigma * sigma / 2, sigma)

    def _tokens(self, share: float, sigma: float = 0.6) -> int:
        return max(1, min(int(self._lognormal(share * self._turn, sigma)), int(2 * self._turn)))

    def user_tokens(self) -> int:
        return self._tokens(0.06)

    def answer_tokens(self) -> int:
        return self._tokens(0.10)

    def preamble_tokens(self) -> int:
        return self._tokens(0.02)

    def result_tokens(self) -> int:
        """Size of one tool result: heavy-tailed, capped at two turns; now
        and then tiny (an empty grep, a stat: ``TINY_RESULT`` of results,
        so that contexts reach 60 messages and more) or giant (a whole log
        or file, half the budget to more than all of it: ``Load.giant_share``)."""
        u = self._rng.random()
        if u < TINY_RESULT:
            return 5 + self._rng.randrange(60)
        if u < TINY_RESULT + self._load.giant_share:
            return max(1, int(self._budget * self._rng.uniform(0.5, 1.3)))
        return self._tokens(0.16, 0.9)

    def batch_tokens(self, width: int) -> int:
        """The assistant message that issues a batch: small (it only names calls)."""
        return 30 + 25 * width + self._rng.randrange(20)

    def user_gap(self) -> float:
        return self._rng.expovariate(1.0 / self._load.user_interval)

    def edit_gap(self) -> float:
        return self._rng.expovariate(1.0 / self._load.edit_interval)

    def width(self) -> int:
        """Batch width: 1 + a geometric number of extra calls (mean ``batch_width``)."""
        extra = self._load.batch_width - 1.0
        if extra <= 0:
            return 1
        return min(12, 1 + int(self._rng.expovariate(1.0 / extra)))

    def chunk_count(self) -> int:
        if self._chunk_extra <= 0:
            return 1
        return min(40, 1 + int(self._rng.expovariate(1.0 / self._chunk_extra) + 0.5))

    def chunk_gap(self) -> float:
        return self._rng.expovariate(1.0 / 0.15)

    def model_latency(self) -> float:
        return self._lognormal(1.2, 0.4)

    def tool_latency(self, background: bool) -> float:
        if background:
            return self._lognormal(45.0, 0.5)
        return self._rng.lognormvariate(math.log(0.8), self._load.latency_tail)

    def is_slow(self) -> bool:
        """Whether a batch also starts a slow call (no draw when ``slow_calls`` is 0)."""
        share = self._load.slow_calls
        return share > 0 and self._rng.random() < share

    def slow_latency(self) -> float:
        """How long a slow call runs: lognormal, mean ``SLOW_CALL_MEAN`` s
        (about 70 s to 5 minutes)."""
        return self._lognormal(SLOW_CALL_MEAN, 0.4)

    def is_background(self) -> bool:
        return self._rng.random() < self._load.background

    def is_write(self) -> bool:
        return self._rng.random() < self._load.write_share

    def chance(self, p: float) -> bool:
        return self._rng.random() < p

    def pick(self, options: tuple[str, ...]) -> str:
        return options[self._rng.randrange(len(options))]

    def split(self, tokens: int, parts: int) -> list[int]:
        """``tokens`` in ``parts`` near-equal chunks (each at least 1 when possible)."""
        base, rest = divmod(tokens, parts)
        return [base + (1 if i < rest else 0) for i in range(parts)]

"""CommitGuard: cost of one budget check vs context size, and the spill +
re-inject round trip through SQLite.

A guard tracks a context of 1k, 10k or 100k messages (user messages,
assistant text, parallel batches of 1–3 calls with their results), all
closed, over budget by about ten messages' worth.  Each timed
``guard.check()`` asks the trimmer (``unit_safe``: the oldest whole units,
read from the front), grows or shrinks the proposal to whole units and
applies it: about ten messages leave.  Between timings (untimed) as many
messages are appended again, so every check sees the same size and does
the same work.  The guard's own share is the check's time minus the
trimmer's (measured inside the same calls).

The round trip: a check that spills one closed 4-message unit to the store
(committed), then the call that names its file and gets it back, then the
store delete — on an SQLite file in WAL mode (``synchronous=FULL``, the
default, and ``NORMAL``) and on ``:memory:``.

    python benchmarks/run.py --only guard [--quick]
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from contextlib import suppress
from pathlib import Path

from prunecheck.guard import CommitGuard, HardCeilingExceeded, SpillStore
from prunecheck.guard.trimmers import PolicyTrimmer, TrimView
from prunecheck.model.actions import Proposal
from prunecheck.model.policies import builtin_policy

__all__ = ["TITLE", "run"]

TITLE = "CommitGuard: budget check cost vs context size; spill round trip"

SIZES = (1_000, 10_000, 100_000)
SEED = 20261201


class _Timed:
    """A trimmer that times itself (to separate the guard's own work)."""

    def __init__(self) -> None:
        policy = builtin_policy("unit_safe")
        assert policy is not None
        self.inner = PolicyTrimmer(policy)
        self.name = "unit_safe"
        self.spent = 0

    def propose(self, view: TrimView, need: int) -> Proposal:
        started = time.perf_counter_ns()
        try:
            return self.inner.propose(view, need)
        finally:
            self.spent += time.perf_counter_ns() - started


class _Feeder:
    """Appends a realistic stream of messages to a guard."""

    def __init__(self, guard: CommitGuard, rng: random.Random) -> None:
        self.guard, self.rng, self.n = guard, rng, 0

    def add(self) -> int:
        """One unit (a user message, a text, or a batch with its results);
        returns how many messages it added."""
        g, rng = self.guard, self.rng
        self.n += 1
        n = self.n
        roll = rng.random()
        if roll < 0.2:
            g.message(f"u{n}", "user", rng.randint(20, 200))
            return 1
        if roll < 0.4:
            g.message(f"a{n}", "assistant", rng.randint(20, 300))
            return 1
        calls = [f"c{n}.{k}" for k in range(rng.randint(1, 3))]
        g.calls(f"b{n}", calls, 30, resources=[f"f{n % 50}"])
        for c in calls:
            g.result_complete(c, rng.randint(50, 800), f"r{c}")
        return 1 + len(calls)


def _check_cost(size: int, rounds: int) -> tuple[float, float, int]:
    """Median ns of one check, of the guard's share, mean messages pruned."""
    rng = random.Random(SEED + size)
    trimmer = _Timed()
    guard = CommitGuard(trimmer, budget=10**12)
    feeder = _Feeder(guard, rng)
    guard.message("s", "system", 500)
    while len(guard.tracker.ctx) < size:
        feeder.add()
    totals, own, pruned = [], [], []
    for _ in range(rounds):
        guard.budget = guard.hard_ceiling = guard.used - 2_500  # ~10 messages over
        trimmer.spent = 0
        started = time.perf_counter_ns()
        plan = guard.check()
        took = time.perf_counter_ns() - started
        totals.append(took)
        own.append(took - trimmer.spent)
        pruned.append(len(plan.remove))
        guard.hard_ceiling = guard.budget = 10**12
        while len(guard.tracker.ctx) < size:
            feeder.add()
    return statistics.median(totals), statistics.median(own), round(statistics.mean(pruned))


def _round_trip(path: str, rounds: int, synchronous: str = "FULL") -> tuple[float, float]:
    """Median ms of a spilling check and of the re-injecting call (+ delete)."""
    store = SpillStore(path, synchronous=synchronous)
    guard = CommitGuard(builtin_policy("unit_safe"), budget=500, hard_ceiling=500, store=store)
    payload = {"role": "tool", "content": "x" * 2_000}
    spills, backs = [], []
    for i in range(rounds):
        guard.calls(f"b{i}", [f"c{i}.0", f"c{i}.1", f"c{i}.2"], 10, payload, resources=[f"file{i}"])
        for k in range(3):
            guard.result_complete(f"c{i}.{k}", 300, f"r{i}.{k}", payload)
        guard.calls(f"p{i}", [f"q{i}"], 10, resources=["elsewhere"])  # pending: defer
        started = time.perf_counter()
        with suppress(HardCeilingExceeded):
            guard.check()
        spills.append(time.perf_counter() - started)
        assert guard.spilled, "the unit was spilled"
        guard.result_complete(f"q{i}", 1)
        started = time.perf_counter()
        back = guard.calls(f"n{i}", [f"n{i}.0"], 10, resources=[f"file{i}"])
        guard.result_complete(f"n{i}.0", 1)  # the next call deletes it from the store
        backs.append(time.perf_counter() - started)
        assert back and not guard.spilled and store.count(guard.conversation) == 0
        guard.removed(list(guard.tracker.payloads))
    store.close()
    return statistics.median(spills) * 1e3, statistics.median(backs) * 1e3


def run(quick: bool) -> str:
    rounds = 30 if quick else 200
    lines = [
        "| messages in context | messages pruned per check | check (median) | "
        "guard's own share (median) |",
        "|---:|---:|---:|---:|",
    ]
    cost: dict[int, tuple[float, float]] = {}
    for size in SIZES:
        total, own, pruned = _check_cost(size, rounds)
        cost[size] = (total, own)
        lines.append(f"| {size:,} | {pruned} | {total / 1e3:.1f} µs | {own / 1e3:.1f} µs |")
    growth = cost[100_000][0] / cost[1_000][0]
    own_growth = cost[100_000][1] / cost[1_000][1]
    lines += [
        "",
        f"- Check cost at 100k ÷ at 1k: **{growth:.2f}×** (guard's own share: "
        f"{own_growth:.2f}×; target ≤ 2×) {'✅' if growth <= 2 else '❌'}",
        "",
    ]
    with tempfile.TemporaryDirectory() as folder:
        disk = _round_trip(str(Path(folder) / "spill.db"), rounds // 2)
        normal = _round_trip(str(Path(folder) / "normal.db"), rounds // 2, "NORMAL")
    memory = _round_trip(":memory:", rounds // 2)
    lines += [
        "| spill store | check that spills a 4-message unit | call that re-injects it (+ delete) |",
        "|---|---:|---:|",
        f"| SQLite file, WAL, `synchronous=FULL` (default: an fsync per commit) | "
        f"{disk[0]:.2f} ms | {disk[1]:.2f} ms |",
        f"| SQLite file, WAL, `synchronous=NORMAL` | {normal[0]:.2f} ms | {normal[1]:.2f} ms |",
        f"| SQLite `:memory:` | {memory[0]:.2f} ms | {memory[1]:.2f} ms |",
        "",
        f"Medians of {rounds} checks per size and {rounds // 2} round trips; contexts "
        f"from `random.Random({SEED} + size)`.",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(run(quick=True))

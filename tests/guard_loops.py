# ruff: noqa: B023  (each failure message is built at once, in the loop it names)
"""Runtimes that drive a guard for many turns and check it after every step.

Used by the guard's tests (``test_guard_store``, ``test_guard_listmode``,
``test_guard_soak``) in threads, in child processes and in long loops.
Each runtime keeps its own message list, applies every plan the guard
returns, and after every step checks:

* **agreement** — the runtime's messages and tokens are the guard's;
* **ownership** — every payload the guard or the store hands back carries
  this conversation's tag (guards on one store never see each other's
  units);
* **re-injection** — a new call naming a resource brings back every unit
  spilled (and not yet back) whose calls named it.

Everything random comes from a ``random.Random(seed)``.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from prunecheck.guard import (
    CommitGuard,
    HardCeilingExceeded,
    ListGuard,
    Plan,
    SpillStore,
    StoreError,
)

__all__ = ["RESOURCES", "EventLoop", "ListLoop", "LoopFailure"]

RESOURCES = tuple(f"src/file{i}.py" for i in range(8))


#: Every this many steps, every row of the conversation is read and checked.
FULL_EVERY = 50


def _all_own(store: SpillStore, conversation: str, tag: str, figures: Counter[str]) -> None:
    """Every row of ``conversation`` in the store carries ``tag``."""
    for unit in store.units(conversation):
        for m in unit.messages:
            _require(
                tag in json.dumps(m.payload), lambda: f"{tag}: its store rows hold {m.payload!r}"
            )
        figures["units_checked"] += 1


#: How often a list-mode call is retried after a store fault.
RETRIES = 200


class Faults:
    """Store faults on this thread's own connection, on a seeded schedule:
    ``full`` (``PRAGMA max_page_count`` at the current size) or ``read_only``
    (``PRAGMA query_only``), each lasting until it fails a write or for
    ``span`` steps.  (A lock is injected from outside: another connection.)"""

    def __init__(self, store: SpillStore, seed: int, rate: float = 0.02, span: int = 5) -> None:
        self.store, self.rng, self.rate, self.span = store, random.Random(seed), rate, span
        self.active: str | None = None
        self.left = 0
        self.injected: Counter[str] = Counter()

    def tick(self) -> None:
        if self.active is not None:
            self.left -= 1
            if self.left <= 0:
                self.clear()
        elif self.rng.random() < self.rate:
            kind = self.rng.choice(("full", "read_only"))
            with self.store._db() as db:
                if kind == "full":
                    pages = db.execute("PRAGMA page_count").fetchone()[0]
                    db.execute(f"PRAGMA max_page_count = {pages}")
                else:
                    db.execute("PRAGMA query_only = 1")
            self.active, self.left = kind, self.span
            self.injected[kind] += 1

    def clear(self) -> None:
        if self.active is None:
            return
        with self.store._db() as db:
            db.execute("PRAGMA max_page_count = 1073741823")
            db.execute("PRAGMA query_only = 0")
        self.active = None


class LoopFailure(AssertionError):
    """A check after a step failed (the message says which and where)."""


def _require(ok: bool, what: Callable[[], str]) -> None:
    if not ok:
        raise LoopFailure(what())


class EventLoop:
    """An event-mode runtime: feeds a :class:`CommitGuard` its events."""

    def __init__(self, guard: CommitGuard, tag: str, seed: int, *, big: int = 0) -> None:
        self.guard, self.tag, self.rng, self.big = guard, tag, random.Random(seed), big
        self.messages: dict[str, tuple[int, dict[str, Any]]] = {}
        self.unit_of: dict[str, str] = {}
        self.resources_of: dict[str, frozenset[str]] = {}
        self.spilled: dict[str, frozenset[str]] = {}
        self.pending: list[str] = []
        self.spilled_tokens: dict[str, int] = {}  # message id -> tokens when it was spilled
        self.spilled_payloads: dict[str, object] = {}
        self.faults: Faults | None = None
        self.n = 0
        self.figures: Counter[str] = Counter()

    def _payload(self, mid: str) -> dict[str, Any]:
        return {"tag": self.tag, "id": mid, "n": self.n}

    def step(self) -> None:
        """One event, then a budget check, then every check."""
        self.step_events()
        self.check()

    def step_events(self) -> None:
        """One event (no budget check)."""
        g, rng = self.guard, self.rng
        self.n += 1
        n, roll = self.n, rng.random()
        if roll < 0.3 or (not self.pending and roll < 0.6):
            mid = f"m{n}"
            calls = [f"c{n}.{k}" for k in range(rng.randint(1, 2))]
            paths = frozenset(rng.sample(RESOURCES, rng.randint(1, 2)))
            expected = {u for u, r in self.spilled.items() if r & paths}
            payload = self._payload(mid)
            try:
                restored = g.calls(mid, calls, 10, payload, resources=sorted(paths))
            except StoreError as exc:  # the event did not happen: nothing changed
                self._fault(exc)
                return
            got = {r.unit for r in restored}
            _require(
                got == expected,
                lambda: (
                    f"{self.tag}: calls naming {sorted(paths)} restored "
                    f"{sorted(got)}, expected {sorted(expected)}"
                ),
            )
            for unit in restored:
                for rid, p in zip(unit.ids, unit.payloads, strict=True):
                    _require(
                        isinstance(p, dict) and p.get("tag") == self.tag,
                        lambda: f"{self.tag}: unit {unit.unit} came back with {p!r}",
                    )
                    assert isinstance(p, dict)
                    self.messages[rid] = (self.spilled_tokens.pop(rid), p)
                del self.spilled[unit.unit]
                self.figures["reinjected"] += 1
            self.messages[mid] = (10, payload)
            self.unit_of[mid], self.resources_of[mid] = mid, paths
            self.unit_of.update((f"result:{c}", mid) for c in calls)
            self.pending.extend(calls)
        elif self.pending and roll < 0.8:
            call = self.pending.pop(rng.randrange(len(self.pending)))
            rid = f"result:{call}"
            tokens = self.big if self.big and rng.random() < 0.2 else rng.randint(20, 120)
            payload = self._payload(rid)
            g.result_complete(call, tokens, rid, payload)
            self.messages[rid] = (tokens, payload)
        else:
            mid = f"m{n}"
            tokens = rng.randint(5, 60)
            payload = self._payload(mid)
            g.message(mid, "user", tokens, payload)
            self.messages[mid] = (tokens, payload)
            self.unit_of[mid] = mid

    def check_plan(self) -> Plan:
        """The guard's budget check (a plan also when past the ceiling)."""
        try:
            return self.guard.check()
        except HardCeilingExceeded as exc:
            self.figures["overruns"] += 1
            return exc.plan

    def _fault(self, exc: StoreError) -> None:
        self.figures[f"fault_{exc.fault.value}"] += 1
        if self.faults is not None:
            self.faults.clear()
        self.verify()  # still in agreement

    def check(self) -> Plan | None:
        if self.faults is not None:
            self.faults.tick()
        try:
            plan = self.check_plan()
        except StoreError as exc:
            self._fault(exc)
            return None
        self.apply(plan)
        self.verify()
        return plan

    def apply(self, plan: Plan) -> None:
        for mid in plan.clear:
            tokens, payload = self.messages[mid]
            self.messages[mid] = (min(tokens, 8), payload)
        spilled = set(plan.spill)
        for mid in plan.remove:
            tokens, payload = self.messages.pop(mid)
            if mid in spilled:
                unit = self.unit_of.get(mid, mid)
                self.spilled[unit] = self.resources_of.get(unit, frozenset())
                self.spilled_tokens[mid] = tokens
                self.spilled_payloads[mid] = payload
                self.figures["spilled"] += 1
        self.figures["checks"] += 1

    def verify(self) -> None:
        g = self.guard
        ids = set(g.tracker.ctx.ids())
        _require(
            ids == set(self.messages),
            lambda: f"{self.tag}: guard holds {sorted(ids ^ set(self.messages))} differently",
        )
        used = sum(t for t, _ in self.messages.values())
        _require(
            used == g.used,
            lambda: f"{self.tag}: runtime holds {used} tokens, guard counts {g.used}",
        )
        _require(
            set(g.spilled) == set(self.spilled),
            lambda: f"{self.tag}: spilled {sorted(g.spilled)} vs {sorted(self.spilled)}",
        )
        if g.store is not None:
            stored = g.store.take_many(list(self.spilled), g.conversation)
            _require(len(stored) == len(self.spilled), lambda: f"{self.tag}: spilled units missing")
            for unit in stored:
                for m in unit.messages:
                    _require(
                        m.payload == self.spilled_payloads[m.id],
                        lambda: f"{self.tag}: store returned {m.payload!r} for {m.id}",
                    )
                self.figures["units_checked"] += 1
            if self.figures["steps"] % FULL_EVERY == 0:
                _all_own(g.store, g.conversation, self.tag, self.figures)
        self.figures["steps"] += 1


class ListLoop:
    """A list-mode runtime: OpenAI dicts through a :class:`ListGuard`, turn
    after turn (a user message, a batch of calls, their results one by one,
    sometimes a text reply).  Outputs of ``big`` characters come now and
    then (bigger than the budget: ``big`` / 4 tokens)."""

    def __init__(
        self, guard: ListGuard, tag: str, seed: int, *, big: int = 0, resources: int = 8
    ) -> None:
        self.guard, self.tag, self.rng, self.big = guard, tag, random.Random(seed), big
        self.paths = tuple(f"src/file{i}.py" for i in range(resources))
        self.history: list[dict[str, Any]] = [{"role": "system", "content": f"{tag} system"}]
        self.resources_of: dict[str, frozenset[str]] = {}  # unit -> paths its calls named
        self.results_of: dict[str, list[str]] = {}  # unit -> call ids answered so far
        self.spilled: dict[str, frozenset[str]] = {}
        self.faults: Faults | None = None
        self.n = 0
        self.figures: Counter[str] = Counter()

    def turn(self) -> None:
        rng = self.rng
        self.n += 1
        self._send(
            {"role": "user", "content": f"{self.tag} turn {self.n} " + "w" * rng.randint(10, 200)}
        )
        for _ in range(rng.randint(1, 2)):
            calls = [
                f"{self.tag}-c{self.n}.{k}.{rng.randrange(10**6)}" for k in range(rng.randint(1, 2))
            ]
            paths = [rng.choice(self.paths) for _ in calls]
            unit = "calls:" + ",".join(calls)
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": c,
                        "type": "function",
                        "function": {
                            "name": "read_file",
                            "arguments": json.dumps({"path": p, "tag": self.tag}),
                        },
                    }
                    for c, p in zip(calls, paths, strict=True)
                ],
            }
            named = frozenset(paths) | {self.tag}
            expected = {u for u, r in self.spilled.items() if r & frozenset(paths)}
            self.resources_of[unit] = named
            self.results_of[unit] = []
            out = self._send(message)
            at = next(i for i, m in enumerate(out) if m is message)
            before = {self._unit(m) for m in out[:at] if m.get("tool_calls")}
            plan = self.guard.last_plan
            assert plan is not None
            for u in expected:
                if u in before:
                    self.figures["reinjected"] += 1
                    continue
                # the only excuse: it did not fit, and the same check spilled it again
                _require(
                    u in plan.spill,
                    lambda: (
                        f"{self.tag}: unit {u} (spilled, naming {sorted(self.resources_of[u])}) "
                        f"did not come back before the call naming {paths}"
                    ),
                )
                self.figures["respilled"] += 1
            for c in calls:
                size = self.big if self.big and rng.random() < 0.25 else rng.randint(40, 2000)
                self.results_of[unit].append(c)
                self._send(
                    {"role": "tool", "tool_call_id": c, "content": f"{self.tag} " + "x" * size}
                )
        if rng.random() < 0.5:
            self._send(
                {"role": "assistant", "content": f"{self.tag} " + "y" * rng.randint(10, 300)}
            )

    @staticmethod
    def _unit(message: dict[str, Any]) -> str:
        return "calls:" + ",".join(c["id"] for c in message["tool_calls"])

    def _send(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        self.history.append(message)
        if self.faults is not None:
            self.faults.tick()
        for attempt in range(RETRIES):
            spilled = self.guard.spilled
            try:
                out = self.guard(self.history)
                break
            except HardCeilingExceeded as exc:
                assert exc.messages is not None
                out = list(exc.messages)
                self.figures["overruns"] += 1
                break
            except StoreError as exc:  # nothing changed: retry the same list
                self.figures[f"fault_{exc.fault.value}"] += 1
                _require(
                    self.guard.spilled == spilled, lambda: f"{self.tag}: a failed call changed"
                )
                if self.faults is not None:
                    self.faults.clear()
                time.sleep(0.002 * attempt)
        else:
            raise LoopFailure(f"{self.tag}: the store failed {RETRIES} times in a row")
        plan = self.guard.last_plan
        assert plan is not None
        for mid in plan.spill:
            if mid.startswith("calls:"):
                self.spilled[mid] = self.resources_of[mid]
                self.figures["spilled"] += 1
        self.history = out
        present = {self._unit(m) for m in out if m.get("tool_calls")}
        for unit in present:
            self.spilled.pop(unit, None)
        self.verify(out)
        return out

    def verify(self, out: list[dict[str, Any]]) -> None:
        seen_calls: set[str] = set()
        answered: set[str] = set()
        for m in out:
            _require(
                isinstance(m, dict) and self.tag in json.dumps(m),
                lambda: f"{self.tag}: foreign message {m!r}",
            )
            if m.get("tool_calls"):
                seen_calls.update(c["id"] for c in m["tool_calls"])
            if m.get("role") == "tool":
                _require(
                    m["tool_call_id"] in seen_calls,
                    lambda: f"{self.tag}: orphaned result {m['tool_call_id']}",
                )
                answered.add(m["tool_call_id"])
        for m in out:
            if m.get("tool_calls"):
                unit = self._unit(m)
                for c in self.results_of.get(unit, []):
                    _require(
                        c in answered,
                        lambda: f"{self.tag}: unit {unit} kept without its result {c}",
                    )
        g = self.guard
        _require(
            set(g.spilled) >= set(self.spilled), lambda: f"{self.tag}: guard forgot spilled units"
        )
        if g.store is not None:
            stored = g.store.take_many(list(self.spilled), g.conversation)
            _require(
                {u.unit for u in stored} == set(self.spilled),
                lambda: f"{self.tag}: a spilled unit is missing from the store",
            )
            for back in stored:
                for msg in back.messages:
                    _require(
                        self.tag in json.dumps(msg.payload), lambda: f"{self.tag}: row {msg!r}"
                    )
                self.figures["units_checked"] += 1
            if self.figures["steps"] % FULL_EVERY == 0:
                _all_own(g.store, g.conversation, self.tag, self.figures)
        self.figures["steps"] += 1


def keep_recent(
    messages: list[dict[str, Any]], max_tokens: int, token_counter: Callable[[object], int]
) -> list[dict[str, Any]]:
    """A trimmer with no tool awareness (as ``trim_messages(strategy="last")``):
    the system prompt and the newest messages that fit in ``max_tokens``."""
    kept: list[dict[str, Any]] = []
    total = token_counter(messages[0]) if messages else 0
    for m in reversed(messages[1:]):
        total += token_counter(m)
        if total > max_tokens:
            break
        kept.append(m)
    return messages[:1] + kept[::-1]


def main(argv: list[str]) -> int:
    """``python guard_loops.py event|list DB TAG SEED STEPS [FAULT_RATE]``: run
    one loop on the store file ``DB`` as conversation ``TAG`` (with store
    faults at ``FAULT_RATE`` per step); print its figures as JSON.  Exit 1
    (with the failed check on stderr) if a check fails."""
    import sys

    from prunecheck.model.policies import builtin_policy

    kind, db, tag, seed, steps = argv[0], argv[1], argv[2], int(argv[3]), int(argv[4])
    rate = float(argv[5]) if len(argv) > 5 else 0.0
    store = SpillStore(db, synchronous="NORMAL", timeout=0.05)
    faults = Faults(store, seed + 1, rate) if rate else None
    figures: Counter[str]
    try:
        if kind == "event":
            policy = builtin_policy("unit_safe")
            guard = CommitGuard(policy, budget=400, hard_ceiling=500, store=store, conversation=tag)
            loop = EventLoop(guard, tag, seed, big=450)
            loop.faults = faults
            print("ready", flush=True)
            for _ in range(steps):
                loop.step()
            figures = loop.figures
        else:
            lg = ListGuard(
                keep_recent,
                format="openai",
                budget=1000,
                hard_ceiling=2000,
                store=store,
                conversation=tag,
            )
            turns = ListLoop(lg, tag, seed, big=5000, resources=16)
            turns.faults = faults
            print("ready", flush=True)
            for _ in range(steps):
                turns.turn()
            figures = turns.figures
    except LoopFailure as exc:
        print(str(exc), file=sys.stderr)
        return 1
    if faults is not None:
        figures.update({f"injected_{k}": v for k, v in faults.injected.items()})
    print(json.dumps(dict(figures)), flush=True)
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))

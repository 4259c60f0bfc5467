"""The child process of ``test_guard_kill``: a runtime that keeps its
context in an append-only journal and spills through CommitGuard into
SQLite, forever, until it is killed.

Journal discipline (the runtime's side of the contract): a message is
journaled before the guard hears of it; a removal is journaled only after
``check()`` returned (the guard has committed what it spilled); units the
guard re-injects are journaled back before the guard's next call.

``--broken`` simulates a guard that commits spilled units *after* the
runtime removed them (the bug the test must catch).
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
from collections.abc import Iterable

from prunecheck.guard import CommitGuard, HardCeilingExceeded, SpillStore
from prunecheck.guard.store import SpilledUnit

RESOURCES = ("a.txt", "b.txt", "c.txt", "d.txt")


class _LateStore(SpillStore):
    """The broken store of ``--broken``: ``put`` only queues a unit; it is
    committed by :meth:`commit_late`, after the runtime removed it."""

    def __init__(self, path: str, *, session: str) -> None:
        super().__init__(path, session=session)
        self.late: list[SpilledUnit] = []

    def put_many(
        self,
        units: Iterable[SpilledUnit],
        conversation: str | None = None,
        *,
        delete: Iterable[str] = (),
    ) -> None:
        self.late.extend(units)
        super().put_many((), conversation, delete=delete)

    def commit_late(self) -> None:
        super().put_many(self.late)
        self.late.clear()


def main() -> None:
    db, journal, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
    broken = "--broken" in sys.argv
    store = _LateStore(db, session="kill") if broken else SpillStore(db, session="kill")
    guard = CommitGuard(lambda view, need: [], budget=400, hard_ceiling=500, store=store)
    fd = os.open(journal, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    rng = random.Random(seed)

    def log(record: dict[str, object]) -> None:
        os.write(fd, (json.dumps(record) + "\n").encode())

    def check() -> None:
        try:
            plan = guard.check()
        except HardCeilingExceeded as exc:
            plan = exc.plan
        if plan.remove:
            log({"op": "remove", "ids": list(plan.remove), "spill": list(plan.spill)})
        if isinstance(store, _LateStore) and store.late:
            # the window of the bug, held open long enough for the test to
            # kill the child inside it even when the machine is loaded
            time.sleep(0.05)
            store.commit_late()

    pending: list[str] = []
    n = 0
    print("ready", flush=True)
    while True:
        n += 1
        roll = rng.random()
        if roll < 0.3 or (not pending and roll < 0.6):
            calls = [f"c{n}.{k}" for k in range(rng.randint(1, 2))]
            paths = rng.sample(RESOURCES, 1)
            payload = {"role": "assistant", "calls": calls, "n": n}
            restored = guard.calls(f"m{n}", calls, 10, payload, resources=paths)
            for unit in restored:  # back in the context before the guard's next call
                log(
                    {
                        "op": "restore",
                        "ids": list(unit.ids),
                        "payloads": [json.dumps(p) for p in unit.payloads],
                    }
                )
            log({"op": "add", "id": f"m{n}", "payload": json.dumps(payload)})
            pending.extend(calls)
        elif pending and roll < 0.8:
            call = pending.pop(rng.randrange(len(pending)))
            payload = {"role": "tool", "call": call, "text": "x" * rng.randint(1, 50)}
            log({"op": "add", "id": f"result:{call}", "payload": json.dumps(payload)})
            guard.result_complete(call, rng.randint(20, 120), f"result:{call}", payload)
        else:
            payload = {"role": "user", "n": n}
            log({"op": "add", "id": f"m{n}", "payload": json.dumps(payload)})
            guard.message(f"m{n}", "user", rng.randint(5, 60), payload)
        check()


if __name__ == "__main__":
    main()

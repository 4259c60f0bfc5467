"""A large, valid trace from a seed: what the replay benchmark (and the
slow replay test) run, so that no large file is committed.

Each turn is a user message, an invocation, sometimes streamed assistant
text, a parallel batch of one to four calls (reads and, now and then, a
write) whose results stream in one to three chunks, interleaved across the
batch; sometimes an explicit budget check or an outside write between the
chunks, a tool failure instead of a result; then an invocation and the
assistant's answer.  Now and then a new session starts.  Sizes are drawn so
that the context keeps crossing its budget: the policy prunes all along.

The file has the layout prunecheck writes (:func:`prunecheck.model.trace.dumps`:
the header on the first lines, one event a line), or with ``layout="compact"``
a single line, as other tools write JSON.  Same seed, same bytes.

    python benchmarks/gen_trace.py OUT.json --events 700000 --seed 0 --policy recency
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Iterator
from pathlib import Path

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.events import (
    AssistantChunk,
    BudgetCheck,
    CallSpec,
    Effect,
    Event,
    ExternalWrite,
    FailureReason,
    Invoke,
    IssueBatch,
    NewSession,
    ResultChunk,
    SystemPrompt,
    ToolFailure,
    UserMessage,
    event_to_json,
)
from prunecheck.model.trace import Trace, dumps

__all__ = ["CONFIG", "events", "main", "write_trace"]

#: The runtime the generated traces run under: a budget the turns overflow.
CONFIG = RuntimeConfig(budget=6000, hard_ceiling=9000)

_FILES = (*(f"src/mod{k}.py" for k in range(40)), "README.md", "app.log", "tests")
_TOOLS = ("read_file", "grep", "stat", "list_dir")
_ASKS = (
    "why does {f} fail on CI since the last merge?",
    "read {f} and tell me what changed",
    "fix the flaky test around {f}",
    "summarise the errors in {f}",
)


def _turn(rng: random.Random, next_call: int) -> Iterator[Event]:
    """One turn's events; calls are numbered from ``next_call``."""
    where = rng.choice(_FILES)
    yield UserMessage(rng.randint(40, 400), rng.choice(_ASKS).format(f=where))
    yield Invoke()
    if rng.random() < 0.3:  # the model thinks aloud, streamed
        parts = rng.randint(1, 3)
        for k in range(parts):
            yield AssistantChunk(rng.randint(20, 200), last=k == parts - 1, text="looking")
    width = rng.choice((1, 1, 2, 2, 3, 4))
    calls = []
    for _ in range(width):
        write = rng.random() < 0.08
        calls.append(
            CallSpec(
                "write_file" if write else rng.choice(_TOOLS),
                rng.choice(_FILES),
                Effect.WRITE if write else Effect.READ,
            )
        )
    yield IssueBatch(tuple(calls), rng.randint(20, 90))
    # Each call's result: one to three chunks, or a failure; interleaved.
    plans: list[list[Event]] = []
    for k in range(width):
        cid = f"c{next_call + k}"
        if rng.random() < 0.04:
            reason = FailureReason.TIMEOUT if rng.random() < 0.5 else FailureReason.ERROR
            plans.append([ToolFailure(cid, reason, rng.randint(10, 40))])
            continue
        chunks = rng.choice((1, 1, 2, 3))
        plans.append(
            [ResultChunk(cid, rng.randint(40, 700), last=j == chunks - 1) for j in range(chunks)]
        )
    while plans:
        plan = rng.choice(plans)
        yield plan.pop(0)
        if not plan:
            plans.remove(plan)
        elif rng.random() < 0.05:
            yield BudgetCheck()
        elif rng.random() < 0.02:
            yield ExternalWrite(rng.choice(_FILES))
    yield Invoke()
    parts = rng.choice((1, 1, 2))
    for k in range(parts):
        yield AssistantChunk(rng.randint(30, 300), last=k == parts - 1, text=f"about {where}")


def events(count: int, seed: int = 0) -> Iterator[Event]:
    """``count`` events of a valid trace, drawn from ``seed``."""
    rng = random.Random(seed)
    made, next_call = 0, 1

    def opening() -> Iterator[Event]:
        yield SystemPrompt(rng.randint(300, 900), "You are a coding agent.")

    stream = opening()
    while made < count:
        for event in stream:
            yield event
            made += 1
            if isinstance(event, IssueBatch):
                next_call += len(event.calls)
            if made == count:
                return
        if rng.random() < 0.0005:
            stream = iter((NewSession(), *opening()))
        else:
            stream = _turn(rng, next_call)


def write_trace(
    path: Path,
    count: int,
    *,
    seed: int = 0,
    policy: str = "recency",
    config: RuntimeConfig = CONFIG,
    layout: str = "lines",
) -> int:
    """Write a trace of ``count`` events drawn from ``seed`` to ``path``;
    return its size in bytes.  ``layout``: ``"lines"`` (as prunecheck writes
    traces) or ``"compact"`` (one line)."""
    empty = Trace(policy, config, (), seed=seed, meta={"generated_by": "benchmarks/gen_trace.py"})
    with path.open("w", encoding="utf-8") as out:
        if layout == "compact":
            head = json.dumps(json.loads(dumps(empty)), separators=(",", ":"))
            out.write(head[: -len("[]}")] + "[")
            for i, event in enumerate(events(count, seed)):
                out.write(("," if i else "") + json.dumps(event_to_json(event)))
            out.write("]}\n")
        elif layout == "lines":
            head, tail = dumps(empty).split('  "events": [\n')
            out.write(head + '  "events": [\n')
            first = True
            for event in events(count, seed):
                out.write(("" if first else ",\n") + "    " + json.dumps(event_to_json(event)))
                first = False
            out.write("\n" + tail)
        else:
            raise ValueError(f"layout must be 'lines' or 'compact', got {layout!r}")
    return path.stat().st_size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--events", type=int, default=700_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--policy", default="recency")
    parser.add_argument("--layout", choices=("lines", "compact"), default="lines")
    args = parser.parse_args(argv)
    size = write_trace(
        args.out, args.events, seed=args.seed, policy=args.policy, layout=args.layout
    )
    print(f"{args.out}: {args.events:,} events, {size / 2**20:.1f} MiB", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

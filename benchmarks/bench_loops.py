"""Schedules per second of real agent loops, per framework (issue 21).

For each framework whose example agent loads (``examples/loops/``; the
in-repo fake of ``tests/loops_fake.py`` as the harness's own baseline), a
search of the plain-parallel-batches class with a fixed seed: schedules run
(shrinking included), wall time, schedules per second, steps per second.
The acceptance figure: one framework's 200-schedule search, against 2
minutes.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from prunecheck.model.errors import PrunecheckError
from prunecheck.sim.loops.scenarios import SCENARIOS, ScenarioClass
from prunecheck.sim.loops.search import search
from prunecheck.sim.loops.target import load_target

TITLE = "Agent loops: schedules per second per framework"

ROOT = Path(__file__).resolve().parent.parent
AGENTS = (
    ("fake (harness baseline)", "loop:tests/loops_fake.py:careful"),
    ("pydantic-ai", "loop:examples/loops/pydantic_ai_turns.py:agent"),
    ("openai-agents", "loop:examples/loops/openai_agents_turns.py:app"),
    ("langgraph", "loop:examples/loops/langgraph_guarded.py:agent"),
    ("autogen", "loop:examples/loops/autogen_guarded.py:agent"),
)


def run(quick: bool) -> str:
    sys.path.insert(0, str(ROOT / "tests"))
    examples = 20 if quick else 200
    rows = ["| framework | agent | schedules | steps | seconds | schedules/s | steps/s |",
            "|---|---|---:|---:|---:|---:|---:|"]  # fmt: skip
    for framework, spec in AGENTS:
        if not (ROOT / spec.split(":")[1]).is_file():
            rows.append(f"| {framework} | `{spec}` | not in this tree | | | | |")
            continue
        try:
            target = load_target(spec)
        except PrunecheckError as exc:
            rows.append(f"| {framework} | `{spec}` | {exc.rule} | | | | |")
            continue
        started = time.perf_counter()
        result = search(target.adapter, target.target, SCENARIOS[ScenarioClass.PARALLEL],
                        seed=1, max_examples=examples)  # fmt: skip
        took = time.perf_counter() - started
        rate = f"{result.schedules / took:.1f} | {result.steps / took:.0f}"
        rows.append(f"| {framework} | `{spec}` | {result.schedules} | {result.steps} | "
                    f"{took:.1f} | {rate} |")  # fmt: skip
    return (
        f"A search of the plain-parallel-batches class, seed 1, {examples} generated schedules "
        "each (shrinking on top when one fails).\n\n" + "\n".join(rows)
    )

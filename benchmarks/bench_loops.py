"""Schedules per second of real agent loops, per framework (issue 21).

For each framework whose example agent loads (``examples/loops/``; the
in-repo fake of ``tests/loops_fake.py`` as the harness's own baseline), a
search of the plain-parallel-batches class with a fixed seed: schedules run
(shrinking included), wall time, schedules per second, steps per second.
The acceptance figure (issue 21): a 200-schedule search of one framework
within 2 minutes on 2 cores; every framework's search is held to it.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from prunecheck.model.errors import PrunecheckError
from prunecheck.sim.api.loop_verdict import search_scenario
from prunecheck.sim.subjects.loops.scenarios import SCENARIOS, ScenarioClass
from prunecheck.sim.subjects.loops.target import load_target

TITLE = "Agent loops: schedules per second per framework"

#: Wall seconds a 200-schedule search of one framework may take (issue 21).
TARGET_SECONDS = 120.0

ROOT = Path(__file__).resolve().parent.parent
AGENTS = (
    ("fake (harness baseline)", "loop:tests/loops_fake.py:careful"),
    ("pydantic-ai", "loop:examples/loops/pydantic_ai_turns.py:agent"),
    ("openai-agents", "loop:examples/loops/openai_agents_turns.py:app"),
    ("langgraph", "loop:examples/loops/langgraph_guarded.py:agent"),
    ("autogen", "loop:examples/loops/autogen_guarded.py:agent"),
    ("strands", "loop:examples/loops/strands_sliding.py:agent"),
    ("google-adk", "loop:examples/loops/adk_context_filter.py:app"),
    ("agent-framework", "loop:examples/loops/maf_compaction.py:keep_last"),
    ("llama-index", "loop:examples/loops/llamaindex_window.py:agent"),
)
FRAMEWORKS = tuple(framework for framework, _ in AGENTS[1:])


def run(quick: bool) -> str:
    sys.path.insert(0, str(ROOT / "tests"))
    examples = 20 if quick else 200
    rows = ["| framework | agent | schedules | steps | seconds | schedules/s | steps/s "
            f"| {examples} schedules within {TARGET_SECONDS:.0f} s |",
            "|---|---|---:|---:|---:|---:|---:|---|"]  # fmt: skip
    within: list[str] = []
    for framework, spec in AGENTS:
        if not (ROOT / spec.split(":")[1]).is_file():
            rows.append(f"| {framework} | `{spec}` | not in this tree | | | | | |")
            continue
        try:
            target = load_target(spec)
        except PrunecheckError as exc:
            rows.append(f"| {framework} | `{spec}` | {exc.rule} | | | | | |")
            continue
        started = time.perf_counter()
        result = search_scenario(target, SCENARIOS[ScenarioClass.PARALLEL], seed=1,
                                 max_examples=examples)  # fmt: skip
        took = time.perf_counter() - started
        rate = f"{result.schedules / took:.1f} | {result.steps / took:.0f}"
        met = "yes" if took <= TARGET_SECONDS else "**no**"
        if framework in FRAMEWORKS and took <= TARGET_SECONDS:
            within.append(f"{framework} ({took:.0f} s)")
        rows.append(f"| {framework} | `{spec}` | {result.schedules} | {result.steps} | "
                    f"{took:.1f} | {rate} | {met} |")  # fmt: skip
    verdict = (
        f"Target: a {examples}-schedule search of one framework within {TARGET_SECONDS:.0f} s "
        f"on 2 cores; met by {len(within)} of {len(FRAMEWORKS)} frameworks"
        + (f": {', '.join(within)}." if within else ".")
    )
    return (
        f"A search of the plain-parallel-batches class, seed 1, {examples} generated schedules "
        "each (shrinking on top when one fails).\n\n" + "\n".join(rows) + "\n\n" + verdict
    )

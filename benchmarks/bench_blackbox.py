"""Black-box agents (``loop:process:``) against in-process loops: schedules per second.

One run, side by side: a search of the plain-parallel-batches class (seed 1,
the same number of generated schedules each) of agents that trim safely (so
that no shrinking adds runs): the loop harness's in-process fake and
pydantic-ai's example as the in-process figures; as black-box agents run as
subprocesses, the standard-library test agent (one process per message, and
one process reading lines), the raw ``openai`` client's example (which
imports ``openai``, about 1 s of CPU, in every process) and the two
TypeScript agents, on the Vercel AI SDK and on ``@openai/agents`` (when their
``node_modules`` are installed: ``make node-deps``).  Wall
seconds and CPU seconds (this process and the agents' processes it reaped,
``resource.getrusage``) for each; the ratio is of schedules per wall second
to the in-process fake's.
"""

from __future__ import annotations

import resource
import sys
import time
from pathlib import Path

from prunecheck.model.errors import PrunecheckError
from prunecheck.sim.api.loop_verdict import search_scenario
from prunecheck.sim.subjects.loops.scenarios import SCENARIOS, ScenarioClass
from prunecheck.sim.subjects.loops.target import load_target

TITLE = "Black-box agents: schedules per second next to in-process loops"

ROOT = Path(__file__).resolve().parent.parent
AGENTS = (
    ("in process", "fake (harness baseline)", "loop:tests/loops_fake.py:careful"),
    ("in process", "pydantic-ai", "loop:examples/loops/pydantic_ai_turns.py:agent"),
    ("black-box", "stdlib agent, a process per message",
     "loop:process:tests/blackbox_agents/argv_safe.toml"),
    ("black-box", "stdlib agent, one process, stdin",
     "loop:process:tests/blackbox_agents/repl_safe.toml"),
    ("black-box", "raw openai client (Python)",
     "loop:process:examples/blackbox/py_openai/agent_safe.toml"),
    ("black-box", "Vercel AI SDK (TypeScript)",
     "loop:process:examples/blackbox/ts-vercel/agent_safe.toml"),
    ("black-box", "OpenAI Agents SDK (TypeScript)",
     "loop:process:examples/blackbox/ts-openai-agents/agent_safe.toml"),
)  # fmt: skip


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _missing(spec: str) -> str:
    where = spec.removeprefix("loop:").removeprefix("process:").split(":")[0]
    if not (ROOT / where).is_file():
        return "not in this tree"
    if "/ts-" in spec and not (ROOT / where).parent.joinpath("node_modules").is_dir():
        return "node_modules not installed (make node-deps)"
    return ""


def run(quick: bool) -> str:
    sys.path.insert(0, str(ROOT / "tests"))
    examples = 4 if quick else 24
    rows = [
        "| mode | agent | schedules | steps | wall s | CPU s | schedules/s | CPU s per schedule "
        "| schedules/s vs in-process fake |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    base: float | None = None
    for mode, name, spec in AGENTS:
        missing = _missing(spec)
        if missing:
            rows.append(f"| {mode} | {name} | {missing} | | | | | | |")
            continue
        try:
            target = load_target(spec)
        except PrunecheckError as exc:
            rows.append(f"| {mode} | {name} | {exc.rule} | | | | | | |")
            continue
        started, cpu = time.perf_counter(), _cpu()
        try:
            result = search_scenario(target, SCENARIOS[ScenarioClass.PARALLEL], seed=1,
                                     max_examples=examples)  # fmt: skip
        except Exception as exc:  # a subprocess that met one schedule in two states
            rows.append(f"| {mode} | {name} | the search stopped: {type(exc).__name__} "
                        f"after {time.perf_counter() - started:.0f} s | | | | | | |")  # fmt: skip
            continue
        wall, spent = time.perf_counter() - started, _cpu() - cpu
        rate = result.schedules / wall
        base = rate if base is None else base
        rows.append(f"| {mode} | {name} | {result.schedules} | {result.steps} | {wall:.1f} | "
                    f"{spent:.1f} | {rate:.2f} | {spent / max(1, result.schedules):.2f} | "
                    f"{rate / base:.3f}× |")  # fmt: skip
    return (
        f"A search of the plain-parallel-batches class, seed 1, {examples} generated schedules "
        "each, of agents that trim safely; CPU includes the agents' own processes.\n\n"
        + "\n".join(rows)
    )

"""``check`` and ``search`` of a ``loop:`` spec: a real agent loop under test.

Shared by the two commands (a command module imports no other).  A loop spec
(:mod:`prunecheck.sim.loops.target`) names the user's own agent; prunecheck
drives the framework's own loop with a scripted model and fake tools and
judges every request against the ledger (:mod:`prunecheck.sim.loops`).  Of
the commands' options, ``--seed``, ``--max-examples``, ``--out``,
``--force`` and ``--quiet`` apply (and ``--scenario`` for ``search``); the
model runtime's knobs (``--gate``, ``--check-at`` …) do not: the loop is its
own runtime.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from prunecheck.model.errors import ConfigError
from prunecheck.sim.loops.bundle import write_bundle
from prunecheck.sim.loops.scenarios import SCENARIOS, ScenarioClass
from prunecheck.sim.loops.search import search
from prunecheck.sim.loops.story import narrative, retell
from prunecheck.sim.loops.target import load_target
from prunecheck.sim.loops.verdict import CellVerdict, check_loop, not_applicable_reason

__all__ = ["LOOP_HELP", "check_loop_command", "search_loop_command"]

#: What ``--help`` of check and search says of loop specs.
LOOP_HELP = """\
real agent loops (issue 21):
  prunecheck check loop:examples/loops/pydantic_ai_turns.py:agent
  prunecheck check loop:langgraph:my_app/agent.py:build --out repro/
  prunecheck search loop:my_app/agent.py:agent --scenario cancel

loop:FILE.py:ATTR (or loop:module:ATTR, or loop:FRAMEWORK:FILE.py:ATTR) is your
agent, or a factory of one, of pydantic-ai, LangChain v1 create_agent (langgraph),
the OpenAI Agents SDK (openai-agents) or AutoGen AgentChat (autogen).  Its model
is replaced by a scripted double, its tools by fakes of the same names and
schemas; its middleware, history processors, trimming, sessions and checkpointers
stay as configured.  The harness owns every await point (model replies, tool
completions in any order, failures, timeouts, the clock, cancel, crash, resume,
approvals) and judges every request against what really ran.  check searches each
scenario class the agent supports (--max-examples runs in all) and prints the
scenario table; search searches one class (--scenario).  Only --seed,
--max-examples, --out, --force and --quiet apply to a loop spec.
"""


def _scenario(name: str | None) -> ScenarioClass:
    if name is None:
        return ScenarioClass.PARALLEL
    try:
        return ScenarioClass(name)
    except ValueError:
        raise ConfigError(
            f"--scenario {name!r}",
            "is not a scenario class.",
            f"use one of: {', '.join(s.value for s in ScenarioClass)}.",
        ) from None


def check_loop_command(args: argparse.Namespace) -> int:
    """``prunecheck check loop:…``: the scenario table, the verdict, the reproductions."""
    target = load_target(str(args.policy))
    result = check_loop(target, seed=int(args.seed), max_examples=int(args.max_examples))
    out = getattr(args, "out", None)
    written: dict[str, Path] = {}
    if out:
        for i, cell in enumerate(result.unsafe):
            assert cell.found is not None
            folder = Path(out) / cell.scenario.name.value if i else Path(out)
            written[cell.scenario.title] = write_bundle(
                target, cell.found, folder, seed=result.seed, scenario=cell.scenario.name.value,
                force=bool(args.force) or bool(i),
            )  # fmt: skip
    if not args.quiet:
        sys.stdout.write(f"{target.spec}: {target.framework} agent, seed {result.seed}\n\n")
        sys.stdout.write(result.table() + "\n")
    print(result.verdict_line())
    if not args.quiet:
        for cell in result.unsafe:
            assert cell.found is not None
            story = retell(target.adapter, target.target, cell.found.steps)
            sys.stdout.write(
                f"\nminimal reproduction ({cell.scenario.title}, {len(story.steps)} steps):\n"
                + narrative(story)
            )
    for title, folder in written.items():
        print(f"reproduction bundle ({title}) written to {folder}")
    return 1 if result.verdict is CellVerdict.UNSAFE else 0


def search_loop_command(args: argparse.Namespace) -> int:
    """``prunecheck search loop:…``: one scenario class searched, the failure shrunk."""
    target = load_target(str(args.policy))
    scenario = SCENARIOS[_scenario(getattr(args, "scenario", None))]
    caps = target.adapter.capabilities(target.target)
    if not scenario.applies(caps):
        assert scenario.needs is not None
        raise ConfigError(
            f"--scenario {scenario.name.value}",
            f"does not apply to {target.reference}: {not_applicable_reason(scenario.needs)}.",
            "prunecheck check prints which scenario classes apply.",
        )
    result = search(target.adapter, target.target, scenario, seed=int(args.seed),
                    max_examples=int(args.max_examples))  # fmt: skip
    print(
        f"{target.spec} ({target.framework}), scenario class {scenario.title}: "
        f"{result.examples} schedules generated, {result.schedules} run with shrinking, "
        f"{result.steps} steps"
    )
    if result.found is None:
        print(f"no schedule broke it (seed {args.seed}).")
        return 0
    story = retell(target.adapter, target.target, result.found.steps)
    kinds = ", ".join(sorted(result.found.kinds))
    print(f"found: {kinds} — shrunk from {result.first_length} to {len(story.steps)} steps")
    if not getattr(args, "quiet", False):
        sys.stdout.write(narrative(story))
    out = getattr(args, "out", None)
    if out:
        force = bool(getattr(args, "force", False))
        folder = write_bundle(target, result.found, Path(out), seed=int(args.seed),
                              scenario=scenario.name.value, force=force)  # fmt: skip
        print(f"reproduction bundle written to {folder}")
    return 1

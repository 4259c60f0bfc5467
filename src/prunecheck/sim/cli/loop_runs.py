"""``check`` and ``search`` of a ``loop:`` spec: a real agent loop under test.

Shared by the two commands (a command module imports no other).  A loop spec
(:mod:`prunecheck.sim.subjects.loops.target`) names the user's own agent; prunecheck
drives the framework's own loop with a scripted model and fake tools and
judges every request against the ledger (:mod:`prunecheck.sim.subjects.loops`).
Every option either changes what runs for a loop or is refused for it
(exit 2): :mod:`.loop_options` holds the table; the model runtime's knobs
(``--gate``, ``--check-at`` …) are refused: the loop is its own runtime.
``--json`` and ``--junit`` carry a placement per scenario class
(:mod:`prunecheck.sim.api.loop_documents`).  The agent is loaded and run offline and in the cage
(:mod:`prunecheck.sim.subjects.loops.offline`, :mod:`prunecheck.sim.subjects.loops.confine`):
the output says so in one line (``details.offline`` in ``--json``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from prunecheck.model.errors import ConfigError
from prunecheck.model.provider import Provider
from prunecheck.sim.api.loop_api import check_loop, search_loop
from prunecheck.sim.api.loop_owner import every_kind
from prunecheck.sim.api.loop_verdict import (
    CLASS_EXAMPLES,
    CellVerdict,
    LoopCheck,
    cell_of,
    not_applicable_reason,
)
from prunecheck.sim.api.providers import (
    ProviderJudgment,
    judge_runs,
    loop_requests,
    parse_providers,
)
from prunecheck.sim.cli.failure_options import failure_database, report_problems
from prunecheck.sim.cli.json_output import record
from prunecheck.sim.cli.limits import EXIT_OUT_OF_TIME, vacuous_status
from prunecheck.sim.cli.loop_options import (
    SEARCH_REFUSED,
    check_scenarios,
    given_options,
    loop_shape,
    refuse_for_loop,
)
from prunecheck.sim.evidence.loop_bundle import write_bundle
from prunecheck.sim.evidence.loop_narrative import narrative
from prunecheck.sim.subjects.loops.confine import confined
from prunecheck.sim.subjects.loops.offline import Offline, offline
from prunecheck.sim.subjects.loops.scenarios import SCENARIOS, ScenarioClass
from prunecheck.sim.subjects.loops.story import Story, retell
from prunecheck.sim.subjects.loops.target import load_target
from prunecheck.sim.support.progress import progress_for

__all__ = ["LOOP_HELP", "MAX_STEPS", "check_loop_command", "search_loop_command"]

#: Steps of one schedule at most, unless ``check --max-events`` or
#: ``search --max-steps`` says otherwise.
MAX_STEPS = 16

#: What ``--help`` of check and search says of loop specs.
LOOP_HELP = """\
real agent loops (issue 21):
  prunecheck check loop:examples/loops/pydantic_ai_turns.py:agent
  prunecheck check loop:langgraph:my_app/agent.py:build --out repro/ --json
  prunecheck check loop:my_app/agent.py:agent --scenario cancel,crash_resume
  prunecheck search loop:my_app/agent.py:agent --scenario trim --sizes 300,3000

loop:FILE.py:ATTR (or loop:module:ATTR, or loop:FRAMEWORK:FILE.py:ATTR) is your
agent, or a factory of one, of pydantic-ai, LangChain v1 create_agent (langgraph),
the OpenAI Agents SDK (openai-agents) or AutoGen AgentChat (autogen).  Its model
is replaced by a scripted double, its tools by fakes of the same names and
schemas; its middleware, history processors, trimming, sessions and checkpointers
stay as configured.  The harness owns every await point (model replies, tool
completions in any order, failures, timeouts, the clock, cancel, crash, resume,
approvals) and judges every request against what really ran.  loop:process:FILE.toml
is an agent in any language, run as a subprocess as its manifest says against the
fake model endpoint (docs/how-to/black-box.md; 20 runs per class by default).
check searches each
scenario class the agent supports (--scenario A,B: those; by default 60 runs per
class, as search runs for its one class; --max-examples N: N shared among them;
--max-events: steps per schedule) and prints the scenario table; search
searches one class (--scenario) within search's shape options: --max-calls (the
widest parallel batch), --max-batches, --max-users, --max-steps, --sizes (token
sizes of the tools' outputs, about 4 characters a token), --time-steps (the
clock's jumps).  --seed, --out, --force, --time-limit, --json, --junit (check),
--quiet (check), --target (search), --fail-vacuous, --fail-on-framework (exit 1 on
framework findings too: failures the framework's plain agent, without your
trimming, shows on the same schedule; by default only your configuration's
findings set the exit status) and the failure database
(--failures, --no-failures: a class's saved schedules are replayed first, keyed
by the agent's file and the framework's version) apply as for a policy.
The runtime knobs (--gate, --check-at, --budget ...), the scenario suite's
options (--levels, --seeds, --horizon ...), --policy-timeout, --format,
--max-chunks, --max-texts and --max-writes are refused for a loop (exit 2,
saying why): the loop is its own runtime.
"""

#: What ``check`` says before a class's reproduction the failure database gave.
_REPLAYED = (
    "\nreplayed first: the saved schedule {path} still breaks the loop; this class "
    "was not searched.\n"
)

_STATUS = {
    CellVerdict.UNSAFE: 1,
    CellVerdict.SAFE: 0,
    CellVerdict.VACUOUS: 0,
    CellVerdict.OUT_OF_TIME: EXIT_OUT_OF_TIME,
}


def _status(result: LoopCheck, args: argparse.Namespace) -> int:
    """The exit status: UNSAFE by the configuration's findings, or by the
    framework's too under ``--fail-on-framework`` (:mod:`prunecheck.sim.api.loop_owner`)."""
    status = _STATUS.get(result.verdict, 0)
    framework_only = result.verdict is CellVerdict.UNSAFE and not result.configuration_unsafe
    if framework_only and not getattr(args, "fail_on_framework", False):
        status = 0
    return vacuous_status(status, result.verdict is CellVerdict.VACUOUS, args)


def _max_steps(args: argparse.Namespace, dest: str) -> int:
    if dest not in given_options(args):
        return MAX_STEPS
    steps = int(getattr(args, dest))
    if steps < 1:
        flag = "--" + dest.replace("_", "-")
        raise ConfigError(
            f"{flag} {steps}",
            "must be at least 1 for a loop: subject (steps of one schedule).",
            f"give {flag} 1 or more (default {MAX_STEPS}).",
        )
    return steps


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
    with confined(), offline() as net:
        return _check_loop_command(args, net)


def _check_loop_command(args: argparse.Namespace, net: Offline) -> int:
    from prunecheck.sim.api.junit import write_junit
    from prunecheck.sim.api.loop_documents import loop_cases, loop_check_document, loop_properties
    from prunecheck.sim.cli.junit_output import check_junit

    refuse_for_loop(args)
    providers = parse_providers(getattr(args, "provider", None))
    scenarios = check_scenarios(args)
    max_steps = _max_steps(args, "max_events")
    check_junit(args.junit, force=args.force)
    target = load_target(str(args.policy))
    db = failure_database(args)
    try:
        given = "max_examples" in given_options(args)  # else each class its own runs
        result = check_loop(  # the API: saved schedules first, the search, the save
            target, seed=int(args.seed), max_examples=int(args.max_examples) if given else None,
            scenarios=scenarios, max_steps=max_steps, time_limit=args.time_limit,
            progress=progress_for(args.time_limit, command="check", quiet=args.quiet),
            failures=db if db is not None else False,
        )  # fmt: skip
    finally:
        report_problems(db, "check")
    out = getattr(args, "out", None)
    written: dict[str, Path] = {}
    if out:
        for i, cell in enumerate(result.unsafe):
            assert cell.found is not None
            folder = Path(out) / cell.scenario.name.value if i else Path(out)
            written[cell.scenario.name.value] = write_bundle(
                target, cell.found, folder, seed=result.seed, scenario=cell.scenario.name.value,
                force=bool(args.force) or bool(i),
            )  # fmt: skip
    if not args.quiet:
        sys.stdout.write(f"{target.spec}: {target.framework} agent, seed {result.seed}\n")
        sys.stdout.write(f"{net.line()}\n\n")
        sys.stdout.write(result.table() + "\n")
    print(result.verdict_line())
    if not args.quiet and result.rules:
        print(result.rules)
    stories = {}
    if not args.quiet or providers:
        for cell in result.unsafe:
            assert cell.found is not None
            stories[cell.scenario.name] = retell(target.adapter, target.target, cell.found.steps)
    judged = _judged(result, stories, providers)
    for line in _provider_lines(judged, bool(result.unsafe)):
        print(line)
    if not args.quiet and result.framework_findings:
        sys.stdout.write(result.framework_lines())
    if not args.quiet:
        for cell in result.unsafe:
            assert cell.found is not None
            story = stories[cell.scenario.name]
            if cell.saved is not None:
                sys.stdout.write(_REPLAYED.format(path=cell.saved))
            sys.stdout.write(
                f"\nminimal reproduction ({cell.scenario.title}, {len(story.steps)} steps):\n"
                + narrative(story)
            )
    for name, folder in written.items():
        print(f"reproduction bundle ({SCENARIOS[ScenarioClass(name)].title}) written to {folder}")
    status = _status(result, args)
    if args.json or args.junit:
        doc = loop_check_document(result, written, status, max_steps=max_steps,
                                  offline=net.to_json())  # fmt: skip
        if judged:
            doc["providers"] = [j.to_json() for j in judged]
        record(args, doc)
        if args.junit:
            seconds = {c.scenario.name.value: c.seconds for c in result.cells}
            write_junit(args.junit, loop_cases(doc, seconds), name="check",
                        properties=loop_properties(doc))  # fmt: skip
    return status


def _judged(
    result: LoopCheck, stories: Mapping[ScenarioClass, Story], providers: Sequence[Provider]
) -> tuple[ProviderJudgment, ...]:
    """Each provider's first rejection of the unsafe classes' minimal schedules'
    requests (the first unsafe class first), or that it accepts them."""
    if not providers:
        return ()
    runs = []
    for cell in result.unsafe:
        story = stories[cell.scenario.name]
        received = [(r.step, r.body) for r in story.ledger.requests]
        runs.append((cell.scenario.name.value, len(story.steps), loop_requests(received)))
    return tuple(
        replace(j, label=f"the minimal schedule of {j.check_at}") if j.check_at else j
        for j in judge_runs(runs, providers)
    )


def _provider_lines(judged: Sequence[ProviderJudgment], unsafe: bool) -> list[str]:
    if not judged:
        return []
    what = "the minimal schedules' requests" if unsafe else "the check"
    lines = [f"providers (judged on {what}):"]
    for j in judged:
        if j.rejects:
            lines.append(f"  {j.line()}")
        elif not j.reproductions:
            lines.append(f"  {j.provider}: accepts — no unsafe class to judge")
        else:
            many = "s" if j.requests != 1 else ""
            lines.append(
                f"  {j.provider}: accepts every request of the minimal schedules "
                f"({j.requests} request{many})"
            )
    return lines


def search_loop_command(args: argparse.Namespace) -> int:
    """``prunecheck search loop:…``: one scenario class searched, the failure shrunk."""
    with confined(), offline() as net:
        return _search_loop_command(args, net)


def _search_loop_command(args: argparse.Namespace, net: Offline) -> int:
    from prunecheck.sim.api.loop_documents import loop_search_document
    from prunecheck.sim.cli.driver_options import parse_target

    refuse_for_loop(args, SEARCH_REFUSED)
    shape = loop_shape(args)
    max_steps = _max_steps(args, "max_steps")
    targeted = parse_target(getattr(args, "target", None))
    kinds = None if targeted is None else frozenset(k.value for k in targeted)
    target = load_target(str(args.policy))
    scenario = replace(SCENARIOS[_scenario(getattr(args, "scenario", None))], shape=shape)
    caps = target.adapter.capabilities(target.target)
    if not scenario.applies(caps):
        assert scenario.needs is not None
        raise ConfigError(
            f"--scenario {scenario.name.value}",
            f"does not apply to {target.reference}: {not_applicable_reason(scenario.needs)}.",
            "prunecheck check prints which scenario classes apply.",
        )
    db = failure_database(args)
    try:
        examples = (int(args.max_examples) if "max_examples" in given_options(args)
                    else CLASS_EXAMPLES)  # fmt: skip
        result = search_loop(target, scenario=scenario.name, seed=int(args.seed),
                             max_examples=examples, max_steps=max_steps,
                             shape=shape, time_limit=args.time_limit, target=kinds,
                             progress=progress_for(args.time_limit, command="search"),
                             failures=db if db is not None else False)  # fmt: skip
    finally:
        report_problems(db, "search")
    cell = cell_of(scenario, result, target)
    if result.found is not None:  # whose failure it is: the framework's or the configuration's
        cell = replace(cell, findings=every_kind(
            target, scenario, result, seed=int(args.seed), max_examples=examples,
            max_steps=max_steps, rounds=0))  # fmt: skip
    checked = LoopCheck(target, (cell,), int(args.seed))
    if cell.saved is None:
        print(
            f"{target.spec} ({target.framework}), scenario class {scenario.title}: "
            f"{result.examples} schedules generated, {result.schedules} run with shrinking, "
            f"{result.steps} steps"
        )
    else:
        print(f"{target.spec} ({target.framework}), scenario class {scenario.title}: "
              "a saved schedule replayed first, nothing searched")  # fmt: skip
    print(net.line())
    folder: Path | None = None
    if result.found is None:
        what = "no schedule broke it" if kinds is None else f"no {'/'.join(sorted(kinds))}"
        if result.timed_out:
            print(f"out of time: {what} before --time-limit (seed {args.seed}); no verdict.")
        else:
            print(f"{what} (seed {args.seed}).")
            if cell.verdict is CellVerdict.VACUOUS:
                print(f"verdict: vacuous — {cell.note}: nothing this class is about was tested.")
            elif cell.figures is not None:
                print(f"reached: {cell.figures.text()}")
    else:
        story = retell(target.adapter, target.target, result.found.steps)
        found_kinds = ", ".join(sorted(result.found.kinds))
        cut = " (stopped at --time-limit, shrinking cut short)" if result.timed_out else ""
        if cell.saved is not None:
            print(f"found: {found_kinds} — {len(story.steps)} steps, the failure database's "
                  f"{cell.saved} still breaks the loop")  # fmt: skip
        else:
            print(
                f"found: {found_kinds} — shrunk from {result.first_length} to "
                f"{len(story.steps)} steps{cut}"
            )
        if checked.framework_findings:
            sys.stdout.write(checked.framework_lines())
        if not getattr(args, "quiet", False):
            sys.stdout.write(narrative(story))
        out = getattr(args, "out", None)
        if out:
            force = bool(getattr(args, "force", False))
            folder = write_bundle(target, result.found, Path(out), seed=int(args.seed),
                                  scenario=scenario.name.value, force=force)  # fmt: skip
            print(f"reproduction bundle written to {folder}")
    status = _status(checked, args)
    if args.json:
        record(args, loop_search_document(checked, folder, status, max_steps=max_steps,
                                          offline=net.to_json()))  # fmt: skip
    return status

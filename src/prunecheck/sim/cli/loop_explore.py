"""``explore`` of a ``loop:`` spec: every schedule of one scenario class up to ``--depth``.

Shared options mean for a loop what they mean for ``search`` of one
(:mod:`.loop_options`); what only ``explore`` has is in :data:`EXPLORE_WIRED`
and :data:`EXPLORE_REFUSED`.  ``tests/test_loop_explore.py`` holds a row per
option of ``explore`` and fails when one is in no table.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path

from prunecheck.model.errors import ConfigError
from prunecheck.sim.api.loop_explore import explore_loop
from prunecheck.sim.api.loop_verdict import CellVerdict, LoopCheck
from prunecheck.sim.cli.json_output import record
from prunecheck.sim.cli.limits import EXIT_OUT_OF_TIME, vacuous_status
from prunecheck.sim.cli.loop_options import (
    SEARCH_REFUSED,
    Refusal,
    loop_shape,
    parse_scenarios,
    refuse_for_loop,
)
from prunecheck.sim.evidence.loop_bundle import write_bundle
from prunecheck.sim.evidence.loop_narrative import narrative
from prunecheck.sim.subjects.loops.confine import confined
from prunecheck.sim.subjects.loops.offline import Offline, offline
from prunecheck.sim.subjects.loops.story import retell
from prunecheck.sim.subjects.loops.target import load_target
from prunecheck.sim.support.progress import progress_for

__all__ = ["EXPLORE_REFUSED", "EXPLORE_WIRED", "explore_loop_command"]

#: Options of ``explore`` that change what runs for a loop (dest → what they do).
EXPLORE_WIRED: Mapping[str, str] = {
    "policy_option": "the deprecated spelling of POLICY: the agent explored",
    "depth": "the longest schedule walked, in steps (every shorter one is walked first)",
    "max_states": "schedules run at most (a live loop's states cannot be fingerprinted)",
    "scenario": "the one scenario class walked (default parallel)",
    "values": "alternatives tried per value a step draws (default 3; 0: all)",
    "max_calls": "the widest parallel batch the scripted model issues",
    "max_batches": "replies with tool calls one schedule may hold at most",
    "max_users": "user messages one schedule may hold at most",
    "sizes": "the token sizes of the fake tools' outputs",
    "time_steps": "the seconds the virtual clock may jump",
    "target": "the violation kinds that count as a finding",
    "out": "the folder the reproduction bundle is written to",
    "force": "lets --out overwrite a folder",
    "time_limit": "no schedule starts after it; exit 3 when nothing was found by then",
    "json": "the verdict as one JSON document, a placement for the class",
    "fail_vacuous": "exit 4 when the class's own step was never applied",
}

#: The options ``explore`` shares with ``check`` and ``search`` that are refused for a loop.
_SHARED_REFUSED = (
    "format", "runtime_option", "gate", "check_at", "retry", "on_stream_loss", "repair",
    "provider", "budget", "hard_ceiling", "max_retries", "policy_timeout", "max_chunks",
    "max_texts", "max_writes",
)  # fmt: skip

#: Options of ``explore`` refused for a loop (dest → why and what instead).
EXPLORE_REFUSED: Mapping[str, Refusal] = {
    **{k: SEARCH_REFUSED[k] for k in _SHARED_REFUSED},
    "max_steps": Refusal(
        "bounds a model-runtime history's events; a loop's schedule is bounded by --depth.",
        "drop {flag}; give --depth N.",
    ),
    "max_waits": Refusal(
        "bounds the model runtime's time jumps per history; a loop's clock jumps when a "
        "schedule's step says so (--time-steps sets by how much).",
        "drop {flag}.",
    ),
}


def explore_loop_command(args: argparse.Namespace) -> int:
    """``prunecheck explore loop:… --depth N``: the walk, its verdict, a bundle."""
    with confined(), offline() as net:
        return _explore_loop_command(args, net)


def _explore_loop_command(args: argparse.Namespace, net: Offline) -> int:
    from prunecheck.sim.api.loop_documents import loop_explore_document
    from prunecheck.sim.cli.driver_options import parse_target

    refuse_for_loop(args, EXPLORE_REFUSED)
    if args.out:
        from prunecheck.sim.support.outputs import check_bundle_folder, output_folder

        args.out = str(output_folder(Path(args.out)))  # resolved before user code runs
        check_bundle_folder(Path(args.out), force=args.force)
    if args.depth < 1:
        raise ConfigError("--depth", f"must be at least 1, got {args.depth}.")
    if args.values < 0:
        raise ConfigError(f"--values {args.values}", "must be 0 (all) or more.", "e.g. 3.")
    shape = loop_shape(args)
    names = parse_scenarios(args.scenario) if args.scenario else None
    if names is not None and len(names) != 1:
        raise ConfigError(f"--scenario {args.scenario}", "names more than one class.",
                          "explore walks one class at a time: give one name.")  # fmt: skip
    targeted = parse_target(getattr(args, "target", None))
    kinds = None if targeted is None else frozenset(k.value for k in targeted)
    target = load_target(str(args.policy))
    found = explore_loop(target, scenario=names[0] if names else "parallel", depth=args.depth,
                         values=args.values, max_runs=args.max_states, shape=shape,
                         time_limit=args.time_limit, target=kinds,
                         progress=progress_for(args.time_limit, command="explore"))  # fmt: skip
    walk, cell, scenario = found.outcome, found.cell, found.scenario
    print(
        f"{target.spec} ({target.framework}), scenario class {scenario.title}: "
        f"{walk.search.examples} schedules walked, {walk.search.steps} steps, depth "
        f"{walk.depth} of {args.depth} complete; {args.values or 'all'} value(s) per draw"
    )
    print(net.line())
    folder: Path | None = None
    status: int
    what = "no schedule" if kinds is None else f"no {'/'.join(sorted(kinds))} in any schedule"
    if walk.found is not None:
        story = retell(target.adapter, target.target, walk.found.steps)
        print(f"found: {', '.join(sorted(walk.found.kinds))} — a shortest schedule, "
              f"{len(story.steps)} steps (none of fewer steps breaks it)")  # fmt: skip
        sys.stdout.write(narrative(story))
        if args.out:
            folder = write_bundle(target, walk.found, Path(args.out), seed=0,
                                  scenario=scenario.name.value, force=args.force)  # fmt: skip
            print(f"reproduction bundle written to {folder}")
        status = 1
    elif walk.search.timed_out:
        print(f"out of time: {what} broke it up to depth {walk.depth} before --time-limit; "
              "no verdict.")  # fmt: skip
        status = EXIT_OUT_OF_TIME
    else:
        if walk.complete:
            print(f"{what} of up to {args.depth} steps broke it: every one was walked.")
        else:
            print(f"stopped at --max-states {args.max_states}: {what} broke it, but only depth "
                  f"{walk.depth} of {args.depth} was walked completely.")  # fmt: skip
        vacuous = cell.verdict is CellVerdict.VACUOUS
        if vacuous:
            print(f"verdict: vacuous — {cell.note}: nothing this class is about was tested.")
        status = vacuous_status(0, vacuous, args)
    if args.json:
        checked = LoopCheck(target, (cell,), 0)
        record(args, loop_explore_document(checked, folder, status, max_steps=args.depth,
                                           offline=net.to_json()))  # fmt: skip
    return status

"""What each option of ``check`` and ``search`` means for a ``loop:`` subject.

Every option either changes what runs for an agent loop (:data:`WIRED`, and
what it does there) or is refused for it with exit 2 and one paragraph
naming the option, the rule and a hint (:data:`REFUSED`).  An agent loop is
its own runtime: the framework decides when it trims, retries and repairs,
and which requests it sends, so the model runtime's knobs, its fixed
scenario suite and its worker's call timeout have nothing to act on.
``tests/test_loop_options.py`` holds one row per option, and a test fails
when an option of either command is in neither table.

Only options the user gave are refused: an option is given when its value
differs from its parser default (:func:`remember_defaults` keeps them).

>>> sorted(set(WIRED) & set(REFUSED))
[]
>>> REFUSED["gate"].rule.split(";")[0]
"is a knob of prunecheck's model runtime"
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from prunecheck.model.errors import ConfigError
from prunecheck.sim.subjects.loops.scenarios import LoopShape, ScenarioClass

__all__ = [
    "REFUSED",
    "SEARCH_REFUSED",
    "WIRED",
    "Refusal",
    "check_scenarios",
    "given_options",
    "loop_shape",
    "parse_scenarios",
    "refuse_for_loop",
    "refuse_scenario_for_policy",
    "remember_defaults",
]

_DEFAULTS = "_option_defaults"
_FLAGS = "_option_flags"

#: Options that change what runs for a loop, and how (dest → what it does).
WIRED: Mapping[str, str] = {
    "policy_option": "the deprecated spelling of POLICY: the agent checked",
    "seed": "the seed of the search: the same seed gives the same schedules",
    "max_examples": "schedules generated (default 60 a class; check: a given N is shared)",
    "max_events": "check: steps one schedule may take at most (default 16)",
    "max_steps": "search: steps one schedule may take at most (default 16)",
    "scenario": "the scenario classes searched (check: a list; search: one)",
    "max_calls": "the widest parallel batch the scripted model issues (default 3)",
    "max_batches": "replies with tool calls one schedule may hold at most",
    "max_users": "user messages one schedule may hold at most (0: none)",
    "sizes": "the token sizes of the fake tools' outputs (about 4 characters a token)",
    "time_steps": "the seconds the virtual clock may jump (tool_timeout; none: no jump)",
    "target": "search: the violation kinds that count as a finding",
    "provider": "check: the providers that judge every request of each unsafe class's minimal "
    "schedule; the verdict names each one's first rejection (search refuses it)",
    "out": "the folder the reproduction bundle is written to",
    "force": "lets --out overwrite a folder, and --junit replace a file",
    "quiet": "check: only the verdict line, and no progress; search: no narrative",
    "time_limit": "no search run starts after it; exit 3 when nothing was found by then",
    "json": "the verdict as one JSON document, a placement per scenario class",
    "junit": "check: JUnit XML, a test case per scenario class",
    "fail_vacuous": "exit 4 when no class's own step was ever applied",
    "fail_on_framework": "exit 1 on framework findings too (the plain agent fails the same way)",
    "failures": "the failure database: a class's saved schedules replayed first, new ones saved",
    "no_failures": "neither replay saved schedules nor save new ones",
}

_RUNTIME = (
    "is a knob of prunecheck's model runtime; an agent loop is its own runtime: "
    "its framework decides {what}."
)
_RUNTIME_HINT = (
    "configure that in the agent itself (its middleware, history processor, session, "
    "checkpointer) and check the agent as configured; drop {flag}."
)
_SUITE = (
    "sets the fixed scenario suite prunecheck's model runtime is simulated under; an agent "
    "loop has no fixed suite: check searches each of its scenario classes."
)
_SUITE_HINT = "drop {flag}; choose classes with --scenario and the work with --max-examples."


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why an option does not apply to an agent loop.

    Attributes
    ----------
    rule : str
        What the option is for, and why a loop has nothing for it to act on.
    hint : str
        What to do instead (``{flag}`` stands for the option as spelled).
    """

    rule: str
    hint: str


def _runtime(what: str) -> Refusal:
    return Refusal(_RUNTIME.format(what=what), _RUNTIME_HINT)


#: Options refused for a loop subject (dest → why and what to do instead).
REFUSED: Mapping[str, Refusal] = {
    "format": Refusal(
        "reads a list function's message format (@openai, @anthropic); an agent loop's "
        "framework speaks to the model in its own format, and each request is judged under "
        "both OpenAI's and Anthropic's rules.",
        "drop {flag}.",
    ),
    "langchain_option": Refusal(
        "names a LangChain trimmer as the subject; an agent loop is a subject of its own.",
        "give one subject: the loop: spec, or langchain:SETTINGS as POLICY.",
    ),
    "runtime_option": Refusal(
        "names a runtime under test as the subject; an agent loop is a subject of its own.",
        "give one subject as POLICY.",
    ),
    "gate": _runtime("what stands between its trimming and the history"),
    "check_at": _runtime("when it trims (at its own hook: a history processor, a middleware)"),
    "retry": _runtime("what a retry re-runs"),
    "on_stream_loss": _runtime("what a stream does when its message is gone"),
    "repair": _runtime("whether anything rewrites the history before a request"),
    "budget": _runtime("how many tokens it keeps (its trimmer's own setting)"),
    "hard_ceiling": _runtime("how many tokens it keeps (its trimmer's own setting)"),
    "max_retries": _runtime("how often it retries"),
    "levels": Refusal(_SUITE, _SUITE_HINT),
    "seeds": Refusal(_SUITE, _SUITE_HINT),
    "slow_levels": Refusal(_SUITE, _SUITE_HINT),
    "horizon": Refusal(_SUITE, _SUITE_HINT),
    "policy_timeout": Refusal(
        "bounds one call of a policy or runtime in prunecheck's worker process; an agent "
        "loop runs in-process on the harness's virtual clock, where a turn that never "
        "settles is judged a hang.",
        "bound the whole command with --time-limit instead; drop {flag}.",
    ),
    "max_chunks": Refusal(
        "bounds the streamed chunks of a tool result or an assistant text; the harness "
        "completes a loop's tool calls whole and its scripted model replies whole.",
        "drop {flag}; --sizes sets how long tool outputs are.",
    ),
    "max_texts": Refusal(
        "bounds the model runtime's assistant text messages; in a loop the scripted model "
        "answers with text whenever it ends a turn, so texts are bounded by the turns.",
        "drop {flag}; bound turns with --max-users and schedules with --max-steps.",
    ),
    "max_writes": Refusal(
        "bounds writes to files the model runtime's tools read; a loop's fake tools share "
        "no file the harness could write to between steps.",
        "drop {flag}.",
    ),
}

#: ``search``'s refusals for a loop: :data:`REFUSED`, and ``--provider``,
#: which ``check`` wires (:data:`WIRED`) and ``search`` has no use for.
SEARCH_REFUSED: Mapping[str, Refusal] = {
    **REFUSED,
    "provider": Refusal(
        "chooses the provider whose rules judge the model runtime's requests; an agent "
        "loop's every request is judged under both OpenAI's and Anthropic's rules.",
        "drop {flag}; check loop:… --provider NAME[,NAME] names each provider's first "
        "rejection of the minimal schedules' requests.",
    ),
}


def remember_defaults(parser: argparse.ArgumentParser) -> None:
    """Keep ``parser``'s option defaults and spellings in the namespace it
    parses, so that :func:`given_options` tells what the user gave (call
    last, after every option is added)."""
    defaults: dict[str, Any] = {}
    flags: dict[str, str] = {}
    for action in parser._actions:
        if not action.option_strings or action.dest == argparse.SUPPRESS:
            continue
        if isinstance(action, argparse._HelpAction):
            continue
        defaults[action.dest] = action.default
        flags[action.dest] = max(action.option_strings, key=len)
    parser.set_defaults(**{_DEFAULTS: defaults, _FLAGS: flags})


def given_options(args: argparse.Namespace) -> dict[str, str]:
    """The options the user gave (dest → the option as spelled), in parser order."""
    defaults: Mapping[str, Any] = getattr(args, _DEFAULTS, {})
    flags: Mapping[str, str] = getattr(args, _FLAGS, {})
    return {
        dest: flags[dest] for dest, default in defaults.items() if getattr(args, dest) != default
    }


def refuse_for_loop(args: argparse.Namespace, refused: Mapping[str, Refusal] = REFUSED) -> None:
    """Refuse the first option given that does not apply to a loop (exit 2):
    one of ``refused`` (``check``'s and ``search``'s table unless a command
    gives its own, as ``explore`` does).

    Raises
    ------
    ConfigError
        naming the option, why it does not apply, and what to do instead.
    """
    for dest, flag in given_options(args).items():
        refusal = refused.get(dest)
        if refusal is not None:
            raise ConfigError(
                flag,
                f"does not apply to an agent loop (a loop: spec): it {refusal.rule}",
                refusal.hint.format(flag=flag),
            )
    if getattr(args, "max_examples", None) == 0:
        raise ConfigError(
            "--max-examples 0",
            "would search nothing: an agent loop (a loop: spec) has no fixed suite, only "
            "the search.",
            "give at least 1 (default 200).",
        )


def refuse_scenario_for_policy(args: argparse.Namespace) -> None:
    """``--scenario`` names an agent loop's scenario classes, and
    ``--fail-on-framework`` gates on a loop's framework findings: both
    refused for any other subject (exit 2)."""
    if getattr(args, "fail_on_framework", False):
        raise ConfigError(
            "--fail-on-framework",
            "gates on an agent loop's framework findings (failures its framework's plain "
            f"agent shows too); {args.policy!r} is not a loop: spec, and every finding of "
            "a policy is its own.",
            "drop --fail-on-framework, or give a loop:FILE.py:ATTR spec as POLICY.",
        )
    if getattr(args, "scenario", None) is not None:
        raise ConfigError(
            "--scenario",
            "chooses an agent loop's scenario classes (cancel, crash_resume, …); "
            f"{args.policy!r} is not a loop: spec.",
            "drop --scenario, or give a loop:FILE.py:ATTR spec as POLICY.",
        )


def parse_scenarios(text: str) -> tuple[ScenarioClass, ...]:
    """``check --scenario A,B``: scenario classes (ConfigError if unknown).

    >>> parse_scenarios("cancel,parallel")
    (<ScenarioClass.PARALLEL: 'parallel'>, <ScenarioClass.CANCEL: 'cancel'>)
    """
    chosen: list[ScenarioClass] = []
    for name in (t.strip() for t in text.split(",")):
        try:
            chosen.append(ScenarioClass(name))
        except ValueError:
            raise ConfigError(
                f"--scenario {name!r}",
                "is not a scenario class.",
                f"use one of: {', '.join(s.value for s in ScenarioClass)}.",
            ) from None
    return tuple(c for c in ScenarioClass if c in chosen)  # in the table's order


def check_scenarios(args: argparse.Namespace) -> tuple[ScenarioClass, ...] | None:
    """The classes ``check --scenario`` names (None: every class)."""
    text = getattr(args, "scenario", None)
    return None if text is None else parse_scenarios(str(text))


def _at_least(args: argparse.Namespace, dest: str, low: int) -> int | None:
    value: int | None = getattr(args, dest, None)
    if value is not None and value < low:
        flag = "--" + dest.replace("_", "-")
        raise ConfigError(
            f"{flag} {value}",
            f"must be at least {low} for a loop: subject.",
            f"give {flag} {low} or more, or leave it out.",
        )
    return value


def loop_shape(args: argparse.Namespace) -> LoopShape:
    """The :class:`LoopShape` of ``search``'s shape options (the default
    shape for what is not given; ``check`` has none of them)."""
    shape = LoopShape()
    width = _at_least(args, "max_calls", 1)
    sizes_text = getattr(args, "sizes", None)
    steps_text = getattr(args, "time_steps", None)
    sizes = shape.sizes
    if sizes_text is not None:
        from prunecheck.sim.cli.driver_options import parse_sizes

        sizes = parse_sizes(sizes_text)
        if any(s < 1 for s in sizes):
            raise ConfigError(
                f"--sizes {sizes_text!r}",
                "must be token counts of at least 1.",
                "for example --sizes 30,300,2000.",
            )
    advances = shape.advances
    if steps_text is not None:
        from prunecheck.sim.cli.driver_options import parse_time_steps

        advances = tuple(float(s) for s in parse_time_steps(steps_text))
        if any(s <= 0 for s in advances):
            raise ConfigError(
                f"--time-steps {steps_text!r}",
                "must be positive whole seconds, or none.",
                "for example --time-steps 30,300.",
            )
    return LoopShape(
        width=shape.width if width is None else width,
        batches=_at_least(args, "max_batches", 1),
        users=getattr(args, "max_users", None),
        sizes=sizes,
        advances=advances,
    )

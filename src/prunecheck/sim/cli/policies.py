"""``prunecheck policies``: the built-in policies, and how to name your own."""

from __future__ import annotations

import argparse
import inspect
from typing import Any

from prunecheck.model.policies import BUILTINS
from prunecheck.sim.cli.commands import SUMMARIES
from prunecheck.sim.cli.policy_argument import REMOVED_IN, spelling_table
from prunecheck.sim.subjects.frameworks import adapter_help

__all__ = ["describe", "execute", "register", "spellings"]

EXAMPLE = """\
examples:
  prunecheck policies
  prunecheck check lowest_salience                 # a built-in, by name
  prunecheck check autogen:context=buffered,buffer_size=6 --check-at before_invoke
"""

_YOURS = """\
your own policy, wherever a POLICY is asked for:
  module:attr  or  path/to/file.py:attr     a select(view, need) function or policy object
  file.py:trim@openai  /  file.py:trim@anthropic
                                            a trim(messages) -> messages list function
"""


def spellings() -> str:
    """Every kind of POLICY spec with its one spelling, and the deprecated
    spellings that still work until they go."""
    return (
        "every kind of POLICY, one spelling each (every command takes it as POLICY):\n"
        + spelling_table()
        + f"\n\ndeprecated spellings (they still work, print a notice, and go in {REMOVED_IN}):\n"
        "  --policy SPEC                  ->  SPEC, the POLICY argument\n"
        "  --format openai file.py:trim   ->  file.py:trim@openai\n"
        "  check --langchain SETTINGS     ->  langchain:SETTINGS\n"
        "  --runtime FILE.py:CLASS        ->  runtime:FILE.py:CLASS\n"
        "  --runtime guard:POLICY         ->  runtime:guard:POLICY (and model:POLICY likewise)\n"
    )


def describe(factory: Any) -> str:
    """The first paragraph of a policy's docstring, on one line."""
    doc = inspect.getdoc(factory) or ""
    return " ".join(doc.split("\n\n", 1)[0].replace("``", "").split())


def register(sub: Any) -> None:
    p = sub.add_parser(
        "policies",
        help=SUMMARIES["policies"],
        description=__doc__,
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.set_defaults(func=execute)


def execute(args: argparse.Namespace) -> int:
    width = max(len(name) for name in BUILTINS)
    print("built-in policies (give the name as POLICY):")
    for name, factory in BUILTINS.items():
        print(f"  {name:<{width}}  {describe(factory)}")
    print()
    print(_YOURS)
    print(spellings())
    print(adapter_help(), end="")
    print()
    print(_loops())
    return 0


def _loops() -> str:
    """The ``loop:`` spec: the frameworks driven and the scenario classes."""
    from prunecheck.sim.subjects.loops.scenarios import SCENARIOS
    from prunecheck.sim.subjects.loops.target import FRAMEWORKS

    classes = "\n".join(f"  {s.name.value:<18} {s.title}" for s in SCENARIOS.values())
    return (
        "agent loops (loop:FILE.py:ATTR, loop:module:ATTR, loop:FRAMEWORK:FILE.py:ATTR): your\n"
        "agent, or a factory of one, driven through its framework's own loop with a scripted\n"
        f"model and fake tools; frameworks: {', '.join(FRAMEWORKS)} (pip install\n"
        "'prunecheck[loops]'); detected when not named.  check searches every scenario class\n"
        "the agent supports; search --scenario NAME one of them:\n" + classes + "\n\n"
        "black-box agents (loop:process:MANIFEST.toml): your agent in any language, run as a\n"
        "subprocess against prunecheck's fake model endpoint (OpenAI Chat Completions and\n"
        "Responses, Anthropic Messages) and tool hook, as its manifest says (command, input,\n"
        "persistence, tools); a crash is a SIGKILL and a restart on its real persistence, a\n"
        "cancel a SIGINT (docs/how-to/black-box.md)."
    )

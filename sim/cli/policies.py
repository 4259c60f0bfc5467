"""``prunecheck policies``: the built-in policies, and how to name your own."""

from __future__ import annotations

import argparse
import inspect
from typing import Any

from prunecheck.model.policies import BUILTINS
from prunecheck.sim.adapters.frameworks import adapter_help
from prunecheck.sim.cli.commands import SUMMARIES

__all__ = ["describe", "execute", "register"]

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
                                            (or: prunecheck check --format openai file.py:trim)
"""


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
    print(adapter_help(), end="")
    return 0

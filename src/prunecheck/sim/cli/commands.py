"""The table of subcommands: each one's name, its module and its one-line help.

The parser lists every command from this table alone, so that
``prunecheck --help`` imports no command module, and ``prunecheck COMMAND``
imports only ``prunecheck.sim.cli.COMMAND``.  Each command module's
``register`` takes its one-line help from here, so the two never differ.

>>> COMMANDS[:3]
('check', 'search', 'explore')
>>> module_of("validate")
'prunecheck.sim.cli.validate'
"""

from __future__ import annotations

__all__ = ["COMMANDS", "SUMMARIES", "module_of"]

#: Every subcommand, in the order ``--help`` lists them — the order a user
#: needs them: is my policy safe, find and explore what breaks it, read a
#: trace, bring one from production, cut it down; then what the runtime's
#: rates are and how they change; the sweep and the report last.
SUMMARIES: dict[str, str] = {
    "check": "is this policy (or trim function) safe as it is?",
    "search": "adversarial search for a breaking event sequence",
    "explore": "exhaustive bounded exploration of event interleavings",
    "replay": "re-run a trace and narrate it step by step",
    "import": "turn a production log of model requests into a reproduction",
    "shrink": "shrink a failing trace to a minimal one of the same class",
    "validate": "print the tool pairing errors a provider would answer (HTTP 400)",
    "policies": "list the built-in policies",
    "baseline": "record a runtime's incident rates for regress",
    "regress": "compare incident rates with a baseline",
    "sweep": "simulate policies × gates × runtimes × loads × seeds",
    "report": "run the default sweep and write plots + summary.md",
}

#: Subcommands in the order ``--help`` lists them.
COMMANDS: tuple[str, ...] = tuple(SUMMARIES)


#: Commands whose module is not named after them (``import`` is a keyword).
_MODULES = {"import": "importing"}


def module_of(command: str) -> str:
    """The module that registers and runs ``command``.

    >>> module_of("import")
    'prunecheck.sim.cli.importing'
    """
    return f"prunecheck.sim.cli.{_MODULES.get(command, command)}"

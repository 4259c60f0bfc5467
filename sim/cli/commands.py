"""The table of subcommands: each one's name, its module and its one-line help.

The parser lists every command from this table alone, so that
``prunecheck --help`` imports no command module, and ``prunecheck COMMAND``
imports only ``prunecheck.sim.cli.COMMAND``.  Each command module's
``register`` takes its one-line help from here, so the two never differ.

>>> COMMANDS[:3]
('report', 'sweep', 'search')
>>> module_of("validate")
'prunecheck.sim.cli.validate'
"""

from __future__ import annotations

__all__ = ["COMMANDS", "SUMMARIES", "module_of"]

#: Every subcommand, in the order ``--help`` lists them, with its one-line help.
SUMMARIES: dict[str, str] = {
    "report": "run the default sweep and write plots + summary.md",
    "sweep": "simulate policies × gates × runtimes × loads × seeds",
    "search": "adversarial search for a breaking event sequence",
    "explore": "exhaustive bounded exploration of event interleavings",
    "replay": "re-run a trace and narrate it step by step",
    "shrink": "shrink a failing trace to a minimal one of the same class",
    "validate": "print the tool pairing errors a provider would answer (HTTP 400)",
    "check": "is this policy (or trim function) safe as it is?",
    "regress": "compare incident rates with a baseline",
    "baseline": "record a runtime's incident rates for regress",
    "policies": "list the built-in policies",
    "import": "turn a production log of model requests into a reproduction",
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

"""The command line: the parser, shared options, and one module per subcommand."""

from prunecheck.sim.cli.app import build_parser, main

__all__ = ["build_parser", "main"]

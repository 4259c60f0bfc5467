"""The ``prunecheck`` command line: one module per subcommand.

Each subcommand lives in ``prunecheck.sim.cli.<name>`` and exposes
``register(subparsers)``, which adds its parser and sets ``func`` to its
``execute(args) -> int`` (a command *executes*; a *run* is one simulation).
:func:`main` imports only the module of the command given (``prunecheck
--help`` lists every command from the table in :mod:`.commands` and imports
none), so one command's heavy imports cost nothing elsewhere.

Exit status: 0 success / no violation, 1 a violation or regression found,
2 bad input (printed as one paragraph, never a traceback) or a package the
install left out (the paragraph names it and the extra that brings it).
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import importlib
import os
import re
import select
import signal
import sys
import textwrap
import time
from collections.abc import Iterable, Mapping, Sequence

from prunecheck.model.errors import PrunecheckError
from prunecheck.sim.cli.commands import COMMANDS, SUMMARIES, module_of
from prunecheck.sim.cli.policy_argument import REMOVED_IN, read_policy_argument
from prunecheck.sim.support.extras import extra_of, missing_paragraph

__all__ = ["EXIT_BROKEN_PIPE", "build_parser", "chosen_command", "main", "plain"]

#: The exit status when standard output's reader goes away (``| head -1``):
#: 128 + SIGPIPE, what a shell reports for any tool a broken pipe ends.
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE


_ROLE = re.compile(r":[a-z]+:`~?\.?([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")


def plain(text: str) -> str:
    """Help text without reStructuredText markup: ``x`` and :mod:`x` print as x.

    >>> plain("see ``prunecheck report`` and :mod:`.adapters`")
    'see prunecheck report and adapters'
    """
    return _LITERAL.sub(r"\1", _ROLE.sub(r"\1", text))


class _Parser(argparse.ArgumentParser):
    """argparse, with errors in the project's one-paragraph form (exit 2)
    and help in plain text."""

    def format_help(self) -> str:
        return plain(super().format_help())

    def _get_value(self, action: argparse.Action, arg_string: str) -> object:
        # A type function that raises our own error (e.g. --levels) is a bad argument.
        try:
            return super()._get_value(action, arg_string)
        except PrunecheckError as exc:
            raise argparse.ArgumentError(action, exc.rule.rstrip(".")) from None

    def format_usage(self) -> str:
        return plain(super().format_usage())

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(
            2,
            f"{self.prog}: bad command-line argument: {message}. "
            f"Hint: run '{self.prog} --help' for usage and an example.\n",
        )


class _Version(argparse.Action):
    """``--version``: argparse's, with the version read only when asked for."""

    def __init__(
        self,
        option_strings: Sequence[str],
        dest: str = argparse.SUPPRESS,
        default: str = argparse.SUPPRESS,
        help: str = "show program's version number and exit",
    ) -> None:
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        import prunecheck  # its __version__ is the one reading of the installed version

        print(f"prunecheck {prunecheck.__version__}")
        parser.exit()


def build_parser(commands: Iterable[str] | None = None) -> argparse.ArgumentParser:
    """The whole parser; ``commands`` (default: all) get their full parsers,
    every other command only its name and one-line help, without importing
    its module."""
    wanted = set(COMMANDS if commands is None else commands)
    parser = _Parser(
        prog="prunecheck",
        description=(
            "Check context-pruning policies of LLM agent runtimes against the "
            "commit-boundary invariant: simulate, search, explore, replay."
        ),
        epilog=(
            "start with: prunecheck check POLICY (a built-in name, FILE.py:function or "
            "FILE.py:trim@openai);\n'prunecheck COMMAND --help' says more about each command."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    full = []
    for name in COMMANDS:
        if name in wanted:
            importlib.import_module(module_of(name)).register(sub)
            full.append(name)
        else:
            sub.add_parser(name, help=SUMMARIES[name])
    if full:
        _framework_epilog({name: sub.choices[name] for name in full})
    return parser


def chosen_command(argv: Sequence[str]) -> str | None:
    """The command ``argv`` names (its first word that is not an option), or
    None when it names none or an unknown one (the parser then says so).

    >>> chosen_command(["--version"]), chosen_command(["check", "--help"])
    (None, 'check')
    """
    word = next((a for a in argv if not a.startswith("-")), None)
    return word if word in SUMMARIES else None


def _framework_epilog(parsers: Mapping[str, argparse.ArgumentParser]) -> None:
    """Every command's --help names the framework trimmer spec syntax; one
    that takes a policy, the spelling of every kind of POLICY."""
    from prunecheck.sim.subjects.catalog import ADAPTERS

    words = (
        "framework trimmers are POLICY specs too: ADAPTER:key=value,... with ADAPTER "
        f"one of {', '.join(ADAPTERS)}; 'prunecheck policies' lists every setting."
    )
    kinds = (
        "POLICY, the same in every command: NAME, module:attr or file.py:attr, "
        "file.py:attr@openai (or @anthropic), ADAPTER:key=value,..., runtime:FILE.py:CLASS, "
        "runtime:guard:POLICY, runtime:model:POLICY. Deprecated, going in "
        f"{REMOVED_IN}: --policy SPEC, --runtime X, check --langchain S, and --format "
        "beside one policy."
    )
    for parser in parsers.values():
        text = textwrap.fill(words, 79)
        if parser.get_default("_policy_resolved") is False:  # it takes a POLICY
            text = textwrap.fill(kinds, 79) + "\n\n" + text
        parser.epilog = (parser.epilog or "").rstrip("\n") + "\n\n" + text


def _sturdy_streams() -> None:
    """Standard output and error that never fail on a character their
    encoding lacks (``PYTHONIOENCODING=ascii``, a lone surrogate from a
    truncated log): it is written as an escape instead."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, ValueError, OSError):
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]


def _closed_streams() -> set[int]:
    """The standard descriptors (0, 1, 2) that were closed when prunecheck
    started (``>&-``, ``<&-``); each is reopened on /dev/null, so that no
    file opened later (a results file, a worker's pipe) takes its number
    and receives what was meant for the stream."""
    closed = set()
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            closed.add(fd)
            with contextlib.suppress(OSError):
                devnull = os.open(os.devnull, os.O_RDWR)
                if devnull != fd:
                    os.dup2(devnull, fd)
                    os.close(devnull)
    if sys.stderr is None:  # Python found it closed: a paragraph must go somewhere
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - for the process
    return closed


def _stdout_broken() -> bool:
    """Whether standard output is a pipe whose reader has gone (``| head``)."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return True  # a stream without a descriptor that raised EPIPE
    poller = select.poll()
    poller.register(fd, 0)  # POLLERR (no reader left) is reported whatever is asked
    return any(event & select.POLLERR for _, event in poller.poll(0))


def _drop_stdout() -> None:
    """Point standard output at /dev/null (it failed: a full disk, a closed
    pipe), so that the interpreter's last flush cannot fail again."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def _say(command: str, text: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        print(f"prunecheck {command}: {text}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    closed = _closed_streams()
    _sturdy_streams()
    try:
        os.getcwd()
    except OSError:
        _say(
            chosen_command(sys.argv[1:] if argv is None else list(argv)) or "",
            "the current folder no longer exists (it was deleted or moved away). "
            "Hint: cd into an existing folder and run the command again.",
        )
        return 2
    words = sys.argv[1:] if argv is None else list(argv)
    command = chosen_command(words)
    if sys.stdout is None or 1 in closed:
        _say(
            command or "",
            "standard output is closed (the command was started with >&- or by a process "
            "that closed it), and prunecheck prints its verdict there. Hint: send it to "
            "/dev/null (>/dev/null) or to a file instead of closing it.",
        )
        return 2
    try:
        status = _main(words, command)
    except ModuleNotFoundError as exc:  # an extra left out of the install (README, "Install")
        if extra_of(exc.name) is None:
            raise
        print(
            missing_paragraph(f"prunecheck {command or ''}".rstrip(), exc.name or ""),
            file=sys.stderr,
        )
        return 2
    caged = sys.modules.get("prunecheck.sim.subjects.loops.confine")
    if argv is None and caged is not None:  # the program, not a call: an agent's threads
        caged.leave_now(status)  # left running do not keep it alive
    return status


def _main(words: list[str], command: str | None) -> int:
    parser = build_parser(() if command is None else (command,))
    try:
        args = parser.parse_args(words)
    except SystemExit as exc:  # --help, --version, or a bad argument (already printed)
        return exc.code if isinstance(exc.code, int) else 2
    if not getattr(args, "func", None):
        print(
            f"prunecheck: no command given; commands: {', '.join(COMMANDS)}. Hint: run "
            "'prunecheck --help' for what each does, or 'prunecheck COMMAND --help'.",
            file=sys.stderr,
        )
        return 2
    from prunecheck.sim.support.environment import check_environment

    try:  # every documented environment variable is validated like a flag
        check_environment()
    except PrunecheckError as exc:
        _say(args.command, exc.paragraph())
        return 2
    bounded = getattr(args, "bounds_calls", False) and getattr(args, "time_limit", None)
    if bounded:  # a hung policy or runtime cannot outlast --time-limit
        from prunecheck.sim.subjects.cage import set_deadline

        set_deadline(time.monotonic() + float(args.time_limit))
    try:
        read_policy_argument(args)  # the policy argument, in whichever spelling it came
        if getattr(args, "json", False):  # the verdict as JSON on stdout, text on stderr
            from prunecheck.sim.cli.json_output import run_as_json

            status: int = run_as_json(args)
        else:
            status = args.func(args)
        sys.stdout.flush()
    except PrunecheckError as exc:
        _say(args.command, exc.paragraph())
        return 2
    except BrokenPipeError as exc:
        if not _stdout_broken():  # another pipe (not stdout): the machine's fault
            _say(
                args.command,
                f"a pipe closed while prunecheck was writing to it ({exc.strerror}). "
                "Hint: run the command again; if it happens again, report it.",
            )
            return 2
        # stdout's reader stopped reading (| head): quietly, with the status of a
        # tool a broken pipe ends (128 + SIGPIPE), as cat and grep do
        _drop_stdout()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        _say(args.command, "interrupted.")
        return 130
    except OSError as exc:  # the machine's fault, not the input's: one paragraph still
        _say(args.command, _os_paragraph(exc))
        if exc.errno in (errno.ENOSPC, errno.EIO, errno.EDQUOT):
            _drop_stdout()
        return 2
    finally:
        if bounded:
            set_deadline(None)
    return status


def _os_paragraph(exc: OSError) -> str:
    """An operating-system failure as one paragraph (what, why, what to do)."""
    what = f"{exc.filename}" if exc.filename else "standard output"
    why = exc.strerror or type(exc).__name__
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        hint = (
            "free some space (or write elsewhere) and run the command again; finished "
            "results were kept."
            if exc.filename
            else "send the output where there is room (or to a terminal)."
        )
    else:
        hint = "check the path, its permissions and the device, then run the command again."
    return f"{what} cannot be written: {why}. Hint: {hint}"


if __name__ == "__main__":
    sys.exit(main())

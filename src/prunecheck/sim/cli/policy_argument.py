"""The policy argument: one form in every command, one spelling per kind.

Every command that runs a policy takes it the same way, as the positional
``POLICY`` (``prunecheck check recency``, ``prunecheck search recency``,
``prunecheck replay TRACE recency``, ``prunecheck sweep --out F recency
lowest_salience``), and every kind of policy has one spelling, a spec
(:mod:`prunecheck.sim.subjects.policy_spec` parses it):

=========================  ============================================
kind                       spec
=========================  ============================================
built-in policy            ``NAME``
select policy              ``module:attr``, ``path/to/file.py:attr``
list function              ``file.py:attr@openai``, ``…@anthropic``
framework trimmer          ``ADAPTER:key=value,...``
runtime under test         ``runtime:FILE.py:CLASS``, ``runtime:module:CLASS``
prunecheck's guard runtime ``runtime:guard:POLICY``
the model runtime          ``runtime:model:POLICY``
agent loop (issue 21)      ``loop:FILE.py:ATTR``, ``loop:FRAMEWORK:FILE.py:ATTR``
black-box agent (issue 35) ``loop:process:MANIFEST.toml`` (any language, a subprocess)
=========================  ============================================

The older spellings (``--policy SPEC``, ``--runtime X``, ``check --langchain
S``, ``--format F`` beside a spec) keep working until :data:`REMOVED_IN`;
each prints one ``DeprecationWarning:`` line on stderr naming the new
spelling (:func:`deprecated`).  :func:`add_policy_argument` adds the
argument and its old spellings to a parser; :func:`read_policy_argument` (run by
:func:`prunecheck.sim.cli.app.main` before a command executes) reads them
into ``args.policy``, the canonical spec, once.

Examples
--------
>>> print(spelling_table())
  built-in policy             NAME                      lowest_salience
  select policy               module:attr, file.py:attr mypkg.trim:select
  list function               file.py:attr@openai       my_trim.py:trim@anthropic
  framework trimmer           ADAPTER:key=value,...     langchain:strategy=last
  runtime under test          runtime:FILE.py:CLASS     runtime:loop.py:MyLoop
  prunecheck's guard runtime  runtime:guard:POLICY      runtime:guard:lowest_salience
  the model runtime           runtime:model:POLICY      runtime:model:recency
  agent loop                  loop:FILE.py:ATTR         loop:my_app/agent.py:agent
  black-box agent             loop:process:FILE.toml    loop:process:bot/agent.toml
"""

from __future__ import annotations

import argparse
import shlex
import sys
from dataclasses import dataclass

from prunecheck._deprecated import SPELLING, RemovedIn040Warning
from prunecheck.model.errors import ConfigError
from prunecheck.sim.subjects.policy_spec import RUNTIME_PREFIX, with_format

__all__ = [
    "REMOVED_IN",
    "SPELLINGS",
    "Spelling",
    "add_policy_argument",
    "deprecated",
    "read_policy_argument",
    "spelling_table",
]

#: The release in which the deprecated spellings go.
REMOVED_IN: str = RemovedIn040Warning.release


@dataclass(frozen=True, slots=True)
class Spelling:
    """One kind of policy spec and its one spelling.

    Attributes
    ----------
    kind : str
        What the spec names.
    spec : str
        How it is written.
    example : str
        A spec of that kind.
    """

    kind: str
    spec: str
    example: str


#: Every kind of policy spec, with its one spelling (``prunecheck policies``
#: and every command's ``--help`` show this table).
SPELLINGS: tuple[Spelling, ...] = (
    Spelling("built-in policy", "NAME", "lowest_salience"),
    Spelling("select policy", "module:attr, file.py:attr", "mypkg.trim:select"),
    Spelling("list function", "file.py:attr@openai", "my_trim.py:trim@anthropic"),
    Spelling("framework trimmer", "ADAPTER:key=value,...", "langchain:strategy=last"),
    Spelling("runtime under test", "runtime:FILE.py:CLASS", "runtime:loop.py:MyLoop"),
    Spelling("prunecheck's guard runtime", "runtime:guard:POLICY", "runtime:guard:lowest_salience"),
    Spelling("the model runtime", "runtime:model:POLICY", "runtime:model:recency"),
    Spelling("agent loop", "loop:FILE.py:ATTR", "loop:my_app/agent.py:agent"),
    Spelling("black-box agent", "loop:process:FILE.toml", "loop:process:bot/agent.toml"),
)

#: The commands whose ``--format`` is a second spelling of a spec's ``@FORMAT``
#: (in ``sweep`` and ``report`` it applies to every policy given, a setting).
_FORMAT_IS_A_SPELLING = frozenset({"check", "search", "explore", "baseline", "regress"})

_RESOLVED = "_policy_resolved"
_REQUIRED = "_policy_required"


def spelling_table(indent: str = "  ") -> str:
    """The table of :data:`SPELLINGS`, one kind a line."""
    kind = max(len(s.kind) for s in SPELLINGS)
    spec = max(len(s.spec) for s in SPELLINGS)
    return "\n".join(f"{indent}{s.kind:<{kind}}  {s.spec:<{spec}} {s.example}" for s in SPELLINGS)


def deprecated(command: str, old: str, new: str) -> None:
    """Print the one-line notice of a deprecated spelling on stderr (its
    text is :data:`prunecheck._deprecated.SPELLING`).

    Parameters
    ----------
    command : str
        The command it was given to.
    old : str
        What was written.
    new : str
        What to write instead.

    Examples
    --------
    >>> import contextlib, io
    >>> err = io.StringIO()
    >>> with contextlib.redirect_stderr(err):
    ...     deprecated("search", "--policy recency", "recency (the POLICY argument)")
    >>> print(err.getvalue(), end="")  # doctest: +NORMALIZE_WHITESPACE
    DeprecationWarning: prunecheck search: --policy recency is deprecated and goes in
    0.4.0; write recency (the POLICY argument) instead.
    """
    warning = SPELLING.format(command=command, old=old, new=new)
    print(f"DeprecationWarning: {warning}", file=sys.stderr)


def add_policy_argument(
    parser: argparse.ArgumentParser,
    *,
    many: bool = False,
    required: bool = False,
    help: str | None = None,
    runtime_option: bool = False,
    langchain_option: bool = False,
) -> None:
    """Add ``POLICY`` (``args.policy``) and its deprecated spellings.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The command's parser.
    many : bool
        Whether the command takes several policies (``POLICY ...``; then
        ``args.policy`` is a list, possibly empty).
    required : bool
        Whether the command needs a policy (:func:`read_policy_argument` says so
        when none is given in any form).
    help : str or None
        The help of ``POLICY`` (default: what a spec may be).
    runtime_option : bool
        Whether the deprecated ``--runtime X`` (``runtime:X``) is accepted.
    langchain_option : bool
        Whether the deprecated ``--langchain S`` (``langchain:S``) is accepted.
    """
    text = help or (
        "the policy spec: NAME, module:attr, file.py:attr, file.py:attr@openai, "
        "ADAPTER:key=value,..., runtime:FILE.py:CLASS, runtime:guard:POLICY "
        "('prunecheck policies' lists every kind)"
    )
    parser.add_argument(
        "policy",
        nargs="*" if many else "?",
        default=[] if many else None,
        metavar="POLICY",
        help=text,
    )
    parser.add_argument(
        "--policy",
        dest="policy_option",
        action="append" if many else "store",
        default=None,
        metavar="SPEC",
        help=f"deprecated (goes in {REMOVED_IN}): give the spec as POLICY",
    )
    if runtime_option:
        parser.add_argument(
            "--runtime",
            dest="runtime_option",
            default=None,
            metavar="FILE.py:CLASS",
            help=f"deprecated (goes in {REMOVED_IN}): give POLICY runtime:FILE.py:CLASS "
            "(or runtime:guard:POLICY)",
        )
    if langchain_option:
        parser.add_argument(
            "--langchain",
            dest="langchain_option",
            default=None,
            metavar="SETTINGS",
            help=f"deprecated (goes in {REMOVED_IN}): give POLICY langchain:SETTINGS",
        )
    parser.set_defaults(**{_RESOLVED: False, _REQUIRED: required})


def read_policy_argument(args: argparse.Namespace) -> None:
    """Read the policy argument into ``args.policy``, the canonical spec (a
    list of them for a command of many; None or [] when none was given),
    printing one notice for each deprecated spelling used.  Idempotent; a
    namespace without the argument is left as it is.

    Raises
    ------
    ConfigError
        if the policy is given in two forms at once, or not at all to a
        command that needs one.
    """
    if getattr(args, _RESOLVED, True):
        return
    setattr(args, _RESOLVED, True)
    command = str(getattr(args, "command", None) or "")
    option = getattr(args, "policy_option", None)
    runtime = getattr(args, "runtime_option", None)
    langchain = getattr(args, "langchain_option", None)
    if isinstance(args.policy, list):
        _resolve_many(args, command, option)
        return
    forms = [
        (name, value)
        for name, value in (
            ("POLICY", args.policy),
            ("--policy", option),
            ("--runtime", runtime),
            ("--langchain", langchain),
        )
        if value is not None
    ]
    if len(forms) > 1:
        if forms[1][0] == "--langchain":  # the message 0.2 gave, kept
            raise ConfigError(
                "--langchain",
                "checks LangChain's trimmer; it takes no POLICY.",
                "drop POLICY or drop --langchain.",
            )
        given = " and ".join(f"{name} {value!r}" for name, value in forms)
        raise ConfigError(
            "POLICY",
            f"is given twice: as {given}.",
            "give it once, as POLICY (--policy, --runtime and --langchain are deprecated).",
        )
    if option is not None:
        deprecated(command, f"--policy {_quote(option)}", f"{_quote(option)} (the POLICY argument)")
        args.policy = option
    elif runtime is not None:
        spec = RUNTIME_PREFIX + runtime
        deprecated(command, f"--runtime {_quote(runtime)}", f"the policy spec {_quote(spec)}")
        args.policy = spec
    elif langchain is not None:
        spec = f"langchain:{langchain}"
        deprecated(command, f"--langchain {_quote(langchain)}", f"the policy spec {_quote(spec)}")
        args.policy = spec
    if args.policy is None and getattr(args, _REQUIRED, False):
        raise ConfigError(
            "POLICY",
            "is missing.",
            f"give a policy spec, e.g. 'prunecheck {command} lowest_salience'; "
            "'prunecheck policies' lists every kind.",
        )
    fmt = getattr(args, "format", None)
    if fmt and command in _FORMAT_IS_A_SPELLING:
        where = with_format(args.policy, fmt) if args.policy else f"file.py:attr@{fmt}"
        deprecated(command, f"--format {fmt}", f"the spec ending in @{fmt} ({_quote(where)})")


def _resolve_many(args: argparse.Namespace, command: str, option: list[str] | None) -> None:
    if option and args.policy:
        raise ConfigError(
            "POLICY",
            f"is given in two forms: as {' '.join(args.policy)!r} and as --policy "
            f"{' --policy '.join(option)!r}.",
            "give every policy as POLICY (--policy is deprecated).",
        )
    if option:
        specs = " ".join(_quote(s) for s in option)
        deprecated(
            command,
            " ".join(f"--policy {_quote(s)}" for s in option),
            f"{specs} (POLICY arguments)",
        )
        args.policy = list(option)


def _quote(text: str) -> str:
    return shlex.quote(text)

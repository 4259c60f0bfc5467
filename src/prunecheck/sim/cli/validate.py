"""``prunecheck validate``: the tool pairing errors a provider would answer.

Reads a request body or a bare message list as JSON and prints, one per
line, the HTTP 400 texts the provider would send for it.  Exit 0 when the
tool pairing is clean, 1 when the provider would reject it, 2 on bad input.
"""

from __future__ import annotations

import argparse
import errno
import json
import sys

from prunecheck.model.errors import TranscriptError
from prunecheck.model.provider import PROVIDERS, Provider, ProviderError, validate
from prunecheck.sim.api.documents import document
from prunecheck.sim.api.strict import UNVERIFIED, other_format, shape_errors
from prunecheck.sim.cli.commands import SUMMARIES
from prunecheck.sim.cli.json_output import add_json_argument, record
from prunecheck.sim.support.inputs import read_input

__all__ = ["execute", "register"]

_EPILOG = """\
examples:
  prunecheck validate request.json --format anthropic
  cat messages.json | prunecheck validate - --format openai

FILE holds a request body ({"messages": [...]}, for Anthropic with an optional
"system") or a bare list of messages.  Each error prints as the provider sends
it, e.g.
  HTTP 400 (openai): Invalid parameter: messages with role 'tool' must be a \
response to a preceeding message with 'tool_calls'.
The provider answers only the first error; the others surface once it is fixed.
exit status: 0 clean, 1 the provider would reject the request, 2 bad input.
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``validate`` subcommand."""
    parser = subparsers.add_parser(
        "validate",
        help=SUMMARIES["validate"],
        description=(
            "Check a transcript's tool pairing the way a provider does (anthropic,\n"
            "openai, openai-responses, gemini, bedrock, mistral, deepseek), and print\n"
            "the exact errors the provider would answer."
        ),
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", metavar="FILE", help="JSON transcript; '-' reads stdin")
    parser.add_argument(
        "--format",
        required=True,
        choices=[p.value for p in Provider],
        help="the provider whose rules and error texts apply",
    )
    add_json_argument(parser)
    parser.set_defaults(func=execute)


def execute(args: argparse.Namespace) -> int:
    """Validate ``args.file`` for ``args.format``; return the exit status."""
    provider = Provider(args.format)
    name = "<stdin>" if args.file == "-" else str(args.file)
    payload = _load(args.file, name)
    other = other_format(payload, provider)
    if other is not None:
        theirs = "openai" if provider is Provider.ANTHROPIC else "anthropic"
        labels = {Provider.OPENAI: "an OpenAI", Provider.ANTHROPIC: "an Anthropic"}
        label = labels.get(provider, f"a {PROVIDERS[provider].title}")
        raise TranscriptError(
            name, f"is not {label} transcript: {other}.", f"validate it with --format {theirs}."
        )
    pairing = validate(payload, provider, source=name)
    shape = shape_errors(payload, provider)
    errors = shape + pairing  # a provider checks the request's shape before pairing
    _record(args, payload, provider, name, errors)
    if not errors:
        field = PROVIDERS[provider].conversation  # messages, input or contents
        messages = payload.get(field) if isinstance(payload, dict) else payload
        count = len(messages) if isinstance(messages, list) else 0
        print(f"ok: {count} messages, no tool pairing errors ({provider})")
        return 0
    noun = "error" if len(errors) == 1 else "errors"
    what = "tool pairing" if not shape else "request"
    print(f"{name}: {len(errors)} {what} {noun} ({provider} reports only the first):")
    for error in errors:
        print(f"{error}{' (text unverified)' if error.kind in UNVERIFIED else ''}")
    return 1


def _stdin(name: str) -> str:
    """Standard input, all of it; a closed one is bad input, not a traceback."""
    stream = sys.stdin
    try:
        if stream is None or stream.closed:
            raise OSError(errno.EBADF, "closed")
        return stream.read()
    except (OSError, ValueError):
        raise TranscriptError(
            name,
            "cannot be read: standard input is closed (started with <&- or by a "
            "process that closed it).",
            "pipe the transcript in (prunecheck validate - < request.json), or pass its path.",
        ) from None


def _load(path: str, name: str) -> object:
    """Parse the file (or stdin) as JSON; bad input raises TranscriptError."""
    from prunecheck.model.trace import MAX_CHARS, MAX_DEPTH, depth_ok

    try:
        if path == "-":
            text = _stdin(name)
        else:
            text = read_input(path, "a transcript", name=name).decode("utf-8")
    except FileNotFoundError:
        raise TranscriptError(
            name, "does not exist.", "Check the path, or pass '-' to read stdin."
        ) from None
    except OSError as exc:
        raise TranscriptError(
            name, f"cannot be read: {exc.strerror}.", "Pass a readable JSON file."
        ) from None
    except UnicodeDecodeError as exc:
        raise TranscriptError(
            name, f"is not UTF-8 text (byte {exc.start}).", "Pass a JSON transcript."
        ) from None
    if len(text) > MAX_CHARS or not depth_ok(text, MAX_DEPTH):
        raise TranscriptError(
            name,
            f"is over {MAX_CHARS} characters or nests JSON deeper "
            f"than {MAX_DEPTH} levels; no provider accepts such a request.",
            "Pass the request body your runtime sends.",
        )
    try:
        return json.loads(text)
    except RecursionError:  # pragma: no cover - bounded by the depth check
        raise TranscriptError(name, "nests JSON too deeply.") from None
    except json.JSONDecodeError as exc:
        raise TranscriptError(
            name,
            f"is not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}.",
            "Pass a request body or a message list saved as JSON "
            "(trailing commas and comments are not JSON).",
        ) from None


def _record(
    args: argparse.Namespace,
    payload: object,
    provider: Provider,
    name: str,
    errors: list[ProviderError],
) -> None:
    """The --json document: the errors a provider would answer, first first."""
    messages = (
        payload.get(PROVIDERS[provider].conversation) if isinstance(payload, dict) else payload
    )
    status = 1 if errors else 0
    record(
        args,
        document(
            "validate",
            verdict="unsafe" if errors else "safe",
            exit_status=status,
            exercised={
                "messages": len(messages) if isinstance(messages, list) else 0,
                "errors": len(errors),
            },
            reproduction=None if args.file == "-" else name,
            details={
                "provider": str(provider),
                "file": name,
                "errors": [
                    {
                        "kind": e.kind,
                        "path": e.path,
                        "ids": list(e.ids),
                        "status": e.status,
                        "provider_text": e.text,
                        "unverified": e.kind in UNVERIFIED,
                    }
                    for e in errors
                ],
            },
        ),
    )

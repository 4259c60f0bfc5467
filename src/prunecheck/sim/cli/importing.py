"""prunecheck import LOG...: from a production log to a reproduction.

Reads the model requests your agent sent — raw request bodies (OpenAI Chat
Completions, OpenAI Responses, Anthropic Messages) as JSON lines or a folder
of files, OpenTelemetry GenAI spans, OpenInference spans (or Phoenix's span
export), a LangSmith run export, the Langfuse SDK's spans, MLflow traces or
the OpenAI Agents SDK's trace processor export — groups them by
conversation, diffs consecutive requests into events and says, for each
removal, whether the runtime took whole closed units or cut one, between
which two requests, and what the provider answered next.  Each
conversation becomes a trace whose replay reproduces the incident (its
removals replayed by the observed policy), written with the usual bundle
(narrative.md, request.json, test_reproduction.py).
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import Any

from prunecheck.model.errors import ConfigError
from prunecheck.model.incidents import Incident, IncidentKind
from prunecheck.model.provider import recognize, validate
from prunecheck.model.system import System, incidents_of
from prunecheck.sim.api.documents import document, first_violation, violation_json
from prunecheck.sim.cli.commands import SUMMARIES
from prunecheck.sim.cli.json_output import add_json_argument, record
from prunecheck.sim.cli.policy_options import add_policy_timeout
from prunecheck.sim.evidence.bundle import write_bundle
from prunecheck.sim.ingest.incident import Imported, import_conversation, stamp
from prunecheck.sim.ingest.reading import Log, read_log
from prunecheck.sim.ingest.records import Incomplete, LogFormat, LoggedRequest
from prunecheck.sim.ingest.recovery import is_responses_text
from prunecheck.sim.ingest.streams import shown
from prunecheck.sim.subjects.loader import load_system
from prunecheck.sim.support.outputs import check_bundle_folder, output_folder
from prunecheck.sim.support.progress import progress_for

__all__ = ["execute", "register"]

EXAMPLE = """\
the on-call workflow, on the committed example (docs/on-call.md):
  prunecheck import examples/incident/spans.otlp.jsonl --out incident/
  prunecheck replay incident/trace.json                # the incident, step by step
  prunecheck replay incident/trace.json --gate commit  # the same events, gated: clean
  prunecheck import examples/incident/spans.otlp.jsonl \\
      --policy examples/incident/trim.py:keep_last_units@openai   # your fix, same events

formats (--format, else told apart by their fields): openai-chat, openai-responses,
anthropic (raw bodies, bare or {"request": ..., "response": ..., "time": ...}); OTLP JSON
(the Collector's file exporter) or the OpenTelemetry SDK's span JSON, with
gen_ai.input.messages or OpenInference llm.input_messages.N.message.*; LangSmith runs.
Conversations: gen_ai.conversation.id, session.id, thread metadata, else the trace; or
--key FIELD (a dotted field of each record, or a span attribute).

exit status: 0 every conversation replays clean, 1 a violation (the incident reproduced;
with --policy: your policy still violates on the same events), 2 bad input.
"""

_FORMATS = [f.value for f in (LogFormat.OPENAI_CHAT, LogFormat.OPENAI_RESPONSES,
                              LogFormat.ANTHROPIC)]  # fmt: skip


def register(sub: Any) -> None:
    p = sub.add_parser(
        "import",
        help=SUMMARIES["import"],
        description=__doc__,
        epilog=EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("log", nargs="+", help="log files or folders (every file in a folder)")
    p.add_argument(
        "--out",
        type=Path,
        help="write the bundle here (one conversation), or one folder per conversation in it",
    )
    p.add_argument("--force", action="store_true", help="overwrite a bundle folder that has files")
    p.add_argument("--key", help="group requests by this field instead of the conversation id")
    p.add_argument("--conversation", help="import only this conversation")
    p.add_argument(
        "--format", choices=_FORMATS, help="the raw bodies' format, when their fields do not say"
    )
    p.add_argument(
        "--policy",
        help="also replay the same events under this policy (your fix) and exit with its verdict",
    )
    add_policy_timeout(p)
    add_json_argument(p)
    p.set_defaults(func=execute)


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.\-]+", "_", name).strip("._")[:60] or "conversation"


def _expected_kind(request: LoggedRequest) -> str | None:
    errors = validate(request.request_body(), request.provider, source="request")
    return errors[0].kind if errors else None


def _replayed(imported: Imported, rejected: LoggedRequest | None) -> tuple[list[Incident], str]:
    trace = imported.trace
    incidents = incidents_of(trace, load_system(trace.policy))
    violations = [i for i in incidents if i.is_violation]
    rejections = [i for i in incidents if i.kind is IncidentKind.PROVIDER_REJECTION]
    if not violations:
        line = "replay: no violation"
    else:
        kinds = ", ".join(dict.fromkeys(i.kind.label for i in violations))
        line = f"replay: {len(violations)} violation(s) ({kinds})"
    if rejected is not None:
        expected = _expected_kind(rejected)
        if rejections and expected == rejections[0].reason:
            responses = rejected.format is LogFormat.OPENAI_RESPONSES or is_responses_text(
                rejected.rejection or ""
            )  # a Responses log replays in the Responses API's words, unless told apart too late
            words = (
                " (in Chat Completions' words)"
                if responses and not is_responses_text(rejections[0].text)
                else ""
            )
            line += f"; the replayed request is rejected as the logged one was{words}: " + (
                rejections[0].text
            )
        elif rejections:
            line += f"; the replay is rejected ({rejections[0].reason}), the log for {expected}"
        elif (known := recognize(rejected.rejection or "")) is not None:
            line += (
                f"; the logged rejection is not reproduced: its text is {known.id}'s, but the "
                "history the log shows breaks no rule (part of it is not in the log); the "
                "incident stands on the provider's words"
            )
        else:
            line += "; the logged rejection is not reproduced (its cause is not tool pairing)"
    return incidents, line


class _Reading:
    """The progress of the read: a bar of megabytes, advanced per MB."""

    def __init__(self, bar: Any) -> None:
        self.bar = bar
        self.tell: Callable[[int], None] | None = None
        self.last = -1

    def __call__(self, done: int, total: int) -> None:
        if self.tell is None:
            megabytes = max(1, total // 2**20)
            self.bar.start(megabytes, "MB")
            self.tell = self.bar.runs(megabytes) or (lambda _: None)
        if done // 2**20 != self.last:
            self.last = done // 2**20
            self.tell(self.last)


def execute(args: argparse.Namespace) -> int:
    hint = LogFormat(args.format) if args.format else None
    paths = [Path(p) for p in args.log]
    bar = progress_for(command="import")
    with closing(bar):
        log = read_log(paths, key=args.key, hint=hint, progress=_Reading(bar))
    names = list(log.conversations)
    if args.conversation is not None:
        if args.conversation not in log.conversations and args.conversation not in log.incomplete:
            raise ConfigError(
                f"--conversation {args.conversation}",
                "is not a conversation of the log.",
                f"the log holds: {', '.join(names[:8])}{' …' if len(names) > 8 else ''}.",
            )
        names = [args.conversation] if args.conversation in log.conversations else []
    args.out_shown = args.out  # what the user wrote: how the output names it
    if args.out is not None:  # resolved and refused (a device, a FIFO) before any work
        args.out = output_folder(args.out)
        check_bundle_folder(args.out, force=args.force)
    fix = load_system(args.policy, args.policy_timeout) if args.policy else None
    status, fix_bad = 0, False
    found: list[dict[str, Any]] = []  # one entry per conversation, for --json
    for name, partial in log.incomplete.items():
        if name not in log.conversations and args.conversation in (None, name):
            print(f"conversation {name}: no request could be read ({len(partial)} incomplete)")
            status = max(status, _print_incomplete(partial, []))
            found.append(_unread_entry(name, partial))

    source = ", ".join(shown(p) for p in paths)
    firsts: list[Incident] = []
    bar = progress_for(command="import")
    bar.start(len(names))
    with closing(bar):
        for name in names:
            bar.step(f"conversation {name}")
            entry, incidents = _one(args, log, name, source, fix, len(names) == 1)
            status = 1 if any(i.is_violation for i in incidents) else status
            status = max(status, int(entry.pop("rejected_incomplete")))
            fix_bad = fix_bad or entry["fix_holds"] is False
            first = first_violation(incidents)
            firsts.extend([first] if first is not None else [])
            found.append(entry)
    if log.unrelated:
        print(f"({log.unrelated} span(s) or run(s) record no model call: left out)")
    for note in log.notes:
        print(f"?? the log cannot tell: {note}")
    unread = sum(len(v) for v in log.incomplete.values())
    if unread:
        total = sum(len(v) for v in log.conversations.values()) + unread
        print(
            f"(the log holds {total} request(s), {unread} of them incomplete: named above, "
            "not diffed)"
        )
    result = int(fix_bad) if fix is not None else status
    lead = next((e for e in found if e["first_violation"] is not None), None)
    record(
        args,
        document(
            "import",
            policy=args.policy,
            # nothing read in full: no removal was exercised (the incomplete ones are named)
            verdict="unsafe"
            if result
            else "safe"
            if any(e["events"] for e in found)
            else "vacuous",
            exit_status=result,
            exercised={
                "conversations": len(found),
                "requests": sum(e["requests"] for e in found),
                "incomplete": sum(len(e["incomplete"]) for e in found),
                "events": sum(e["events"] for e in found),
            },
            first=firsts[0] if firsts else None,
            reproduction=None if lead is None else lead["bundle"],
            details={
                "log": [shown(p) for p in paths],
                "conversations": found,
                "could_not_see": {
                    "notes": list(log.notes),
                    "unrelated": log.unrelated,
                    "duplicates": log.duplicates,
                },
            },
        ),
    )
    return result


def _one(
    args: argparse.Namespace,
    log: Log,
    name: str,
    source: str,
    fix: System[Any] | None,
    alone: bool,
) -> tuple[dict[str, Any], list[Incident]]:
    """Import, replay and print conversation ``name`` of ``log``: its --json
    entry and the replay's incidents."""
    requests = log.conversations[name]
    imported = import_conversation(name, requests, source=source, ran=log.ran.get(name))
    imported.gaps[:0] = log.gaps.get(name, [])
    trace = imported.trace
    meta = dict(trace.meta)
    meta["imported"] = {**meta["imported"], "gaps": list(imported.gaps)}
    trace = replace(trace, meta=meta)
    imported.trace = trace
    rejected = next((r for r in requests if r.rejection is not None), None)
    incidents, verdict = _replayed(imported, rejected)
    # a logged 400 in a rule's own words that the log's history cannot show is
    # still the incident: never exit 0 on it
    stands = (
        rejected is not None
        and recognize(rejected.rejection or "") is not None
        and not any(i.is_violation for i in incidents)
    )
    partial = log.incomplete.get(name, [])
    total = imported.requests + len(partial)
    counted = f"{total} request(s)" + (f" ({len(partial)} incomplete)" if partial else "")
    print(
        f"conversation {name}: {imported.imported} of {counted}, "
        f"{len(trace.events)} events ({requests[0].format}, provider {trace.config.provider})"
    )
    for finding in imported.findings:
        print(f"  {'!!' if finding.bad else '- '} {finding.text}")
    rejected_partial = _print_incomplete(partial, requests)
    for gap in imported.gaps[len(log.gaps.get(name, [])) :]:
        print(f"  ?? the log cannot tell: {gap}")
    if rejected_partial and rejected is None:
        verdict += " in what the log shows; the rejected request is incomplete (above)"
    print(f"  {verdict}")
    first = first_violation(incidents)
    entry: dict[str, Any] = {
        "conversation": name,
        "requests": total,
        "imported": imported.imported,
        "incomplete": [_incomplete_json(i, requests) for i in partial],
        "rejected_incomplete": rejected_partial or stands,
        "events": len(trace.events),
        "violations": sum(1 for i in incidents if i.is_violation),
        "first_violation": None if first is None else violation_json(first),
        "gaps": list(imported.gaps),
        "bundle": None,
        "fix_holds": None,
    }
    if args.out is not None:
        folder = args.out if alone else args.out / _slug(name)
        shown = args.out_shown if alone else args.out_shown / _slug(name)
        entry["bundle"] = str(shown)
        write_bundle(trace, folder, force=True)
        print(f"  bundle: {shown}/ (trace.json, narrative.md, request.json, …)")
        print(f"  next: prunecheck replay {shown / 'trace.json'}")
    if fix is not None:
        fixed = replace(trace, policy=args.policy)
        bad = [i for i in incidents_of(fixed, fix) if i.is_violation]
        entry["fix_holds"] = not bad
        if bad:
            print(
                f"  with {args.policy}: still {len(bad)} violation(s) on the same events, "
                f"the first {bad[0].kind.label} at step {bad[0].step + 1}: {bad[0].detail}"
            )
        else:
            print(f"  with {args.policy}: no violation on the same events (the fix holds)")
    return entry, incidents


def _placed(request: Incomplete, requests: list[LoggedRequest]) -> str:
    """Where an incomplete request falls among the conversation's others."""
    if request.at is None:
        return f"a request ({request.source})"
    before = sum(1 for r in requests if r.at is not None and r.at <= request.at)
    if not requests:
        where = ""
    elif before == 0:
        where = ", before request 1"
    elif before == len(requests):
        where = f", after request {before}"
    else:
        where = f", between request {before} and {before + 1}"
    return f"a request at {stamp(request.at)}{where} ({request.source})"


def _print_incomplete(partial: list[Incomplete], requests: list[LoggedRequest]) -> int:
    """Name each incomplete request; 1 if one of them was rejected (the log
    holds the incident even though the trace cannot show it)."""
    status = 0
    for request in partial:
        known = f"; known: {request.known}" if request.known else ""
        print(f"  ?? incomplete: {_placed(request, requests)}: {request.reason}{known}")
        if request.rejection is not None:
            code = f"HTTP {request.status}" if request.status else "an error"
            print(
                f"  !! {_placed(request, requests)} was rejected with {code}: "
                f"{request.rejection} — its messages cannot be read, so the trace cannot "
                "show what the provider refused; the incident stands"
            )
            status = 1
    return status


def _incomplete_json(request: Incomplete, requests: list[LoggedRequest]) -> dict[str, Any]:
    return {
        "at": stamp(request.at) if request.at is not None else None,
        "where": _placed(request, requests),
        "source": str(request.source),
        "reason": request.reason,
        "known": request.known,
        "rejection": request.rejection,
        "status": request.status,
    }


def _unread_entry(name: str, partial: list[Incomplete]) -> dict[str, Any]:
    """The --json entry of a conversation none of whose requests could be read."""
    return {
        "conversation": name,
        "requests": len(partial),
        "imported": 0,
        "incomplete": [_incomplete_json(i, []) for i in partial],
        "events": 0,
        "violations": 0,
        "first_violation": None,
        "gaps": [],
        "bundle": None,
        "fix_holds": None,
    }

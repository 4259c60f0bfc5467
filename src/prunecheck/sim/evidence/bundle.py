"""Reproduction bundles: everything a bug report or a regression test needs,
written to one folder.

* ``trace.json`` — the trace (:func:`prunecheck.model.trace.dumps`);
* ``test_reproduction.py`` — a standalone pytest file that replays it and
  fails while the configuration is unsafe; ``PRUNECHECK_GATE=commit pytest
  test_reproduction.py`` replays it under the commit gate, where it passes;
* ``narrative.md`` — the verdict, how to replay, what the provider answers,
  then every step (the prune, the unit it split, the incidents);
* ``timeline.png`` — messages as lanes over steps (:mod:`.timeline`), when
  matplotlib is installed (``prunecheck[report]``; the narrative says so
  when it is not);
* ``index.html`` — the same as a self-contained page: the steps, the
  context after each, the prune, the request and the provider's answer
  (:mod:`.page`);
* ``request.json`` — the exact request body the provider rejects: the
  context at the rejected invocation (or, if none was rejected, at the last
  invocation, or the body the next invocation would send — the narrative
  says which);
* a copy of the policy's file, when the policy is a user's file: the trace
  names the copy, so the bundle replays where it lives (its own folder).
  Modules the policy imports from beside it are not copied.

A bundle never silently replaces another: :func:`write_bundle` refuses a
folder that holds files unless ``force`` is given, and holds the folder's
lock while writing.
"""

from __future__ import annotations

import importlib.util
import json
import shlex
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from prunecheck.model.errors import PrunecheckError
from prunecheck.model.events import Invoke
from prunecheck.model.gates import Gate
from prunecheck.model.incidents import Incident, IncidentKind
from prunecheck.model.provider import ProviderError, validate
from prunecheck.model.state import CounterName
from prunecheck.model.system import RequestBody, System, incidents_of, replay
from prunecheck.model.trace import Trace, TraceStep, dumps
from prunecheck.sim.evidence.narrative import narrate
from prunecheck.sim.evidence.page import bundle_page
from prunecheck.sim.evidence.timeline import draw_timeline
from prunecheck.sim.subjects.loader import load_system
from prunecheck.sim.subjects.policy_spec import SpecKind, parse_spec_or_none, user_code_of
from prunecheck.sim.support.extras import missing_paragraph
from prunecheck.sim.support.ledger import locked_folder
from prunecheck.sim.support.outputs import check_bundle_folder, make_folder, write_text

__all__ = [
    "BUNDLE_FILES",
    "Request",
    "policy_file",
    "replay_command",
    "runtime_file",
    "spec_is_data",
    "write_bundle",
]

BUNDLE_FILES = (
    "trace.json",
    "test_reproduction.py",
    "narrative.md",
    "timeline.png",
    "request.json",
    "index.html",
)


@dataclass(frozen=True, slots=True)
class Request:
    """The request body a bundle shows, and where it comes from."""

    body: dict[str, object]
    step: int | None
    origin: str
    errors: tuple[ProviderError, ...]


def _errors(sent: RequestBody) -> tuple[ProviderError, ...]:
    return tuple(validate(dict(sent.body), sent.provider))


def _request(trace: Trace, system: System[Any]) -> tuple[Request, list[TraceStep]]:
    """Replay with notes; keep the body of the rejected (else last) invocation."""
    steps: list[TraceStep] = []
    rejected: Request | None = None
    last: Request | None = None
    state: object | None = None
    invocations = 0
    for item, state in replay(trace, system, record=True):
        steps.append(item)
        done = system.truth(state).count(CounterName.INVOCATIONS)
        if not isinstance(item.event, Invoke) or done == invocations:
            continue  # not an invocation, or a blocked one: nothing was sent
        invocations = done
        sent = system.request(state)
        body, errors = dict(sent.body), _errors(sent)
        if rejected is None and any(
            i.kind is IncidentKind.PROVIDER_REJECTION for i in item.result.incidents
        ):
            rejected = Request(body, item.index, "rejected", errors)
        last = Request(body, item.index, "last", errors)
    if rejected is not None:
        return rejected, steps
    if last is not None:
        return last, steps
    if state is None:
        return Request({}, None, "next", ()), steps
    final = system.request(state)
    return Request(dict(final.body), None, "next", _errors(final)), steps


def _answer(request: Request) -> str:
    if not request.errors:
        return "The provider would accept this body (HTTP 200)."
    lines = [f"The provider answers **HTTP {request.errors[0].status}**:", ""]
    lines.extend(f"    {e.text}" for e in request.errors)
    return "\n".join(lines)


def _origin(request: Request) -> str:
    if request.origin == "rejected":
        return (
            f"`request.json` is the exact body of the invocation at step "
            f"{request.step + 1 if request.step is not None else '?'}, which the provider "
            "rejected."
        )
    if request.origin == "last":
        return (
            f"No invocation in this trace was rejected; `request.json` is the body of the "
            f"last invocation (step {request.step + 1 if request.step is not None else '?'})."
        )
    return (
        "No invocation happened in this trace (it stops at the step of the violation); "
        "`request.json` is the body the next invocation would send."
    )


def _under_commit(trace: Trace, system: System[Any]) -> str:
    """What the same events do under the commit gate, checked now ('' for a
    runtime under test: its gate is its own code)."""
    if system.facts.own_gate:
        return ""
    safe = replace(trace, config=replace(trace.config, gate=Gate.COMMIT))
    try:
        bad = [i for i in incidents_of(safe, system) if i.is_violation]
    except PrunecheckError as exc:
        return f"cannot replay under the commit gate ({exc.paragraph()})"
    if bad:
        return (
            f"still FAILS under the commit gate: {len(bad)} violation(s), the first "
            f"{bad[0].kind.label}"
        )
    return "passes (checked when this bundle was written: no violation under the commit gate)"


def _commands(rows: list[tuple[str, str]]) -> list[str]:
    """Commands, indented, their comments in one column."""
    width = max(len(command) for command, _ in rows)
    return [
        f"    {command.ljust(width)}   # {note}" if note else f"    {command}"
        for command, note in rows
    ]


def _header(trace: Trace, incidents: list[Incident], request: Request, commit: str) -> list[str]:
    violations = [i for i in incidents if i.is_violation]
    title = trace.meta.get("title") or f"{trace.policy} under gate {trace.config.gate}"
    kinds = ", ".join(dict.fromkeys(i.kind.label for i in violations))
    lines = [f"# Reproduction: {title}", ""]
    if violations:
        first = violations[0]
        lines.append(
            f"**Verdict:** {len(violations)} violation(s) ({kinds}); the first at step "
            f"{first.step + 1}: {first.detail}."
        )
    else:
        lines.append("**Verdict:** no violation.")
    story = trace.meta.get("story")
    lines += [
        "",
        *([str(story), ""] if story else []),
        f"{len(trace.events)} events. Policy `{trace.policy}`, gate `{trace.config.gate}`.",
        "",
        "## Replay",
        "",
        "From this folder:",
        "",
        *_commands(
            [
                (replay_command(trace.policy), "this narrative, step by step"),
                *(
                    [
                        (
                            f"{replay_command(trace.policy)} --gate commit",
                            "the same events under the commit gate",
                        )
                    ]
                    if commit
                    else []
                ),
                ("pytest test_reproduction.py", "fails while the configuration is unsafe"),
                *([("PRUNECHECK_GATE=commit pytest test_reproduction.py", "")] if commit else []),
            ]
        ),
        "",
        (
            f"Under the commit gate the test {commit}."
            if commit
            else "The runtime under test is its own gate: --gate and PRUNECHECK_GATE do "
            "not change what it does; fix the runtime and the test passes."
        ),
        "",
        "## What the provider answers",
        "",
        _origin(request),
        "",
        _answer(request),
        "",
        "## Steps",
        "",
    ]
    return lines


_TEST = '''"""Reproduction of a context-pruning violation, written by prunecheck.

It replays the trace below and asserts that no violation happens, so it
FAILS on the configuration it was found on.  Point it at the commit gate
(set GATE below, or the environment variable) and it passes:

    pytest test_reproduction.py                          # fails
    PRUNECHECK_GATE=commit pytest test_reproduction.py   # passes

Needs prunecheck installed (pip install prunecheck).
"""

import os
from dataclasses import replace
from pathlib import Path

from prunecheck.model.gates import Gate
from prunecheck.model.trace import Trace, loads
from prunecheck.model.system import incidents_of
from prunecheck.sim.subjects.loader import load_system

# >>> Set to "commit" (or "spill") to replay under a safe gate; None keeps the
# >>> trace's own gate.  The environment variable PRUNECHECK_GATE wins.
GATE = None

TRACE = r\'\'\'
{trace}\'\'\'


def _trace() -> Trace:
    trace = loads(TRACE, "test_reproduction.py: TRACE")
    gate = os.environ.get("PRUNECHECK_GATE") or GATE
    if gate:
        try:
            chosen = Gate(gate)
        except ValueError:
            names = ", ".join(g.value for g in Gate)
            text = f"PRUNECHECK_GATE={{gate!r}} names no gate; use one of {{names}}."
            raise ValueError(text) from None
        trace = replace(trace, config=replace(trace.config, gate=chosen))
    return trace


def _spec(spec: str) -> str:
    """A policy (or runtime) file beside this test is found from any working directory."""
    prefix = "runtime:" if spec.startswith("runtime:") else ""
    head, colon, tail = spec[len(prefix):].rpartition(":")
    here = Path(__file__).resolve().parent / head
    found = colon and head.endswith(".py") and here.is_file()
    return f"{{prefix}}{{here}}:{{tail}}" if found else spec


def test_reproduction() -> None:
    trace = _trace()
    system = load_system(_spec(trace.policy))
    violations = [i for i in incidents_of(trace, system) if i.is_violation]
    assert not violations, "\\n".join(
        [f"{{len(violations)}} violation(s) under gate {{trace.config.gate}}:"]
        + [f"  step {{i.step + 1}}: {{i.kind.label}}: {{i.detail}}" for i in violations])
'''


def policy_file(spec: str) -> tuple[Path, str] | None:
    """``(file, rest)`` when ``spec`` names a user's file (``file.py:rest``), else None."""
    parsed = user_code_of(spec)
    if parsed is None or not parsed.is_file:
        return None
    return Path(parsed.where), parsed.tail[1:]


def runtime_file(spec: str) -> tuple[Path, str] | None:
    """``(file, CLASS)`` when ``spec`` is ``runtime:FILE.py:CLASS``, else None."""
    parsed = parse_spec_or_none(spec)
    if parsed is None or parsed.kind is not SpecKind.RUNTIME or not parsed.is_file:
        return None
    return Path(parsed.where), parsed.attr


def spec_is_data(spec: str) -> bool:
    """Whether a policy spec runs no user code: a built-in, or a framework
    adapter whose settings name no module or file (a framework spec names a
    library, not the user's code)."""
    parsed = parse_spec_or_none(spec)
    if parsed is None:
        return False
    if parsed.kind in (SpecKind.BUILTIN, SpecKind.OBSERVED):
        return True
    return parsed.kind is SpecKind.FRAMEWORK and ":" not in parsed.settings


def replay_command(spec: str, trace: str = "trace.json", *, folder: Path | None = None) -> str:
    """The command that replays a bundle's trace, as it runs from where it is
    printed: a policy that is code (a user's file or module, a runtime) is
    named on the command line (replay never imports a trace's code unasked);
    a built-in or a framework spec replays as the trace names it.  A
    relative file lives in the bundle: run from elsewhere, pass the bundle's
    ``folder`` so that the command names it from there."""
    if spec_is_data(spec):
        return f"prunecheck replay {shlex.quote(trace)}"
    found = policy_file(spec)
    ran = runtime_file(spec)
    if found is not None and folder is not None and not found[0].is_absolute():
        spec = f"{folder / found[0]}:{found[1]}"
    elif ran is not None and folder is not None and not ran[0].is_absolute():
        spec = f"runtime:{folder / ran[0]}:{ran[1]}"
    return f"prunecheck replay {shlex.quote(trace)} {shlex.quote(spec)}"


def _with_policy_copy(trace: Trace, out_dir: Path) -> Trace:
    """Copy a user's policy (or runtime) file into the bundle; the trace then
    names the copy, so the bundle's commands run wherever it is."""
    found = policy_file(trace.policy)
    prefix = ""
    if found is None:
        found, prefix = runtime_file(trace.policy), "runtime:"
    if found is None or not found[0].is_file():
        return trace
    source, rest = found
    write_text(out_dir / source.name, source.read_bytes(), private=True)
    return replace(
        trace,
        policy=f"{prefix}{source.name}:{rest}",
        meta={**trace.meta, "policy_origin": str(source.resolve())},
    )


def write_bundle(
    trace: Trace, out_dir: Path, *, system: System[Any] | None = None, force: bool = False
) -> Path:
    """Write the reproduction bundle of ``trace`` into ``out_dir`` (created
    if missing) and return ``out_dir``.  A folder that holds files is
    refused (ConfigError) unless ``force``.

    Parameters
    ----------
    trace:
        The counterexample (a search's or explorer's shrunk trace).
    out_dir:
        The bundle folder.
    system:
        The system to replay with (the model runtime with the loaded policy,
        or the runtime under test); loaded from ``trace.policy`` if None.
    force:
        Overwrite a folder that holds files.
    """
    check_bundle_folder(out_dir, force=force)
    make_folder(out_dir, private=True)  # conversation content: its owner's only
    with locked_folder(out_dir, "bundle"):
        return _write(trace, out_dir, system if system is not None else load_system(trace.policy))


def _write(trace: Trace, out_dir: Path, system: System[Any]) -> Path:
    trace = _with_policy_copy(trace, out_dir)
    text = dumps(trace)
    write_text(out_dir / "trace.json", text, private=True)
    if "'''" in text:
        raise ValueError("a trace with ''' in it cannot be embedded")  # pragma: no cover
    write_text(out_dir / "test_reproduction.py", _TEST.format(trace=text), private=True)
    request, steps = _request(trace, system)
    write_text(  # a lone surrogate (half an emoji) is written as its escape
        out_dir / "request.json",
        json.dumps(request.body, indent=2, sort_keys=False, ensure_ascii=False) + "\n",
        private=True,
    )
    story = narrate(trace, steps, markdown=True)
    head = _header(trace, story.incidents, request, _under_commit(trace, system))
    lines = head + story.lines
    plots = importlib.util.find_spec("matplotlib") is not None
    if not plots:  # the base or harness install: the plots are the report extra
        lines += ["", missing_paragraph("timeline.png (not drawn)", "matplotlib")]
    write_text(out_dir / "narrative.md", "\n".join(lines) + "\n", private=True)
    if plots:
        draw_timeline(trace, system, out_dir / "timeline.png")
    page = bundle_page(
        trace,
        system,
        steps,
        header=head,
        body=request.body,
        errors=request.errors,
        origin=_origin(request),
        timeline=plots,
    )
    write_text(out_dir / "index.html", page, private=True)
    return out_dir

"""Traces: a seed, a configuration and a list of events — replayable,
engine-independent, versioned JSON.

A trace names its policy by spec (``lowest_salience``, ``pkg.mod:attr``,
``path/to/file.py:attr``); resolving the spec to code is the shell's job
(:mod:`prunecheck.sim.subjects.loader`), so this module stays pure.  A trace
replays with :func:`prunecheck.model.system.replay`, by any subject.

JSON form (version 1; version 2 is the same with server-side events —
a chained ``invoke``, ``compaction``, ``clear_tool_uses`` — which a reader
of version 1 does not know, so a trace is written as version 2 only when
it holds one, and every trace without them stays byte-identical)::

    {"format": "prunecheck-trace", "version": 1, "seed": 0,
     "policy": "lowest_salience", "config": {...RuntimeConfig...},
     "events": [{"kind": "user", "tokens": 300}, ...],
     "times": [0.0, 1.5, ...],            # optional, one per event
     "meta": {...}}                       # optional, free-form
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .config import RuntimeConfig
from .errors import ConfigError, TraceError
from .events import ClearToolUses, Compaction, Event, Invoke, event_from_json, event_to_json
from .state import StepResult

__all__ = [
    "FORMAT",
    "MAX_CHARS",
    "MAX_DEPTH",
    "SERVER_VERSION",
    "VERSION",
    "VERSIONS",
    "Trace",
    "TraceStep",
    "depth_ok",
    "dumps",
    "has_server_events",
    "loads",
    "trace_from_json",
    "trace_to_json",
]

FORMAT = "prunecheck-trace"
#: The version of a trace without server-side events.
VERSION = 1
#: The version of a trace that holds server-side events.
SERVER_VERSION = 2
#: The versions this prunecheck reads.
VERSIONS = (VERSION, SERVER_VERSION)


def has_server_events(events: Sequence[Event]) -> bool:
    """Whether a trace holds a server-side event (written as version 2).

    >>> has_server_events([Invoke()]), has_server_events([Invoke(chained=True)])
    (False, True)
    """
    return any(
        isinstance(e, Compaction | ClearToolUses) or (isinstance(e, Invoke) and e.chained)
        for e in events
    )


@dataclass(frozen=True, slots=True)
class Trace:
    policy: str
    config: RuntimeConfig
    events: tuple[Event, ...]
    seed: int = 0
    times: tuple[float, ...] | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def with_events(self, events: Sequence[Event]) -> Trace:
        return replace(self, events=tuple(events), times=None, meta=dict(self.meta))


@dataclass(frozen=True, slots=True)
class TraceStep:
    index: int
    event: Event
    at: float
    result: StepResult


def trace_to_json(trace: Trace) -> dict[str, Any]:
    out: dict[str, Any] = {
        "format": FORMAT,
        "version": SERVER_VERSION if has_server_events(trace.events) else VERSION,
        "seed": trace.seed,
        "policy": trace.policy,
        "config": trace.config.to_json(),
        "events": [event_to_json(e) for e in trace.events],
    }
    if trace.times is not None:
        out["times"] = list(trace.times)
    if trace.meta:
        out["meta"] = trace.meta
    return out


def dumps(trace: Trace) -> str:
    """Deterministic text: one event per line, so diffs read well."""
    data = trace_to_json(trace)
    events = data.pop("events")
    times = data.pop("times", None)
    meta = data.pop("meta", None)
    lines = ["{"]
    for key, value in data.items():
        lines.append(f"  {json.dumps(key)}: {json.dumps(value, sort_keys=True)},")
    if meta is not None:
        lines.append(f'  "meta": {json.dumps(meta, sort_keys=True)},')
    if times is not None:
        lines.append(f'  "times": {json.dumps(times)},')
    lines.append('  "events": [')
    lines.extend(
        f"    {json.dumps(e)}{',' if i < len(events) - 1 else ''}" for i, e in enumerate(events)
    )
    lines.append("  ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


#: Deepest nesting a trace may have (prunecheck writes at most 4 levels).
MAX_DEPTH = 32
#: Largest trace text (characters) :func:`loads` parses.
MAX_CHARS = 512 * 2**20


_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def depth_ok(text: str, limit: int) -> bool:
    """Whether brackets outside strings nest at most ``limit`` deep.

    >>> depth_ok('{"a": [1, "[[["]}', 2), depth_ok("[[[]]]", 2)
    (True, False)
    """
    depth = 0
    for match in _TOKENS.finditer(text):
        ch = match.group()
        if ch in "[{":
            depth += 1
            if depth > limit:
                return False
        elif ch in "]}":
            depth -= 1
    return True


def loads(text: str, source: str = "trace") -> Trace:
    """Parse trace text; :class:`TraceError` naming ``source`` if malformed,
    too large or nested too deeply (never a RecursionError)."""
    if len(text) > MAX_CHARS:
        raise TraceError(
            source,
            f"is {len(text)} characters, over the limit of {MAX_CHARS}.",
            "a trace of that size is not one prunecheck wrote; split it.",
        )
    if not depth_ok(text, MAX_DEPTH):
        raise TraceError(
            source,
            f"nests JSON deeper than {MAX_DEPTH} levels.",
            "a trace is the flat JSON file prunecheck wrote.",
        )
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TraceError(
            source,
            f"is not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}).",
            "a trace is the JSON file prunecheck wrote.",
        ) from None
    except RecursionError:  # pragma: no cover - the depth check comes first
        raise TraceError(source, "nests JSON too deeply.") from None
    try:
        return trace_from_json(data, source)
    except RecursionError:  # pragma: no cover - bounded by the depth check
        raise TraceError(source, "nests JSON too deeply.") from None


def trace_from_json(data: object, source: str = "trace") -> Trace:
    if not isinstance(data, dict):
        raise TraceError(
            source,
            "a trace must be a JSON object.",
            'it starts {"format": "prunecheck-trace", ...}.',
        )
    if data.get("format") != FORMAT:
        raise TraceError(
            source,
            f"'format' must be {FORMAT!r}, got {data.get('format')!r}.",
            "is this a prunecheck trace (trace.json of a reproduction bundle)?",
        )
    version = data.get("version")
    if isinstance(version, bool) or version not in VERSIONS:
        raise TraceError(
            source,
            f"trace version {version!r} is not supported "
            f"(this prunecheck reads versions {VERSION} and {SERVER_VERSION}).",
            "re-record the trace with this version of prunecheck.",
        )
    policy = data.get("policy")
    if not isinstance(policy, str) or not policy:
        raise TraceError(
            source,
            "'policy' must be a policy spec string.",
            'for example "lowest_salience" or "mypkg.trim:select".',
        )
    seed = data.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise TraceError(source, f"'seed' must be an integer, got {seed!r}.")
    if "config" not in data:  # no silent defaults: the runtime decides the verdict
        raise TraceError(
            source,
            "has no 'config': the runtime it ran under is unknown.",
            'add "config": {} to replay it under the default runtime.',
        )
    try:
        config = RuntimeConfig.from_json(data["config"], f"{source}: config")
    except ConfigError as exc:
        raise TraceError(exc.subject, exc.rule, exc.hint) from None
    raw = data.get("events")
    if not isinstance(raw, list):
        raise TraceError(source, "'events' must be a list of events.")
    events = tuple(event_from_json(e, f"{source}: events[{i}]") for i, e in enumerate(raw))
    times = data.get("times")
    if times is not None:
        if (
            not isinstance(times, list)
            or len(times) != len(events)
            or not all(
                isinstance(t, int | float) and not isinstance(t, bool) and math.isfinite(t)
                for t in times
            )
        ):
            raise TraceError(source, "'times' must be a list of finite numbers, one per event.")
        times = tuple(float(t) for t in times)
        late = next((i for i in range(1, len(times)) if times[i] < times[i - 1]), None)
        if late is not None:
            raise TraceError(
                f"{source}: times[{late}]",
                f"is {times[late]:g}, earlier than the "
                f"event before it ({times[late - 1]:g}); time never runs backwards.",
                "times must not decrease.",
            )
    meta = data.get("meta", {})
    if not isinstance(meta, dict):
        raise TraceError(source, "'meta' must be a JSON object.")
    return Trace(policy, config, events, seed, times, meta)

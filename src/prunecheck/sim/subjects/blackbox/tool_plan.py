"""What the MCP tool server's tools do, chosen by the harness: a plan.

A :class:`ToolPlan` declares one tool (name, description, JSON schema of
its arguments) and what each of its runs does, in order
(:class:`ToolOutcome`): return an output of a chosen size after a chosen
latency, fail with an error text, raise a timeout, or hang until the client
gives up.  Run ``k`` of a tool takes ``outcomes[k]`` (the last one repeats).
A :class:`ServerPlan` holds the tools, the seed that makes every output's
bytes the same from run to run, and the file each tool body run is recorded
in (:class:`RunRecord`, one JSON line when the body starts and one when it
ends, so a server killed mid-body leaves the start without its end).

The JSON form (``prunecheck-mcp-plan/1``), which the stdio server reads::

    {"format": "prunecheck-mcp-plan/1", "seed": 1, "record": "runs.jsonl",
     "tools": [{"name": "read", "description": "Read a file.",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
                "outcomes": [{"kind": "ok", "latency": 0.5, "size": 4000},
                             {"kind": "fail", "text": "disk full"},
                             {"kind": "hang"}]}]}

Pure but for :func:`load_plan` and :func:`append_record` (files).
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from prunecheck.model.errors import ConfigError

__all__ = [
    "PLAN_FORMAT",
    "OutcomeKind",
    "RunRecord",
    "ServerPlan",
    "ToolOutcome",
    "ToolPlan",
    "append_record",
    "filler",
    "load_plan",
    "plan_from_json",
    "plan_to_json",
    "read_records",
]

PLAN_FORMAT = "prunecheck-mcp-plan/1"


class OutcomeKind(StrEnum):
    """What one run of a tool body does."""

    OK = "ok"
    """Returns its output after ``latency`` seconds."""
    FAIL = "fail"
    """Returns an MCP error result (``isError``) with ``text`` after ``latency``."""
    TIMEOUT = "timeout"
    """After ``latency`` seconds, reports that the tool itself timed out (an error result)."""
    HANG = "hang"
    """Never returns: the client's own timeout or cancellation ends it."""


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """One run of a tool, as the harness chose it.

    Attributes
    ----------
    kind : OutcomeKind
        What the run does.
    latency : float
        Seconds the body takes before it returns or fails (ignored by HANG).
    size : int | None
        OK: the output's length in characters, filled deterministically
        (:func:`filler`); None: ``text``, or a short default.
    text : str | None
        OK: the output itself; FAIL: the error text.
    """

    kind: OutcomeKind = OutcomeKind.OK
    latency: float = 0.0
    size: int | None = None
    text: str | None = None

    def __post_init__(self) -> None:
        if self.latency < 0:
            raise ValueError(f"latency ({self.latency}) must be >= 0")
        if self.size is not None and self.size < 0:
            raise ValueError(f"size ({self.size}) must be >= 0")


_ANY_OBJECT: Mapping[str, object] = {"type": "object", "properties": {}}


@dataclass(frozen=True, slots=True)
class ToolPlan:
    """One tool and its runs, in order (the last outcome repeats)."""

    name: str
    description: str = ""
    parameters: Mapping[str, object] = field(default_factory=lambda: dict(_ANY_OBJECT))
    outcomes: tuple[ToolOutcome, ...] = (ToolOutcome(),)

    def outcome(self, run: int) -> ToolOutcome:
        """What run ``run`` (0-based) of this tool does."""
        return self.outcomes[min(run, len(self.outcomes) - 1)] if self.outcomes else ToolOutcome()


@dataclass(frozen=True, slots=True)
class ServerPlan:
    """The tool server's tools, its seed and where it records each run."""

    tools: tuple[ToolPlan, ...]
    seed: int = 0
    record: Path | None = None

    def tool(self, name: str) -> ToolPlan | None:
        """The plan of the tool called ``name``, or None."""
        return next((t for t in self.tools if t.name == name), None)


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One line of the run record: a tool body started, or ended.

    Attributes
    ----------
    run : int
        The server's run number (0, 1, … across all its tools).
    event : str
        ``"start"`` or ``"end"``.
    tool : str
        The tool's name.
    arguments : Mapping[str, object]
        The arguments it was called with (on ``"start"``; ``{}`` on ``"end"``).
    outcome : str
        On ``"end"``: ``ok``, ``fail``, ``timeout`` or ``cancelled`` (the
        client cancelled it or hung up); ``""`` on ``"start"``.
    output_chars : int
        On ``"end"``: the length of the output or error text sent.
    """

    run: int
    event: str
    tool: str
    arguments: Mapping[str, object] = field(default_factory=dict)
    outcome: str = ""
    output_chars: int = 0

    def to_json(self) -> str:
        """The record as one JSON line (no newline)."""
        return json.dumps(
            {
                "run": self.run,
                "event": self.event,
                "tool": self.tool,
                "arguments": dict(self.arguments),
                "outcome": self.outcome,
                "output_chars": self.output_chars,
            },
            sort_keys=True,
        )


def filler(seed: int, tool: str, run: int, size: int) -> str:
    """``size`` characters of tool output, the same for the same seed, tool
    and run: numbered lines of words.

    >>> filler(1, "read", 0, 30) == filler(1, "read", 0, 30)
    True
    >>> len(filler(1, "read", 0, 1000))
    1000
    """
    rng = random.Random(f"{seed}:{tool}:{run}")
    words = ("alpha", "bravo", "delta", "gamma", "kilo", "lima", "oscar", "tango")
    lines: list[str] = []
    total = 0
    line = 0
    while total < size:
        text = f"{tool} {run}.{line}: " + " ".join(rng.choice(words) for _ in range(8)) + "\n"
        lines.append(text)
        total += len(text)
        line += 1
    return "".join(lines)[:size]


def plan_to_json(plan: ServerPlan) -> dict[str, object]:
    """The plan's JSON form."""
    return {
        "format": PLAN_FORMAT,
        "seed": plan.seed,
        "record": str(plan.record) if plan.record else None,
        "tools": [
            {
                "name": t.name,
                "description": t.description,
                "parameters": dict(t.parameters),
                "outcomes": [
                    {"kind": o.kind.value, "latency": o.latency, "size": o.size, "text": o.text}
                    for o in t.outcomes
                ],
            }
            for t in plan.tools
        ],
    }


def _bad(source: str, rule: str) -> ConfigError:
    return ConfigError(
        f"MCP tool plan {source}",
        rule,
        f"See the {PLAN_FORMAT} example in prunecheck.sim.subjects.blackbox.tool_plan.",
    )


def _outcome(raw: object, where: str, source: str) -> ToolOutcome:
    if not isinstance(raw, Mapping):
        raise _bad(source, f"{where} must be an object, not {type(raw).__name__}.")
    try:
        kind = OutcomeKind(raw.get("kind", "ok"))
    except ValueError:
        kinds = ", ".join(k.value for k in OutcomeKind)
        raise _bad(source, f"{where}.kind {raw.get('kind')!r} is none of {kinds}.") from None
    latency, size, text = raw.get("latency", 0.0), raw.get("size"), raw.get("text")
    if not isinstance(latency, int | float) or isinstance(latency, bool) or latency < 0:
        raise _bad(source, f"{where}.latency must be a number of seconds >= 0, not {latency!r}.")
    if size is not None and (not isinstance(size, int) or isinstance(size, bool) or size < 0):
        raise _bad(source, f"{where}.size must be a whole number >= 0, not {size!r}.")
    if text is not None and not isinstance(text, str):
        raise _bad(source, f"{where}.text must be a string, not {type(text).__name__}.")
    return ToolOutcome(kind, float(latency), size, text)


def plan_from_json(data: object, source: str = "(in memory)") -> ServerPlan:
    """The plan a JSON form describes; :class:`ConfigError` names what is wrong."""
    if not isinstance(data, Mapping) or data.get("format") != PLAN_FORMAT:
        raise _bad(source, f'must be a JSON object with "format": "{PLAN_FORMAT}".')
    raw_tools = data.get("tools")
    if not isinstance(raw_tools, list) or not raw_tools:
        raise _bad(source, '"tools" must be a non-empty list of tools.')
    tools: list[ToolPlan] = []
    for k, raw in enumerate(raw_tools):
        where = f"tools[{k}]"
        if not isinstance(raw, Mapping) or not isinstance(raw.get("name"), str) or not raw["name"]:
            raise _bad(source, f"{where} must be an object with a non-empty string name.")
        parameters = raw.get("parameters", _ANY_OBJECT)
        if not isinstance(parameters, Mapping):
            raise _bad(source, f"{where}.parameters must be a JSON schema object.")
        outcomes = raw.get("outcomes", [{}])
        if not isinstance(outcomes, list) or not outcomes:
            raise _bad(source, f"{where}.outcomes must be a non-empty list.")
        tools.append(
            ToolPlan(
                raw["name"],
                str(raw.get("description", "")),
                dict(parameters),
                tuple(
                    _outcome(o, f"{where}.outcomes[{i}]", source) for i, o in enumerate(outcomes)
                ),
            )
        )
    names = [t.name for t in tools]
    if len(set(names)) != len(names):
        raise _bad(source, f"tool names must be unique: {names}.")
    seed, record = data.get("seed", 0), data.get("record")
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise _bad(source, f'"seed" must be a whole number, not {seed!r}.')
    if record is not None and not isinstance(record, str):
        raise _bad(source, '"record" must be a file path or null.')
    return ServerPlan(tuple(tools), seed, Path(record) if record else None)


def load_plan(path: Path) -> ServerPlan:
    """Read a plan file (:class:`ConfigError` if unreadable or malformed)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _bad(str(path), f"cannot be read as JSON ({exc}).") from None
    return plan_from_json(data, str(path))


def append_record(path: Path, record: RunRecord) -> None:
    """Append one record line and flush it to the file at once."""
    with path.open("a", encoding="utf-8") as out:
        out.write(record.to_json() + "\n")
        out.flush()


def read_records(path: Path) -> list[RunRecord]:
    """Every record in a run record file (a torn last line is skipped: the
    server was killed while writing it)."""
    out: list[RunRecord] = []
    if not path.exists():
        return out
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            raw = json.loads(line)
        except json.JSONDecodeError:
            continue
        out.append(
            RunRecord(
                raw["run"],
                raw["event"],
                raw["tool"],
                raw.get("arguments", {}),
                raw.get("outcome", ""),
                raw.get("output_chars", 0),
            )
        )
    return out

"""The scripts of ``reports/loops/``: one per distinct reproduction.

Each unsafe cell of the table keeps its schedule beside the scripts
(``FILE-ATTR-CLASS.json``, the bundle's ``schedule.json``).  Its script is
what its adapter writes from that schedule (the adapter's ``script``), so
the scripts can be written again from the schedules without searching
again (``make loops-render``).  Cells whose scripts would be the same bar
their docstring share one script, named for the agent and the classes it
reproduces (``adk_compaction-plain-cancel+parallel.py``), its docstring
naming every class; cells of agents whose scripts differ only in which of
the user's agents they build share one too, the agent given as the script's
argument (``MODULE:NAME``; none for the first); a black-box agent's cells
share their manifest's script, which takes the cell's replay file as its
argument.  :func:`plan` says which script and which arguments each cell
runs.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from prunecheck.sim.subjects.loops.target import LoopTarget, load_target
from prunecheck.sim.subjects.policy_spec import LOOP_PREFIX, PROCESS
from prunecheck.sim.support.outputs import write_text

__all__ = [
    "AGENT_ARGUMENT",
    "CellRun",
    "Plan",
    "one_step_a_line",
    "plan",
    "relink",
    "script_part",
    "script_parts",
    "slug",
    "write_scripts",
]

#: The line a script that several of the user's agents share reads its
#: agent from (the renderers of such scripts write it; see :func:`plan`).
AGENT_ARGUMENT = re.compile(r"^ *module, name = \(sys\.argv\[1:\] or \[.*$", re.MULTILINE)
_DEFAULT_AGENT = re.compile(
    r"^ *module, name = \(sys\.argv\[1:\] or \[(['\"])([^'\"]+)\1", re.MULTILINE
)
_CLASSES = re.compile(r"([Ss]cenario\s+)class(\s+\w+,)")


@dataclass(frozen=True, slots=True)
class CellRun:
    """How one unsafe cell's reproduction runs.

    Attributes
    ----------
    cell : str
        The cell's name (its schedule's file stem, :func:`slug`).
    spec : str
        Its agent's spec.
    script : str
        Its script's file name (in the scripts' folder).
    args : tuple[str, ...]
        The script's arguments for this cell.
    """

    cell: str
    spec: str
    script: str
    args: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Plan:
    """Every script's text by file name, how each cell runs, each spec's target."""

    texts: dict[str, str]
    runs: dict[str, CellRun]
    targets: dict[str, LoopTarget]


def one_step_a_line(schedule: str) -> str:
    """A schedule's JSON text (sorted keys, byte-stable) with each step on one
    line: what the table keeps of a cell, read as easily and a fifth as long.

    >>> print(one_step_a_line('{"seed": 1, "steps": [{"kind": "user", "text": "hi"}]}'), end="")
    {
      "seed": 1,
      "steps": [
        {"kind": "user", "text": "hi"}
      ]
    }
    """
    doc = json.loads(schedule)
    lines = ["{"]
    items = sorted(doc.items())
    for i, (key, value) in enumerate(items):
        comma = "," if i < len(items) - 1 else ""
        if key == "steps" and isinstance(value, list) and value:
            lines.append(f"  {json.dumps(key)}: [")
            last = len(value) - 1
            lines += [
                f"    {json.dumps(s, sort_keys=True)}{',' * (j < last)}"
                for j, s in enumerate(value)
            ]
            lines.append(f"  ]{comma}")
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value, sort_keys=True)}{comma}")
    return "\n".join([*lines, "}"]) + "\n"


def slug(spec: str, scenario: str) -> str:
    """A cell's name: ``FILE-ATTR-CLASS``, or ``FOLDER-MANIFEST-CLASS`` for a
    black-box agent (its manifests share names across folders); without a
    class, the agent's.

    >>> slug("loop:process:examples/blackbox/ts-vercel/agent.toml", "trim")
    'ts-vercel-agent-trim'
    >>> slug("loop:examples/loops/autogen_plain.py:agent", "")
    'autogen_plain-agent'
    """
    tail = f"-{scenario}" if scenario else ""
    if spec.startswith(f"{LOOP_PREFIX}{PROCESS}:") and spec.endswith(".toml"):
        path = Path(spec.removeprefix(f"{LOOP_PREFIX}{PROCESS}:"))
        return f"{path.parent.name}-{path.stem}{tail}"
    return spec.rsplit("/", 1)[-1].replace(".py:", "-").replace(":", "-") + tail


@dataclass(frozen=True, slots=True)
class _Cell:
    spec: str
    scenario: str
    target: LoopTarget
    schedule: str
    text: str


def _body(text: str) -> str:
    """The script without its docstring, and without the default of its agent argument."""
    if text.startswith('"""'):
        text = text.split('"""', 2)[2]
    return AGENT_ARGUMENT.sub("AGENT", text)


def plan(
    cells: Iterable[tuple[str, str]],
    folder: Path,
    *,
    load: Callable[[str], LoopTarget] = load_target,
) -> Plan:
    """The scripts for ``cells`` (each a (spec, scenario class) whose schedule
    is ``folder/<slug>.json``), to be written in ``folder``.

    Raises
    ------
    PrunecheckError
        If a spec no longer loads (:func:`load_target`).
    OSError
        If a cell's schedule cannot be read.
    """
    targets: dict[str, LoopTarget] = {}
    groups: dict[str, list[_Cell]] = {}
    for spec, scenario in cells:
        target = targets.get(spec) or targets.setdefault(spec, load(spec))
        schedule = (folder / f"{slug(spec, scenario)}.json").read_text(encoding="utf-8")
        text = target.adapter.script(target.reference, schedule, folder=folder)
        cell = _Cell(spec, scenario, target, schedule, text)
        groups.setdefault(_body(text), []).append(cell)
    texts: dict[str, str] = {}
    runs: dict[str, CellRun] = {}
    for members in groups.values():
        name = _name(members, texts)
        first = members[0]
        if first.target.framework == PROCESS:  # the manifest's script, the replay file its argument
            texts[name] = first.text
            for c in members:
                key = slug(c.spec, c.scenario)
                runs[key] = CellRun(key, c.spec, name, (f"{key}.json",))
            continue
        texts[name] = _shared_text(members, folder) if len(members) > 1 else first.text
        default = _agent_of(texts[name])
        for c in members:
            agent = _agent_of(c.text)
            args = (agent,) if agent and agent != default else ()
            runs[slug(c.spec, c.scenario)] = CellRun(slug(c.spec, c.scenario), c.spec, name, args)
    return Plan(texts, runs, targets)


def _agent_of(text: str) -> str:
    found = _DEFAULT_AGENT.search(text)
    return found.group(2) if found else ""


def _classes(members: list[_Cell]) -> list[str]:
    return list(dict.fromkeys(c.scenario for c in members))


def _shared_text(members: list[_Cell], folder: Path) -> str:
    """The first member's script, its docstring naming every class of the group
    (and, for several agents, saying the others are its argument)."""
    first = members[0]
    doc = json.loads(first.schedule)
    doc["scenario"] = ", ".join(_classes(members))
    agents = list(dict.fromkeys(_agent_of(c.text) for c in members))
    if len(agents) > 1:
        doc["agents"] = agents
    text = first.target.adapter.script(first.target.reference, json.dumps(doc), folder=folder)
    return _CLASSES.sub(r"\1classes\2", text, count=1) if len(_classes(members)) > 1 else text


def _name(members: list[_Cell], taken: dict[str, str]) -> str:
    """The script's file name: the agent (or the agents' common stem) and the classes."""
    first = members[0]
    if first.target.framework == PROCESS:
        return f"{slug(first.spec, '')}.py"
    specs = list(dict.fromkeys(c.spec for c in members))
    if len(specs) == 1:
        agent = slug(specs[0], "")
    else:
        stems = [slug(s, "") for s in specs]  # their common start, character by character
        agent = os.path.commonprefix(stems).rstrip("_-") or "agents"  # noqa: RUF071
    name = f"{agent}-{'+'.join(_classes(members))}.py"
    if name in taken:  # two groups with one stem and the same classes: name every agent
        name = f"{'+'.join(slug(s, '') for s in specs)}-{'+'.join(_classes(members))}.py"
    return name


#: A script's part of an unsafe cell: its link, its arguments, what it did alone.
_SCRIPT_PART = re.compile(
    r"; \[script\]\((?P<path>[^)]+)\)(?P<args>(?: `[^`]*`)*) "
    r"(?P<mark>reproduces alone|not run|exit -?\d+: does not reproduce)"
)
_EXIT = re.compile(r"exit (-?\d+): ")


def script_part(path: str, args: tuple[str, ...], status: int | None) -> str:
    """The script's part of an unsafe cell: ``; [script](PATH) `ARG` MARK``.

    >>> script_part("loops/a.py", ("b.json",), 1)
    '; [script](loops/a.py) `b.json` reproduces alone'
    >>> script_part("loops/a.py", (), None)
    '; [script](loops/a.py) not run'
    """
    shown = "".join(f" `{a}`" for a in args)
    if status is None:
        mark = "not run"
    elif status == 1:
        mark = "reproduces alone"
    else:
        mark = f"exit {status}: does not reproduce"
    return f"; [script]({path}){shown} {mark}"


def _cells_of(line: str) -> list[str]:
    return re.split(r"(?<!\\)\|", line)


def script_parts(
    line: str, classes: list[str]
) -> dict[str, tuple[str, tuple[str, ...], int | None]]:
    """The script part of each unsafe cell of a table ``line`` whose columns
    after the agent and its setting are ``classes``: class → (path, args, status)."""
    columns = _cells_of(line)[3:]
    found: dict[str, tuple[str, tuple[str, ...], int | None]] = {}
    for scenario, cell in zip(classes, columns, strict=False):
        part = _SCRIPT_PART.search(cell)
        if part is None:
            continue
        mark = part.group("mark")
        code = _EXIT.match(mark)
        status = 1 if mark == "reproduces alone" else int(code.group(1)) if code else None
        args = tuple(re.findall(r"`([^`]*)`", part.group("args")))
        found[scenario] = (part.group("path"), args, status)
    return found


def relink(line: str, classes: list[str], parts: dict[str, str]) -> str:
    """``line`` with the script part of each class in ``parts`` replaced."""
    columns = _cells_of(line)
    for i, scenario in enumerate(classes, start=3):
        if scenario in parts and i < len(columns):
            part = parts[scenario].replace("\\", "\\\\")  # a replacement text, not a pattern
            columns[i] = _SCRIPT_PART.sub(part, columns[i], count=1)
    return "|".join(columns)


#: Runs a cell's script alone: (script, the cell's target, its arguments) → exit status.
Runner = Callable[[Path, LoopTarget, tuple[str, ...]], int]


def write_scripts(
    lines: dict[str, tuple[str, str]],
    folder: Path,
    table: Path,
    *,
    classes: list[str],
    run: Runner | None,
    fresh: frozenset[str] = frozenset(),
    load: Callable[[str], LoopTarget] = load_target,
) -> dict[str, tuple[str, str]]:
    """Write the scripts of every unsafe cell of ``lines`` (spec → (framework,
    table line)) into ``folder`` from their schedules (:func:`plan`), remove
    the scripts no cell runs, and return the lines linking each cell to its
    script.

    A cell's script is run (``run``; None: never) when its cell is in
    ``fresh`` (checked now), when its text changed, or when the line does not
    say what it did; else the line keeps what it said.
    """
    stored: dict[str, int | None] = {}
    cells: list[tuple[str, str]] = []
    for spec, (_, line) in lines.items():
        for scenario, (_, _, status) in script_parts(line, classes).items():
            cells.append((spec, scenario))
            stored[slug(spec, scenario)] = status
            schedule = folder / f"{slug(spec, scenario)}.json"
            if schedule.exists():  # kept one step a line (a missing one: plan says so)
                text = schedule.read_text(encoding="utf-8")
                if one_step_a_line(text) != text:
                    write_text(schedule, one_step_a_line(text))
    made = plan(cells, folder, load=load)
    changed = set()
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in made.texts.items():
        path = folder / name
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            write_text(path, text)
            changed.add(name)
    for old in folder.glob("*.py"):
        if old.name not in made.texts:
            old.unlink()
    done: dict[tuple[str, tuple[str, ...]], int] = {}
    out: dict[str, tuple[str, str]] = {}
    for spec, (framework, line) in lines.items():
        parts: dict[str, str] = {}
        for scenario in script_parts(line, classes):
            cell = made.runs[slug(spec, scenario)]
            status = stored.get(cell.cell)
            # a black-box script only forwards its argument, the cell's replay file, to
            # prunecheck's replay: what reproduces is the file, unchanged unless fresh
            forwards = made.targets[spec].framework == PROCESS
            again = (
                cell.cell in fresh or status is None or (cell.script in changed and not forwards)
            )
            if run is not None and again:
                key = (cell.script, cell.args)
                if key not in done:
                    done[key] = run(folder / cell.script, made.targets[spec], cell.args)
                status = done[key]
            elif again:
                status = None
            rel = os.path.relpath((folder / cell.script).resolve(), table.parent.resolve())
            parts[scenario] = script_part(rel.replace(os.sep, "/"), cell.args, status)
        out[spec] = (framework, relink(line, classes, parts))
    return out

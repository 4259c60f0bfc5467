"""What every loop reproduction in ``reports/loops/`` must do (issue 30), checked
the same way for every framework (``tests/test_repro_<framework>.py``).

A reproduction is the bug report a framework maintainer pastes into an issue:

* at most :data:`MAX_LINES` lines, and byte for byte what ``make loops``
  writes today from the schedules of the cells that share it
  (``<cell>.json``; :mod:`prunecheck.sim.reports.loops_scripts`): the table
  links each unsafe cell to its script and the arguments it takes;
* run from a temporary folder outside the repository, with prunecheck's
  harness, its dependencies and the other frameworks unimportable
  (:func:`prunecheck.sim.reports.alone.run_alone`), it exits 1 on the pinned
  version and its last line is ``reproduced: KIND: detail`` with a kind the
  bundle shows;
* where it prints ``request #N: <messages as JSON>`` (always, for a provider
  rejection), the request has the shape of the bundle's request ``#N``: each
  message's role, its tool calls' ids and the call id it answers;
* told it was found on another version than the one installed, it exits 2
  and names both.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prunecheck.sim.drivers.action_search import rerun
from prunecheck.sim.evidence.loop_bundle import bundle_texts
from prunecheck.sim.reports.alone import finding_of, run_alone
from prunecheck.sim.reports.loops import is_guarded
from prunecheck.sim.reports.loops_scripts import plan, script_parts, slug
from prunecheck.sim.subjects.loops.scenarios import SCENARIOS
from prunecheck.sim.subjects.loops.steps import schedule_from_json
from prunecheck.sim.subjects.loops.system import LoopSystem
from prunecheck.sim.subjects.loops.target import load_target

__all__ = [
    "LOOPS",
    "MAX_LINES",
    "Cell",
    "cells",
    "check_a_failing_import_exits_2",
    "check_other_version_exits_2",
    "check_reproduces",
    "shape",
]

ROOT = Path(__file__).resolve().parent.parent
LOOPS = ROOT / "reports" / "loops"
TABLE = ROOT / "reports" / "loops.md"

#: The longest a reproduction may be (issue 30: at most 80, aim for 50).
MAX_LINES = 80

_REQUEST = re.compile(r"^request #(\d+): (.*)$", re.MULTILINE)
_PROVIDER_KINDS = {"provider_rejection", "orphaned_result", "unanswered_call"}


@dataclass(frozen=True, slots=True)
class Cell:
    """One unsafe cell of reports/loops.md: its schedule and its script."""

    schedule: Path

    @property
    def script(self) -> Path:
        """The script the table links the cell to."""
        return LOOPS / Path(_links()[self.schedule.stem][1]).name

    @property
    def args(self) -> tuple[str, ...]:
        """The script's arguments for this cell (the table shows them)."""
        return _links()[self.schedule.stem][2]

    @property
    def data(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(self.schedule.read_text(encoding="utf-8"))
        return loaded

    def __str__(self) -> str:
        return self.schedule.stem


_LINKS: dict[str, tuple[str, str, tuple[str, ...]]] = {}


def _links() -> dict[str, tuple[str, str, tuple[str, ...]]]:
    """Each unsafe cell of the table, in the table's order: cell → (spec, script, args)."""
    if not _LINKS:
        classes = [s.value for s in SCENARIOS]
        for line in TABLE.read_text(encoding="utf-8").splitlines():
            if line.startswith("| `loop:"):
                spec = line.split("`")[1]
                for scenario, (path, args, _) in script_parts(line, classes).items():
                    _LINKS[slug(spec, scenario)] = (spec, path, args)
    return _LINKS


def cells(prefix: str) -> list[Cell]:
    """The cells whose file names start with ``prefix`` (``"langgraph_"`` …)."""
    return [Cell(p) for p in sorted(LOOPS.glob(f"{prefix}*.json"))]


def shape(messages: list[dict[str, Any]]) -> list[tuple[str, tuple[str, ...], str]]:
    """Each message's role, its tool calls' ids and the call it answers."""
    return [
        (
            str(m.get("role")),
            tuple(str(c.get("id")) for c in m.get("tool_calls") or ()),
            str(m.get("tool_call_id") or ""),
        )
        for m in messages
    ]


def _load(spec: str) -> Any:
    head, _, rest = spec.partition(":")
    return load_target(f"{head}:{ROOT / rest}" if rest.startswith("examples/") else spec)


def _target(cell: Cell) -> Any:
    return _load(str(cell.data["spec"]))


def _written(cell: Cell) -> str:
    """The script ``make loops`` writes today for the cells that share ``cell``'s."""
    sharing = [
        (spec, str(json.loads((LOOPS / f"{name}.json").read_text())["scenario"]))
        for name, (spec, path, _) in _links().items()
        if Path(path).name == cell.script.name
    ]
    return plan(sharing, LOOPS, load=_load).texts[cell.script.name]


def _bundle(cell: Cell) -> tuple[str, list[dict[str, Any]], set[str]]:
    """The script its adapter writes today, the bundle's requests, its expected kinds."""
    data = cell.data
    target = _target(cell)
    steps = schedule_from_json(cell.schedule.read_text(encoding="utf-8"))
    found = rerun(LoopSystem(target), steps)
    assert found is not None, f"{cell}: a step of the schedule is no longer enabled"
    texts = bundle_texts(target, found, seed=int(data.get("seed", 0)),
                         scenario=str(data["scenario"]), folder=LOOPS)  # fmt: skip
    requests = [json.loads(line) for line in texts["requests.jsonl"].splitlines()]
    return texts["repro.py"], requests, set(data["expect"])


def check_reproduces(cell: Cell, tmp_path: Path) -> None:
    """Every point of the module's docs but the version check, for ``cell``."""
    text = cell.script.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= MAX_LINES, f"{cell}: {len(text.splitlines())} lines"
    assert "prunecheck.sim" not in text and "prunecheck.model" not in text, cell
    _, requests, expect = _bundle(cell)
    assert _written(cell) == text, f"{cell}: make loops writes another script today"
    target = _target(cell)
    done = run_alone(cell.script, target.framework, tmp_path, keep_guard=is_guarded(target),
                     timeout=120, args=cell.args)  # fmt: skip
    assert done.returncode == 1, f"{cell}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    last = done.stdout.rstrip().splitlines()[-1]
    assert last.startswith("reproduced: "), f"{cell}: {last}"
    kind = finding_of(done.stdout).split(":", 1)[0]
    assert kind in expect, f"{cell}: {kind} not in {sorted(expect)}"
    printed = _REQUEST.findall(done.stdout)
    if expect & _PROVIDER_KINDS:
        assert printed, f"{cell}: no 'request #N:' line\n{done.stdout}"
    by_number = {int(r["request"]): r["body"]["messages"] for r in requests}
    for number, messages in printed:
        assert int(number) in by_number, f"{cell}: request #{number} is not in the bundle"
        assert shape(json.loads(messages)) == shape(by_number[int(number)]), (
            f"{cell}: request #{number} differs from the bundle's"
        )


def check_other_version_exits_2(cell: Cell, tmp_path: Path) -> None:
    """The script, told it was found on version 0.0.1, refuses to run and names both."""
    text = cell.script.read_text(encoding="utf-8")
    found = re.search(r'^FOUND_ON = \{"([^"]+)": "([^"]+)"', text, re.MULTILINE)
    assert found, f"{cell}: no FOUND_ON = {{...}} line"
    dist, version = found.groups()
    # The version is checked before anything is imported: the copy needs nothing beside it.
    other = tmp_path / "elsewhere" / cell.script.name
    other.parent.mkdir()
    other.write_text(text.replace(f'"{dist}": "{version}"', f'"{dist}": "0.0.1"', 1))
    target = _target(cell)
    done = run_alone(other, target.framework, tmp_path, keep_guard=is_guarded(target),
                     timeout=120)  # fmt: skip
    assert done.returncode == 2, f"{cell}: exit {done.returncode}\n{done.stdout}"
    said = done.stdout + done.stderr
    assert "0.0.1" in said and version in said and dist in said, said


def check_a_failing_import_exits_2(cell: Cell, module: str, tmp_path: Path) -> None:
    """The framework installed at the right version but one of its modules
    failing to import (a broken install): the script could not run, exit 2,
    never 1 (which would say it reproduced)."""
    from prunecheck.sim.reports.alone import alone_command, hidden_packages

    target = _target(cell)
    hidden = (*hidden_packages(target.framework, keep_guard=is_guarded(target)), module)
    done = subprocess.run(alone_command(cell.script, hidden), cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, check=False)  # fmt: skip
    assert done.returncode == 2, f"{cell}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    last = done.stdout.rstrip().splitlines()[-1]
    assert last.startswith("could not run: ModuleNotFoundError") and module in last, last
    assert "Traceback" not in done.stderr, done.stderr

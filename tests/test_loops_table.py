"""The committed table of real agent loops (reports/loops.md, ``make loops``)
holds what issue 21 asks of it, and its scripts reproduce with the framework alone.

The table is parsed as Markdown: one section per framework, one row per
example agent, one cell per scenario class.  It must name the five
frameworks; give every framework the four settings (its default loop, its
documented trimming, persistence, behind the guard; Strands has no guard
example yet: the first three); give every scenario
class of every row a verdict, or "n/a: why"; keep every reproduction within
15 environment steps or say how many; show a safe cell per framework; and
print the versions the ``loops`` extra pins.  Cells whose scripts would be
the same share one (the cell shows the arguments it passes); every script is
at most 80 lines and all of them together under 5,000.  The slow test runs
every unsafe cell's script (with the cell's arguments) where prunecheck and
the other frameworks cannot be imported, and checks that it exits 1 showing
its cell's failure: the broken request (the provider's 400), the ledger
mismatch, or the hang.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

from prunecheck.sim.reports.alone import (
    FRAMEWORK_PACKAGES,
    alone_command,
    finding_of,
    hidden_packages,
    run_alone,
)
from prunecheck.sim.reports.loops import MAX_REPRO_STEPS, PACKAGES, SETTINGS
from prunecheck.sim.reports.loops_scripts import script_parts, slug
from prunecheck.sim.subjects.loops.scenarios import SCENARIOS

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "reports" / "loops.md"
SCRIPTS = TABLE.parent / "loops"
FRAMEWORKS = (
    "adk", "autogen", "langgraph", "llamaindex", "maf", "openai-agents", "pydantic-ai", "strands",
)  # fmt: skip
#: The frameworks with an example behind prunecheck's guard (none for Strands, MAF, ADK yet).
GUARDED = ("autogen", "langgraph", "openai-agents", "pydantic-ai")


@dataclass(frozen=True, slots=True)
class TableRow:
    framework: str
    spec: str
    setting: str
    cells: dict[str, str]  # scenario class title -> cell text


def parse(text: str) -> list[TableRow]:
    """The rows of every framework's section."""
    rows: list[TableRow] = []
    framework, header = "", list[str]()
    for line in text.splitlines():
        if line.startswith("## "):
            framework, header = line[3:].strip(), []
            continue
        if not line.startswith("| ") or not framework:
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if cells[0] == "agent":
            header = cells
            continue
        assert header, f"a row before its header in {framework}: {line}"
        assert len(cells) == len(header), f"{len(cells)} cells, {len(header)} columns: {line}"
        by_title = dict(zip(header[2:-1], cells[2:-1], strict=True))
        rows.append(TableRow(framework, cells[0].strip("`"), cells[1], by_title))
    return rows


@pytest.fixture(scope="module")
def rows() -> list[TableRow]:
    if not TABLE.exists():
        pytest.fail(f"{TABLE} is missing: run `make loops` and commit it")
    return parse(TABLE.read_text(encoding="utf-8"))


def test_the_table_has_every_framework_in_every_setting(rows: list[TableRow]) -> None:
    # a black-box agent's section ("black-box: …") is an agent of any language, not an adapter
    framed = {r.framework for r in rows if not r.framework.startswith("black-box")}
    assert sorted(framed) == list(FRAMEWORKS)
    for framework in FRAMEWORKS:
        settings = {s for r in rows if r.framework == framework for s in r.setting.split(" + ")}
        wanted = set(SETTINGS) if framework in GUARDED else set(SETTINGS) - {"guard"}
        assert settings == wanted, f"{framework}: {sorted(settings)}"


def test_every_scenario_class_of_every_row_has_a_verdict_or_says_why_not(
    rows: list[TableRow],
) -> None:
    titles = [s.title for s in SCENARIOS.values()]
    for row in rows:
        assert list(row.cells) == titles, row.spec
        for title, cell in row.cells.items():
            verdict = re.match(r"(\*\*UNSAFE\*\*|safe|vacuous|n/a)", cell)
            assert verdict, f"{row.spec}, {title}: {cell!r}"
            if cell.startswith("n/a"):
                assert re.match(r"n/a: \w.{10,}", cell), f"{row.spec}, {title}: no reason"


def test_every_reproduction_is_short_or_states_its_bound(rows: list[TableRow]) -> None:
    unsafe = [(r, t, c) for r in rows for t, c in r.cells.items() if c.startswith("**UNSAFE**")]
    assert unsafe
    for row, title, cell in unsafe:
        steps = re.search(r"\((\d+) steps", cell)
        assert steps, f"{row.spec}, {title}: {cell!r}"
        within = int(steps.group(1)) <= MAX_REPRO_STEPS
        assert within or f"over the {MAX_REPRO_STEPS}-step aim" in cell, cell
        script = re.search(r"\[script\]\((loops/[\w.+-]+\.py)\)((?: `[^`]+`)*) ([^)]*)\)", cell)
        assert script, f"{row.spec}, {title}: no script"
        assert (TABLE.parent / script.group(1)).exists(), script.group(1)
        assert script.group(3) == "reproduces alone", cell  # black-box rows too


def test_every_framework_has_a_safe_cell(rows: list[TableRow]) -> None:
    for framework in FRAMEWORKS:
        safe = [c for r in rows if r.framework == framework for c in r.cells.values()
                if c.startswith("safe")]  # fmt: skip
        assert safe, framework


def test_two_typescript_frameworks_run_black_box_each_with_safe_and_unsafe_cells(
    rows: list[TableRow],
) -> None:
    """Issue 35: at least two TypeScript frameworks, each with a safe and an unsafe cell
    (every unsafe cell's reproduction: test_every_reproduction_is_short_or_states_its_bound)."""
    typescript = sorted({r.framework for r in rows if "(TypeScript" in r.framework})
    assert len(typescript) >= 2, typescript
    for framework in typescript:
        cells = [c for r in rows if r.framework == framework for c in r.cells.values()]
        assert any(c.startswith("safe") for c in cells), framework
        assert any(c.startswith("**UNSAFE**") for c in cells), framework


def test_the_table_names_the_versions_the_loops_extra_pins() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    pins = {}
    for req in pyproject["project"]["optional-dependencies"]["loops"]:
        name, sep, pinned = req.partition("==")
        if sep:
            pins[name] = pinned
    head = TABLE.read_text(encoding="utf-8").split("\n## ", 1)[0]
    for package in PACKAGES:
        assert package in pins, f"{package} is not pinned (==) in the loops extra"
        assert f"{package} {pins[package]}" in head, package
    assert re.search(r"`check`'s defaults \(\d+ schedules per scenario class\b", head) or re.search(
        r"\b\d+ schedules per agent\b", head
    )


def test_the_table_says_what_a_guard_cannot_prevent() -> None:
    text = TABLE.read_text(encoding="utf-8")
    assert "## What a trimming guard cannot prevent" in text


def test_the_isolation_hides_prunecheck_and_the_other_frameworks(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        "import importlib, json\n"
        "out = {}\n"
        "names = ('prunecheck', 'prunecheck.guard', 'prunecheck.sim', 'agents', 'hypothesis',\n"
        "         'json')\n"
        "for name in names:\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "        out[name] = 'ok'\n"
        "    except ImportError as exc:\n"
        "        out[name] = type(exc).__name__\n"
        "print(json.dumps(out, sort_keys=True))\n"
    )
    import subprocess

    for keep_guard, expect in ((False, "ModuleNotFoundError"), (True, "ok")):
        hidden = hidden_packages("pydantic-ai", keep_guard=keep_guard)
        done = subprocess.run(alone_command(probe, hidden), capture_output=True, text=True,
                              check=True, cwd=tmp_path)  # fmt: skip
        seen = json.loads(done.stdout)
        assert (
            seen["agents"] == seen["prunecheck.sim"] == seen["hypothesis"] == "ModuleNotFoundError"
        )
        assert seen["prunecheck"] == seen["prunecheck.guard"] == expect
        assert seen["json"] == "ok"


def _links() -> list[tuple[str, Path, tuple[str, ...]]]:
    """Each unsafe cell of the table: (its name, its script, the script's arguments)."""
    classes = [s.value for s in SCENARIOS]
    found = []
    for line in TABLE.read_text(encoding="utf-8").splitlines() if TABLE.exists() else []:
        if line.startswith("| `loop:"):
            spec = line.split("`")[1]
            for scenario, (path, args, _) in script_parts(line, classes).items():
                found.append((slug(spec, scenario), TABLE.parent / path, args))
    return found


MAX_SCRIPT_LINES, MAX_ALL_LINES = 80, 5000  # issue 30: each at most 80 lines, all under 5,000


def test_every_cell_has_its_schedule_and_every_script_serves_a_cell() -> None:
    links = _links()
    assert links
    for name, script, _ in links:
        assert (SCRIPTS / f"{name}.json").exists(), name
        assert script.exists(), f"{name}: {script.name}"
    assert {p.name for p in SCRIPTS.glob("*.py")} == {s.name for _, s, _ in links}
    assert {p.stem for p in SCRIPTS.glob("*.json")} - {"rows"} == {n for n, _, _ in links}


def test_the_reproductions_are_short_each_and_together() -> None:
    sizes = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in SCRIPTS.glob("*.py")}
    assert sizes
    assert max(sizes.values()) <= MAX_SCRIPT_LINES, max(sizes.items(), key=lambda kv: kv[1])
    assert sum(sizes.values()) < MAX_ALL_LINES, sum(sizes.values())


def _in_process_cells() -> list[tuple[str, Path, tuple[str, ...]]]:
    """The cells of the frameworks' adapters (a black-box agent's replay needs
    prunecheck: test_a_committed_black_box_replay_reproduces replays those)."""
    return [c for c in _links() if not _is_black_box(SCRIPTS / f"{c[0]}.json")]


def _is_black_box(replay: Path) -> bool:
    try:
        return bool(json.loads(replay.read_text(encoding="utf-8"))["framework"] == "process")
    except (OSError, ValueError, KeyError):
        return False


def _replays() -> list[Path]:
    return sorted(p for p in SCRIPTS.glob("*.json") if _is_black_box(p))


@pytest.mark.slow
@pytest.mark.parametrize("replay_file", _replays(), ids=lambda p: p.stem)
def test_a_committed_black_box_replay_reproduces(replay_file: Path) -> None:
    """A black-box row's replay file, served to its agent (its manifest's script
    does the same from any folder, given the file), breaks the agent as the table says; a
    TypeScript agent's needs node and its packages (`make node-deps`)."""
    import shutil
    import sys

    from prunecheck.sim.subjects.blackbox.replay import replay

    if sys.platform != "linux":
        pytest.skip("black-box mode reads /proc")
    schedule = json.loads(replay_file.read_text(encoding="utf-8"))
    manifest = ROOT / schedule["target"]
    command = tomllib.loads(manifest.read_text(encoding="utf-8"))["command"]
    if command[0] == "node":
        if shutil.which("node") is None:
            pytest.skip("node is not on PATH: install Node.js 18+ (Debian: apt-get install nodejs)")
        if not (manifest.parent / "node_modules").is_dir():
            pytest.skip(f"{manifest.parent / 'node_modules'} is missing: run `make node-deps`")
    assert replay(manifest, replay_file) == 1


#: Messages a framework logs, with the traceback, for an exception it handles: Google ADK
#: logs a tool's failure (one the schedule injects) before answering the model with it.
HANDLED = ("Node execution failed with exception", "Root node support failed.")
#: A traceback chained to one before it (part of the same logged record).
CHAINED = (
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
)


def _unlogged_tracebacks(stderr: str) -> list[str]:
    """The line before each traceback in ``stderr`` that no framework logged as handled (a
    script's own crash: the scripts' excepthook makes that exit 2, so none should be left)."""
    found, last = [], ""
    for line in stderr.splitlines():
        traceback = line.startswith("Traceback (most recent call last):")
        if traceback and last not in HANDLED and last not in CHAINED:
            found.append(last)
        if line.strip():
            last = line.strip()
    return found


def test_only_a_logged_traceback_is_allowed() -> None:
    logged = "Node execution failed with exception\nTraceback (most recent call last):\n  File x\n"
    chained = (
        logged + "E: x\n\nDuring handling of the above exception, another exception occurred:\n"
    )
    assert _unlogged_tracebacks(logged + "RuntimeError: search failed for call_1\n") == []
    assert _unlogged_tracebacks(chained + "\nTraceback (most recent call last):\n") == []
    assert _unlogged_tracebacks("Traceback (most recent call last):\n  File y\n") == [""]
    assert _unlogged_tracebacks("oops\nTraceback (most recent call last):\n") == ["oops"]


@pytest.mark.slow
@pytest.mark.parametrize("cell", _in_process_cells(), ids=lambda c: c[0])
def test_a_committed_script_reproduces_with_its_framework_alone(
    cell: tuple[str, Path, tuple[str, ...]], tmp_path: Path
) -> None:
    name, script, args = cell
    schedule = json.loads((SCRIPTS / f"{name}.json").read_text(encoding="utf-8"))
    framework = schedule["framework"]
    assert framework in FRAMEWORK_PACKAGES
    pytest.importorskip(FRAMEWORK_PACKAGES[framework][0])
    example = ROOT / schedule["target"].rsplit(":", 1)[0]
    keep_guard = "prunecheck.guard" in example.read_text(encoding="utf-8")
    done = run_alone(script, framework, tmp_path, keep_guard=keep_guard, timeout=300, args=args)
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    assert not _unlogged_tracebacks(done.stderr), done.stderr[-2000:]
    first = finding_of(done.stdout)
    assert first, done.stdout[-2000:]
    assert done.stdout.rstrip().splitlines()[-1].startswith("reproduced: "), done.stdout[-2000:]
    assert first.split(":", 1)[0] in schedule["expect"], first

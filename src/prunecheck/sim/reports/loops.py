"""``make loops``: the scenario table of real agent loops, ``reports/loops.md``.

For each example agent of ``examples/loops/`` (every ``prunecheck check
loop:…`` its docstring names) and each scenario class
(:data:`prunecheck.sim.subjects.loops.scenarios.SCENARIOS`): the verdict, the minimal
reproduction's length and its standalone script (``reports/loops/*.py``,
written from the cell's schedule, ``FILE-ATTR-CLASS.json``, and run once with
the framework alone to confirm it, :mod:`prunecheck.sim.reports.alone`: exit
status 1 with a finding printed is "reproduces alone"; cells whose scripts
would be the same share one, :mod:`.loops_scripts`); a class the agent does
not support says why.  Each
agent's *setting* (:func:`setting_of`) says which of the table's settings it
stands for: a framework's default loop, its documented trimming, with
persistence, behind prunecheck's guard.  The frameworks' versions are
printed at the top; everything is offline.  The same seed gives the same
rows byte for byte, bar the wall-clock column.

Run as ``python -m prunecheck.sim.reports.loops --out reports/loops.md
--scripts reports/loops --seed 1``; ``--only '*guarded*'`` (a shell pattern
over the specs as written, a file in the current folder relative to it:
:func:`as_shown`; repeatable) checks only the matching agents and keeps the
other rows as the last run wrote them.  Each row is saved as it is made
(``rows.json`` in the scripts folder: the row's table line, by spec), so a
run stopped half-way has lost nothing, and ``--only`` rechecks a few rows of
a table without rechecking the rest.  ``--render-only`` checks nothing: it
writes the scripts again from the stored schedules and the table from the
stored rows (``make loops-render``), running only the scripts whose text
changed.
"""

from __future__ import annotations

import argparse
import ast
import fnmatch
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from prunecheck.model.errors import PrunecheckError
from prunecheck.sim.api.loop_verdict import (
    CLASS_EXAMPLES,
    Cell,
    CellVerdict,
    LoopCheck,
    check_loop,
)
from prunecheck.sim.evidence.loop_bundle import bundle_texts
from prunecheck.sim.reports.alone import finding_of, run_alone
from prunecheck.sim.reports.loops_scripts import (
    one_step_a_line,
    script_part,
    slug,
    write_scripts,
)
from prunecheck.sim.reports.same_trimmer import SAME_TRIMMER, for_loop
from prunecheck.sim.subjects.loops.contract import Capability
from prunecheck.sim.subjects.loops.scenarios import SCENARIOS, ScenarioClass
from prunecheck.sim.subjects.loops.target import LoopTarget, load_target
from prunecheck.sim.subjects.policy_spec import (
    LOOP_PREFIX,
    PROCESS,
    SpecKind,
    is_loop_spec,
    parse_spec,
    parse_spec_or_none,
)
from prunecheck.sim.support.outputs import write_text

__all__ = [
    "GUARD_MARK",
    "MAX_REPRO_STEPS",
    "OUTSIDE_THE_TRIM",
    "PACKAGES",
    "RAISED",
    "SETTINGS",
    "Row",
    "as_shown",
    "discover",
    "is_guarded",
    "main",
    "render",
    "setting_of",
]

#: The packages whose versions the table was made with (the ``loops`` extra).
PACKAGES = (
    "pydantic-ai-slim", "openai-agents", "langchain", "langchain-core", "langgraph",
    "langgraph-checkpoint-sqlite", "autogen-agentchat", "autogen-core", "autogen-ext",
    "strands-agents", "agent-framework-core", "agent-framework-openai",
    "google-adk", "llama-index-core",
)  # fmt: skip

_SPEC = re.compile(r"prunecheck check (loop:[\w./:-]+)")

#: Steps whose handling is the loop's, not the trim's: a guarded agent's
#: unsafe cell whose minimal reproduction needs one is marked :data:`GUARD_MARK`.
OUTSIDE_THE_TRIM = frozenset({"cancel", "crash", "fail", "timeout"})

#: The footnote mark of a guarded agent's unsafe cell that fails outside the trim.
GUARD_MARK = "†"

#: A reproduction's aim (issue 21): at most this many environment steps.
MAX_REPRO_STEPS = 15

#: The settings of the table, as :func:`setting_of` names them.
SETTINGS = ("default loop", "trimming", "persistence", "guard")

#: The exit status the table gives a script that exited 1 without a finding (it raised).
RAISED = 101

#: What a trimming guard cannot prevent (the table says it plainly).
GUARD_NOTE = (
    f"{GUARD_MARK} A trimming guard (prunecheck.guard: the LangChain middleware, the AutoGen "
    "context wrapper, the list-mode wrapper in a pydantic-ai history processor or an Agents SDK "
    "input filter) decides only *what a trim removes*: it keeps every trim to whole, closed "
    "units. It cannot prevent what the framework's loop does outside the trim: a cancel that "
    "discards tools that already ran, a crash that loses what the store never wrote, a "
    "resume that runs a finished tool again, a failed or timed-out tool the loop leaves "
    "without a result, a repair layer that invents a result. Those cells stay unsafe behind "
    "the guard when the framework's loop is: in a guarded agent's row, an unsafe cell whose "
    f"minimal reproduction needs a cancel, a crash, a tool failure or a timeout is marked "
    f"{GUARD_MARK}; the guard answers for the rest (the trim at the framework's hook above all)."
)


@dataclass(frozen=True, slots=True)
class Row:
    """One example agent's check.

    Attributes
    ----------
    spec : str
        The loop spec.
    framework : str
        Its framework ('' if it could not be loaded).
    check : LoopCheck or None
        The check (None if not loaded).
    error : str
        Why it could not be loaded or checked.
    scripts : dict[str, tuple[str, int | None]]
        Scenario class → (script path relative to the table, its exit status;
        None: not run).
    seconds : float
        Wall time of the check (the one column that varies between runs).
    guarded : bool
        Whether the agent trims through prunecheck's guard (:func:`is_guarded`).
    setting : str
        Which settings it stands for (:func:`setting_of`).
    """

    spec: str
    framework: str
    check: LoopCheck | None
    error: str
    scripts: dict[str, tuple[str, int | None]]
    seconds: float
    guarded: bool = False
    setting: str = ""


def is_guarded(target: LoopTarget) -> bool:
    """Whether the spec's module imports ``prunecheck.guard`` at its top level
    (the agent trims through prunecheck's guard, as the ``*_guarded`` examples do)."""
    where = parse_spec(target.spec).where if is_loop_spec(target.spec) else ""
    path: str | None = where
    if not where.endswith(".py"):
        try:
            found = importlib.util.find_spec(where)
        except (ImportError, ValueError):
            found = None
        path = found.origin if found is not None else None
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8")) if path else None
    except (OSError, SyntaxError, ValueError):
        return False
    for node in tree.body if tree is not None else []:
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        if any(n == "prunecheck.guard" or n.startswith("prunecheck.guard.") for n in names):
            return True
    return False


def setting_of(target: LoopTarget) -> str:
    """The table's settings ``target`` stands for, joined by ``+``.

    ``guard`` when it trims through prunecheck's guard (:func:`is_guarded`);
    ``trimming`` when it trims at the framework's hook otherwise; ``default
    loop`` when it does neither; ``persistence`` besides when a crash scenario
    applies (durable state to resume from).
    """
    caps = target.adapter.capabilities(target.target)
    if is_guarded(target):
        labels = ["guard"]
    elif Capability.TRIM_HOOK in caps:
        labels = ["trimming"]
    else:
        labels = ["default loop"]
    if caps & {Capability.CRASH_RESUME, Capability.CRASH_NEW_MESSAGE}:
        labels.append("persistence")
    return " + ".join(labels)


def discover(folder: Path, blackbox: Path | None = None) -> list[str]:
    """Every ``loop:`` spec the docstrings of ``folder/*.py`` name, in file order;
    then every ``loop:process:`` spec the comments of ``blackbox/*/*.toml`` (the
    black-box agents' manifests) name."""
    specs: list[str] = []
    files = sorted(folder.glob("*.py"))
    files += sorted(blackbox.glob("*/*.toml")) if blackbox is not None else []
    for path in files:
        for spec in _SPEC.findall(path.read_text(encoding="utf-8")):
            if spec not in specs:
                specs.append(spec)
    return specs


def as_shown(spec: str, cwd: Path | None = None) -> str:
    """``spec`` as a user reads it: an absolute file inside ``cwd`` (default:
    the current folder) relative to it, so that ``--only`` patterns match the
    spec as written, never the folders above the checkout.

    >>> as_shown("loop:/home/max/repo/examples/a.py:agent", Path("/home/max/repo"))
    'loop:examples/a.py:agent'
    >>> as_shown("loop:examples/a.py:agent", Path("/home/max/repo"))
    'loop:examples/a.py:agent'
    """
    parsed = parse_spec_or_none(spec)
    if parsed is None or parsed.kind is not SpecKind.LOOP:
        return spec
    path = Path(parsed.where)
    here = (cwd or Path.cwd()).resolve()
    if not path.is_absolute() or not path.is_relative_to(here):
        return spec
    framework = f"{parsed.adapter}:" if parsed.adapter else ""
    return f"{LOOP_PREFIX}{framework}{path.relative_to(here).as_posix()}:{parsed.attr}"


def _run_script(path: Path, target: LoopTarget, args: tuple[str, ...] = ()) -> int:
    """The script's exit status with its framework alone, run from an empty
    temporary folder (it must run from any directory; 1: it reproduced)."""
    with tempfile.TemporaryDirectory(prefix="prunecheck-loop-script-") as elsewhere:
        if target.framework == PROCESS:  # its script needs prunecheck's endpoint: not alone
            command = [sys.executable, str(path.resolve()), *args]
            done = subprocess.run(command, cwd=elsewhere, capture_output=True, text=True,
                                  timeout=600, check=False)  # fmt: skip
        else:
            done = run_alone(path, target.framework, Path(elsewhere),
                             keep_guard=is_guarded(target), args=args)  # fmt: skip
    if done.returncode == 1 and not finding_of(done.stdout):
        return RAISED
    return done.returncode


def check_row(spec: str, *, seed: int, max_examples: int | None, scripts: Path, table: Path) -> Row:
    """Check one example agent and write its unsafe cells' schedules (their
    scripts are written from them afterwards: :func:`~.loops_scripts.write_scripts`)."""
    started = time.perf_counter()
    try:
        target = load_target(spec)
        result = check_loop(target, seed=seed, max_examples=max_examples)
    except PrunecheckError as exc:
        return Row(spec, "", None, exc.paragraph(), {}, time.perf_counter() - started)
    written: dict[str, tuple[str, int | None]] = {}
    for cell in result.unsafe:
        assert cell.found is not None
        name = cell.scenario.name.value
        texts = bundle_texts(target, cell.found, seed=seed, scenario=name, folder=scripts)
        scripts.mkdir(parents=True, exist_ok=True)
        write_text(scripts / f"{slug(spec, name)}.json", one_step_a_line(texts["schedule.json"]))
        rel = os.path.relpath(
            (scripts / f"{slug(spec, name)}.py").resolve(), table.parent.resolve()
        )
        written[name] = (rel.replace(os.sep, "/"), None)
    seconds = time.perf_counter() - started
    framework = target.framework
    if framework == PROCESS:  # grouped by what the agent is built on (its manifest says)
        framework = f"black-box: {getattr(target.target, 'framework', PROCESS)}"
    return Row(spec, framework, result, "", written, seconds, is_guarded(target),
               setting_of(target))  # fmt: skip


def _cell(cell: Cell, script: tuple[str, int | None] | None, guarded: bool = False) -> str:
    if cell.verdict is CellVerdict.UNSAFE:
        assert cell.found is not None
        steps = len(cell.found.steps)
        text = f"**UNSAFE** {cell.described or cell.kinds} ({steps} steps"
        if steps > MAX_REPRO_STEPS:
            text += f", over the {MAX_REPRO_STEPS}-step aim: the shortest the shrinking found"
        if script is not None:
            text += script_part(script[0], (), script[1])
        outside = guarded and any(step.kind in OUTSIDE_THE_TRIM for step in cell.found.steps)
        return text + ")" + (f" {GUARD_MARK} outside the trim" if outside else "")
    if cell.verdict is CellVerdict.SAFE:
        return f"safe ({cell.examples} schedules, {cell.scenario.key} ×{cell.exercised})"
    if cell.verdict is CellVerdict.VACUOUS:
        return f"vacuous ({cell.scenario.key} never enabled)"
    return f"n/a: {cell.note}"


def row_line(row: Row) -> str:
    """The row's line of the table."""
    titles = [s.title for s in SCENARIOS.values()]
    if row.check is None:
        return f"| `{row.spec}` | | " + row.error.replace("|", "\\|") + " |" + " |" * len(titles)
    cells = [_cell(c, row.scripts.get(c.scenario.name.value), row.guarded)
             for c in row.check.cells]  # fmt: skip
    same = for_loop(row.spec)
    for i, c in enumerate(row.check.cells):
        if same is not None and c.scenario.name is ScenarioClass.TRIM:
            cells[i] += f"; alone {same.alone} ([frameworks.md](frameworks.md) ‡)"
    return f"| `{row.spec}` | {row.setting} | " + " | ".join(cells) + f" | {row.seconds:.0f} s |"


def load_lines(path: Path) -> dict[str, tuple[str, str]]:
    """The rows a previous run saved (spec → (framework, line)); none if absent or unreadable."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return {str(k): (str(v["framework"]), str(v["line"])) for k, v in raw["rows"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def save_lines(
    path: Path, lines: dict[str, tuple[str, str]], *, seed: int, max_examples: int | None
) -> None:
    """Save the rows made so far (atomically: :func:`write_text`)."""
    rows = {spec: {"framework": fw, "line": line} for spec, (fw, line) in sorted(lines.items())}
    doc = {"seed": seed, "max_examples": max_examples, "rows": rows}
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, json.dumps(doc, indent=1, ensure_ascii=False) + "\n")


def render(rows: list[Row], *, seed: int, max_examples: int | None) -> str:
    """The Markdown of ``reports/loops.md``."""
    return render_lines([(r.spec, r.framework, row_line(r)) for r in rows], seed=seed,
                        max_examples=max_examples)  # fmt: skip


def render_lines(rows: list[tuple[str, str, str]], *, seed: int, max_examples: int | None) -> str:
    """The Markdown of ``reports/loops.md`` from each row's (spec, framework, line)."""
    lines = [
        "# Real agent loops under test",
        "",
        "<!-- Generated by `make loops` (prunecheck.sim.reports.loops): do not edit. -->",
        "",
        "Each example agent of `examples/loops/` driven through its framework's own loop: a "
        "scripted model at the framework's model boundary, fake tools of the same names and "
        "schemas, the harness owning every await point (replies, tool completions in any order, "
        "failures, timeouts, the virtual clock, cancel, crash, resume, approvals), every request "
        "judged against the ledger of what ran. A cell is the scenario class's verdict; an "
        "unsafe one gives the violations, the minimal schedule's length and its standalone "
        "script (the framework alone; exit status 1: it reproduced). In the row of an agent "
        "behind prunecheck's guard, a cell marked " + GUARD_MARK + " fails outside the trim (a "
        "cancel, a crash, a failed or timed-out tool): what a trimming guard cannot prevent "
        "(the last section). The black-box agents of `examples/blackbox/` run as "
        "subprocesses against prunecheck's fake model endpoint (`loop:process:`): a crash is a "
        "SIGKILL and a restart on their own persistence; their scripts serve the replay file "
        "beside them to the agent and need prunecheck.",
        "",
        f"Seed {seed}; "
        + (
            f"`check`'s defaults ({CLASS_EXAMPLES} schedules per scenario class the agent "
            "supports, grown where its trimmer never fired); "
            if max_examples is None
            else f"{max_examples} schedules per agent, split among the classes it supports; "
        )
        + f"every reproduction at most {MAX_REPRO_STEPS} environment steps, or its cell says "
        "how many; offline. Settings: a framework's *default loop*, its documented "
        "*trimming*, *persistence* (durable state a crash resumes from), behind prunecheck's "
        "*guard*. Versions:",
        "",
        ", ".join(f"{p} {_version(p)}" for p in PACKAGES) + ".",
        "",
    ]
    titles = [s.title for s in SCENARIOS.values()]
    for framework in sorted({fw for _, fw, _ in rows}):
        lines += [f"## {framework or 'not loaded'}", ""]
        lines.append("| agent | setting | " + " | ".join(titles) + " | wall clock |")
        lines.append("|---" * (len(titles) + 3) + "|")
        lines += [line for _, fw, line in rows if fw == framework]
        lines.append("")
    lines += ["## What a trimming guard cannot prevent", "", GUARD_NOTE, ""]
    differ = [s for s in SAME_TRIMMER if any(spec == s.loop for spec, _, _ in rows)]
    if differ:
        lines += ["## The same trimmer alone", "",
                  "‡ A verdict holds for the runtime it names: a trim cell here is the "
                  "trimmer inside its framework's own loop, "
                  "[frameworks.md](frameworks.md) checks it alone (prunecheck's model runtime "
                  "sends what it returns). Where they differ: "
                  + "; ".join(f"`{s.policy}` ({s.loop}'s trimmer) is {s.alone} alone and "
                              f"{s.in_loop} here: {s.why}" for s in differ) + ".", ""]  # fmt: skip
    return "\n".join(lines)


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "(not installed)"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m prunecheck.sim.reports.loops",
                                description=__doc__.split("\n\n")[0])  # fmt: skip
    p.add_argument("--out", default="reports/loops.md")
    p.add_argument("--scripts", default="reports/loops")
    p.add_argument("--examples", default="examples/loops")
    p.add_argument("--blackbox", default="examples/blackbox",
                   help="the black-box agents (a folder each)")  # fmt: skip
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--max-examples", type=int, default=None,
                   help="schedules per agent, split among its classes (default: check's "
                        "defaults, per class)")  # fmt: skip
    p.add_argument("--no-run", action="store_true", help="do not run the scripts")
    p.add_argument("--only", metavar="PATTERN", action="append", default=[],
                   help="check only the specs matching this shell pattern (fnmatch, e.g. "
                        "'*guarded*'); repeatable")  # fmt: skip
    p.add_argument("--render-only", action="store_true",
                   help="check nothing: write the scripts again from the stored schedules "
                        "and the table from the stored rows (rows.json), running only the "
                        "scripts whose text changed")  # fmt: skip
    args = p.parse_args(argv)
    out, scripts = Path(args.out), Path(args.scripts)
    saved = scripts / "rows.json"
    everyone = discover(Path(args.examples), Path(args.blackbox))
    if args.render_only:
        kept, settings = load_lines(saved), _settings_of(saved)
        if args.only or settings is None or not kept:
            print(f"--render-only: needs the rows of a previous run in {saved} and no --only "
                  "(run `make loops` first)", file=sys.stderr)  # fmt: skip
            return 2
        seed, max_examples = settings
        return _render(kept, everyone, out, scripts, seed=seed, max_examples=max_examples,
                       run=not args.no_run, fresh=frozenset(), checked=0)  # fmt: skip
    specs = everyone
    if args.only:
        specs = [s for s in specs
                 if any(fnmatch.fnmatchcase(as_shown(s), pat) for pat in args.only)]  # fmt: skip
        if not specs:
            print(f"--only {' '.join(args.only)}: no spec of {args.examples} matches "
                  "(a shell pattern over the spec as written, 'loop:FILE.py:ATTR' with FILE "
                  "relative to the current folder; try '*guarded*')",
                  file=sys.stderr)  # fmt: skip
            return 2
    # --only keeps the other rows as the last run (same seed and size) wrote them
    kept = load_lines(saved) if args.only else {}
    if kept and _settings_of(saved) != (args.seed, args.max_examples):
        print(
            f"--only: {saved} was written with another --seed or --max-examples; "
            "its rows are not kept (run without --only to remake them all)",
            file=sys.stderr,
        )
        kept = {}
    fresh: set[str] = set()
    for spec in specs:
        print(f"checking {spec} ...", file=sys.stderr, flush=True)
        row = check_row(spec, seed=args.seed, max_examples=args.max_examples,
                        scripts=scripts, table=out)  # fmt: skip
        _drop_stale_schedules(scripts, spec, row)
        kept[spec] = (row.framework, row_line(row))
        fresh |= {slug(spec, scenario) for scenario in row.scripts}
        save_lines(saved, kept, seed=args.seed, max_examples=args.max_examples)
    return _render(kept, everyone, out, scripts, seed=args.seed, max_examples=args.max_examples,
                   run=not args.no_run, fresh=frozenset(fresh), checked=len(specs))  # fmt: skip


def _render(
    kept: dict[str, tuple[str, str]],
    everyone: list[str],
    out: Path,
    scripts: Path,
    *,
    seed: int,
    max_examples: int | None,
    run: bool,
    fresh: frozenset[str],
    checked: int,
) -> int:
    """Write every unsafe cell's script from its schedule, then rows.json and the table."""
    rows = {spec: kept[spec] for spec in everyone if spec in kept}
    classes = [s.value for s in SCENARIOS]
    try:
        rows = write_scripts(rows, scripts, out, classes=classes,
                             run=_run_script if run else None, fresh=fresh)  # fmt: skip
    except PrunecheckError as exc:
        print(exc.paragraph(), file=sys.stderr)
        return 2
    save_lines(scripts / "rows.json", {**kept, **rows}, seed=seed, max_examples=max_examples)
    shown = [(spec, *rows[spec]) for spec in everyone if spec in rows]
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text(out, render_lines(shown, seed=seed, max_examples=max_examples))
    print(f"wrote {out} ({len(shown)} agents, {checked} checked now)", file=sys.stderr)
    return 0


def _settings_of(saved: Path) -> tuple[int, int | None] | None:
    try:
        raw = json.loads(saved.read_text(encoding="utf-8"))
        cap = raw["max_examples"]
        return int(raw["seed"]), None if cap is None else int(cap)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _drop_stale_schedules(scripts: Path, spec: str, row: Row) -> None:
    """Remove the spec's schedules of classes that are no longer unsafe (their
    scripts go when no cell runs them: :func:`~.loops_scripts.write_scripts`)."""
    for scenario in SCENARIOS:
        if scenario.value not in row.scripts:
            (scripts / f"{slug(spec, scenario.value)}.json").unlink(missing_ok=True)


if __name__ == "__main__":
    raise SystemExit(main())

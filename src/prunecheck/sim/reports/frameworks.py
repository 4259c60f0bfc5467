"""``make frameworks``: the verdict table of framework trimmers.

Checks each framework trimmer of :data:`ROWS` (representative settings)
under each check placement with :func:`~prunecheck.sim.api.check.check_policy`
and writes ``reports/frameworks.md``: library, version, setting, verdict per
placement, time to the verdict and the reproduction's length; for every
unsafe row a standalone script (``reports/frameworks/<row>.py``) that
imports only that library and reproduces the broken result — each script is
run here, and the table says whether it reproduced.

Run: ``python -m prunecheck.sim.reports.frameworks --out reports/frameworks.md``.
Everything but the times is a function of ``--seed``.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from prunecheck.model.config import CheckAt, RuntimeConfig
from prunecheck.model.errors import PrunecheckError
from prunecheck.model.provider import Provider
from prunecheck.model.trace import Trace
from prunecheck.sim.api.minimal import AIM
from prunecheck.sim.reports.claims import INVARIANT
from prunecheck.sim.reports.same_trimmer import SAME_TRIMMER, for_policy
from prunecheck.sim.subjects.catalog import ADAPTERS
from prunecheck.sim.subjects.frameworks import framework_policy, library_version
from prunecheck.sim.subjects.frameworks.repro import Capture, capture, script
from prunecheck.sim.subjects.policy_spec import parse_spec
from prunecheck.sim.support.outputs import write_text

__all__ = ["ROWS", "Cell", "Row", "longest_line", "main", "markdown", "run_row"]

_PYDANTIC = "examples/frameworks/pydantic_ai_history.py"
#: The representative settings checked, one spec per row.
ROWS: tuple[str, ...] = (
    "langchain:strategy=last",
    "langchain:strategy=last,start_on=human,end_on=human+tool,include_system=true",
    "langchain-summarization:keep=6",
    "langchain-context-editing:keep=3",
    "autogen:context=buffered,buffer_size=6",
    "autogen:context=head_and_tail,head_size=2,tail_size=6",
    "autogen:context=token_limited",
    "llamaindex:memory=buffer",
    "llamaindex:memory=memory,token_flush_size=500",
    "semantic-kernel:reducer=truncation,target_count=6,threshold_count=2",
    "semantic-kernel:reducer=summarization,target_count=6,threshold_count=2",
    f"pydantic-ai:processor={_PYDANTIC}:keep_recent_messages",
    f"pydantic-ai:processor={_PYDANTIC}:summarize_old_messages",
    "openai-agents:limit=10",
    "openai-agents:limit=10,runtime=session",
)
PLACEMENTS = (CheckAt.AFTER_APPEND, CheckAt.AFTER_BATCH, CheckAt.BEFORE_INVOKE)


@dataclass(frozen=True, slots=True)
class Cell:
    """One placement's verdict."""

    verdict: str
    seconds: float
    events: int = 0
    violations: tuple[str, ...] = ()
    error: str = ""
    suite: int = 0
    scenarios: int = 0
    harm: int = 0  # events after the violation, up to the harm it causes
    bound: str = ""  # why a reproduction above the aim is not shorter


@dataclass(frozen=True, slots=True)
class Row:
    """One framework setting's verdicts, and its reproduction if unsafe."""

    spec: str
    library: str
    version: str
    cells: dict[str, Cell]
    found: Capture | None = None
    placement: str = ""
    script: str = ""
    reproduced: bool | None = None


def run_row(
    spec: str, *, seed: int, levels: Sequence[float], seeds: Sequence[int], max_examples: int
) -> Row:
    """Check one spec under every placement; capture its reproduction."""
    from prunecheck.sim.api.check import check_policy

    name = parse_spec(spec).adapter
    adapter = ADAPTERS[name]
    cells: dict[str, Cell] = {}
    found: Capture | None = None
    where = ""
    for placement in PLACEMENTS:
        config = RuntimeConfig(check_at=placement, provider=Provider.OPENAI)
        start = time.perf_counter()
        try:
            result = check_policy(
                spec,
                config=config,
                levels=levels,
                seeds=seeds,
                seed=seed,
                max_examples=max_examples,
            )
        except PrunecheckError as exc:
            cells[placement.value] = Cell(
                "error", time.perf_counter() - start, error=exc.paragraph()
            )
            continue
        seconds = time.perf_counter() - start
        repro = result.reproduction
        cells[placement.value] = Cell(
            result.verdict.value,
            seconds,
            _shrunk_length(repro),
            tuple(result.violations),
            result.error or "",
            sum(1 for run in result.scenarios if run.violations),
            len(result.scenarios),
            _harm_length(repro),
            _bound(repro),
        )
        if repro is not None:
            got = capture(repro, framework_policy(spec))
            if _better(got, found):
                found, where = got, placement.value
    # A script needs a history the library can be shown: when the search's
    # counterexample trims a history mid-turn, look for a complete one in the suite.
    for placement in reversed(PLACEMENTS):
        if found is not None and found.complete:
            break
        if not cells[placement.value].suite:
            continue
        config = RuntimeConfig(check_at=placement, provider=Provider.OPENAI)
        suite = check_policy(spec, config=config, levels=levels, seeds=seeds, max_examples=0)
        if suite.reproduction is not None:
            got = capture(suite.reproduction, framework_policy(spec))
            if _better(got, found):
                found, where = got, f"{placement.value}, simulated suite"
    return Row(spec, adapter.library, library_version(name), cells, found, where)


def _harm_length(repro: Trace | None) -> int:
    harm = repro.meta.get("harm") if repro is not None else None
    added = harm.get("added") if isinstance(harm, dict) else None
    return added if isinstance(added, int) else 0


def _shrunk_length(repro: Trace | None) -> int:
    """Events up to the violation (the harm after it is counted apart)."""
    return 0 if repro is None else len(repro.events) - _harm_length(repro)


def _bound(repro: Trace | None) -> str:
    """The shrinker's words when a reproduction stays above the aim."""
    if repro is None or _shrunk_length(repro) <= AIM:
        return ""
    shrunk = repro.meta.get("shrunk")
    bound = shrunk.get("bound") if isinstance(shrunk, dict) else None
    return str(bound) if bound else "not shrunk (no shrink record)"


def _better(got: Capture | None, found: Capture | None) -> bool:
    """Prefer a capture on a complete history; else keep the first found."""
    if got is None:
        return False
    return found is None or (got.complete and not found.complete)


def _relpath(path: Path, start: Path) -> str:
    import os

    return os.path.relpath(path, start)


def _slug(spec: str) -> str:
    parsed = parse_spec(spec)
    name, settings = parsed.adapter, parsed.settings
    settings = settings.replace(_PYDANTIC + ":", "")
    return re.sub(r"[^a-z0-9]+", "_", f"{name}_{settings}".lower()).strip("_")[:60]


def write_script(row: Row, folder: Path) -> Row:
    """Write and run the reproduction script of an unsafe row."""
    if row.found is None:
        return row
    from prunecheck.sim.subjects.frameworks.spec import parse_settings

    parsed = parse_spec(row.spec)
    name = parsed.adapter
    adapter = ADAPTERS[name]
    module = __import__(adapter.module, fromlist=[adapter.settings])
    settings_text = parsed.settings
    if name == "langchain":
        settings = module.parse_settings(settings_text)
    else:
        settings = parse_settings(getattr(module, adapter.settings), name, settings_text)
    path = folder / f"{_slug(row.spec)}.py"
    folder.mkdir(parents=True, exist_ok=True)
    write_text(
        path, script(name, row.spec, settings, row.library, row.version, row.found, row.placement)
    )
    done = subprocess.run(
        [sys.executable, str(path)], capture_output=True, text=True, timeout=300, check=False
    )
    return replace(
        row, script=str(path), reproduced=done.returncode == 1 and "BROKEN:" in done.stdout
    )


def _cell(cell: Cell) -> str:
    if cell.verdict == "unsafe":
        mark = "" if cell.suite else " †"
        harm = f" +{cell.harm} to the harm" if cell.harm else ""
        return f"**UNSAFE** ({cell.events} ev{harm}; suite {cell.suite}/{cell.scenarios}){mark}"
    return f"{cell.verdict} (suite 0/{cell.scenarios})" if cell.verdict == "safe" else cell.verdict


def markdown(rows: Sequence[Row], *, seed: int, root: Path, base: Path | None = None) -> str:
    """The report; links are relative to ``base`` (the report's folder,
    default ``root/reports``), commands to ``root`` (the repository)."""
    base = base or root / "reports"

    def link(script: str) -> str:
        path = Path(script).resolve()
        return Path(_relpath(path, base.resolve())).as_posix()

    out = [
        "# Framework trimmers: verdicts",
        "",
        "Generated by `make frameworks` (`python -m prunecheck.sim.reports.frameworks`, "
        f"seed {seed}). Each framework trimmer runs as the library runs it (see "
        "`prunecheck policies`), checked with `check_policy(spec, config=RuntimeConfig("
        "check_at=...))` under each check placement: the fixed simulated suite and the "
        "adversarial search, gate `none`, provider rules OpenAI. A verdict holds for the "
        "runtime it names: *after_append* trims whenever a message lands (calls may be "
        "pending, results streaming), *before_invoke* trims only right before a model "
        "call, which is where these libraries call their trimmer. Both the suite and "
        "the search fire budget checks only where the placement puts them. The "
        "reproduction scripts show the trimmer's own output on the history it was given.",
        "",
        "*Unsafe* means that some run broke the invariant prunecheck checks, stated in "
        "the words of the incident report it was built from:",
        "",
        f"> “{INVARIANT}”",
        "",
        "A tool call and its result, and the calls of one parallel batch, form one unit; a "
        "trimmer that keeps part of a unit, or removes a message whose call is still "
        "pending or whose result is still streaming, leaves a context the provider rejects "
        "(HTTP 400) or that silently lost content. The unsafe rows below name what each "
        "run saw.",
        "",
        "Messages carry text of their declared size (4 characters per token). In a "
        "cell, 'N ev' is the length of the shrunk reproduction up to its violation "
        f"(aim: {AIM} or fewer), '+k to the harm' the events after it that reach the "
        "harm it causes (the rejected invocation, the retry), and 'suite k/n' the "
        "simulated scenarios that saw a violation; "
        "† marks an *unsafe* found by the search alone (0 suite scenarios). "
        "Times are wall-clock seconds of each check on a shared "
        "2-core machine (the only figures that vary between runs).",
        "",
        "| library | version | setting | after_append | after_batch | before_invoke "
        "| time (s) | reproduction |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        cells = [_cell(row.cells[p.value]) for p in PLACEMENTS]
        times = " / ".join(f"{row.cells[p.value].seconds:.0f}" for p in PLACEMENTS)
        shown = "-"
        if row.script:
            shown = f"[{Path(row.script).name}]({link(row.script)})"
            if row.reproduced is False:
                shown += " (did not reproduce)"
        out.append(
            f"| {row.library} | {row.version} | `{row.spec}` | {' | '.join(cells)} "
            f"| {times} | {shown} |"
        )
    out += ["", longest_line(rows)]
    differ = [s for s in SAME_TRIMMER if any(r.spec == s.policy for r in rows)]
    if differ:
        out += [
            "",
            "A trimmer alone is not a trimmer inside its framework's loop, which may "
            "change what it returns before a request leaves. Where "
            "[loops.md](loops.md) (each example agent in its framework's own loop) "
            "differs: "
            + "; ".join(
                f"`{s.policy}` is {s.alone} here and {s.in_loop} in `{s.loop}` ({s.why})"
                for s in differ
            )
            + ".",
        ]
    out += ["", "## Unsafe rows", ""]
    for row in rows:
        bad = {p: c for p, c in row.cells.items() if c.verdict != "safe"}
        if not bad:
            continue
        out.append(f"### `{row.spec}` ({row.library} {row.version})")
        out.append("")
        same = for_policy(row.spec)
        if same is not None:  # the same trimmer inside its framework's loop: another verdict
            out.append(f"* inside its framework's own loop: {same.in_loop} at the trim hook in "
                       f"[loops.md](loops.md) (`{same.loop}`), while {same.alone} here, alone: "
                       f"{same.why}. Each verdict holds for the runtime it names.")  # fmt: skip
        for placement, cell in bad.items():
            what = ", ".join(v.replace("_", " ") for v in cell.violations) or cell.error
            out.append(f"* {placement}: {cell.verdict} — {what}")
            if cell.bound:
                out.append(f"  * reproduction above {AIM} events: {cell.bound}")
        if row.found is not None:
            kind = (
                "**the trimmer itself breaks a complete, valid history** (nothing "
                "streaming, every call answered): unsafe wherever it runs, before_invoke "
                "included"
                if row.found.complete
                else "the trimmer ran on a history with a call pending or a message "
                "streaming: unsafe in a runtime that trims there, not on its own a "
                "library bug"
            )
            out.append(f"* reproduction (captured at {row.placement}): {kind}.")
            for problem in row.found.problems:
                out.append(f"  * {problem}")
            if row.script:
                where = Path(row.script).resolve().relative_to(root.resolve()).as_posix()
                state = {True: "reproduces", False: "did NOT reproduce", None: "not run"}[
                    row.reproduced
                ]
                out.append(
                    f"* script: [{where}]({link(row.script)}) — `python {where}` {state} "
                    "it with "
                    f"{row.library} alone."
                )
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def longest_line(rows: Sequence[Row]) -> str:
    """The bound the table's reproductions reach: the longest one, in events
    up to its violation, against the aim (and the rows above it, if any)."""
    cells = [(row, p, c) for row in rows for p, c in row.cells.items() if c.verdict == "unsafe"]
    if not cells:
        return "No reproduction: no row is unsafe."
    row, placement, cell = max(cells, key=lambda item: (item[2].events, item[2].harm))
    above = [f"`{r.spec}` at {p}" for r, p, c in cells if c.events > AIM]
    line = (
        f"Longest reproduction: **{cell.events} events** up to its violation "
        f"(`{row.spec}` at {placement}"
        + (f", then +{cell.harm} to the harm" if cell.harm else "")
        + f") over {len(cells)} unsafe cells; aim: {AIM} or fewer"
    )
    if above:
        return line + f". Above the aim: {', '.join(above)} (each says why below)."
    return line + ": every reproduction is within it."


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m prunecheck.sim.reports.frameworks",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--out", default="reports/frameworks.md")
    parser.add_argument("--scripts", default="reports/frameworks")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-examples", type=int, default=100)
    parser.add_argument("--only", metavar="TEXT", help="rows whose spec contains TEXT")
    args = parser.parse_args(argv)
    out = Path(args.out)
    root = out.parent.parent if out.parent.name == "reports" else out.parent
    rows = []
    for spec in ROWS:
        if args.only and args.only not in spec:
            continue
        row = run_row(
            spec,
            seed=args.seed,
            levels=(0.2, 0.6, 1.0),
            seeds=(1, 2),
            max_examples=args.max_examples,
        )
        row = write_script(row, Path(args.scripts))
        verdicts = " ".join(f"{p}={c.verdict}" for p, c in row.cells.items())
        print(
            f"{row.spec}: {verdicts}"
            + (f" · script {row.script} reproduced={row.reproduced}" if row.script else ""),
            flush=True,
        )
        rows.append(row)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text(out, markdown(rows, seed=args.seed, root=root, base=out.parent))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

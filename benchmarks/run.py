"""Run every benchmark module and write one markdown report.

Each ``benchmarks/bench_*.py`` exposes ``TITLE: str`` and
``run(quick: bool) -> str`` returning a markdown section (tables of figures
measured side by side in this one run).  ``--only NAME`` runs one module and
replaces its section of an existing report (or adds it), keeping the others;
``--quick`` shrinks sizes for a smoke run.

    python benchmarks/run.py --out reports/bench.md
"""

from __future__ import annotations

import argparse
import importlib.util
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", default="reports/bench.md")
    parser.add_argument("--only", help="run only benchmarks/bench_NAME.py")
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    args = parser.parse_args()
    files = sorted(HERE.glob("bench_*.py"))
    if args.only:
        files = [f for f in files if f.stem == f"bench_{args.only}"]
        if not files:
            print(f"benchmarks: no benchmarks/bench_{args.only}.py", file=sys.stderr)
            return 2
    sections = [
        "# prunecheck benchmarks\n",
        f"Machine: {platform.machine()}, {platform.python_implementation()} "
        f"{platform.python_version()}, {platform.system()}. Every ratio below compares "
        "figures measured side by side in this one run; absolute times vary with the "
        "(shared, noisy) machine.\n",
    ]
    for path in files:
        spec = importlib.util.spec_from_file_location(path.stem, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module  # dataclasses look their module up while defining
        spec.loader.exec_module(module)
        print(f"benchmarks: {path.stem} ...", file=sys.stderr, flush=True)
        started = time.perf_counter()
        body = module.run(args.quick)
        took = time.perf_counter() - started
        sections.append(f"## {module.TITLE}\n\n{body.strip()}\n\n_({path.name}, {took:.0f} s)_\n")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if args.only and out.is_file():
        sections = _merged(out.read_text(encoding="utf-8"), sections[2:])
    out.write_text("\n".join(sections), encoding="utf-8")
    print(f"benchmarks: wrote {out}", file=sys.stderr)
    return 0


def _merged(report: str, new: list[str]) -> list[str]:
    """The sections of ``report`` with each of ``new`` in place of the one of
    the same title (or added at the end)."""
    head, *old = report.split("\n## ")
    kept = [head.rstrip("\n") + "\n"] + ["## " + part.rstrip("\n") + "\n" for part in old]
    for section in new:
        title = section.split("\n", 1)[0]
        at = next((i for i, s in enumerate(kept) if s.split("\n", 1)[0] == title), None)
        if at is None:
            kept.append(section)
        else:
            kept[at] = section
    return kept


if __name__ == "__main__":
    sys.exit(main())

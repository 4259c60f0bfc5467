"""``make loops`` (sim/reports/loops.py) on the fake framework: rows, scripts, determinism."""

from __future__ import annotations

import re
from pathlib import Path

from prunecheck.sim.reports.loops import GUARD_NOTE, discover, main

FAKE = Path(__file__).resolve().parent / "loops_fake.py"


def _examples(folder: Path) -> Path:
    folder.mkdir()
    (folder / "a.py").write_text(
        f'"""Check with::\n\n    prunecheck check loop:{FAKE}:buggy\n"""\n', encoding="utf-8"
    )
    (folder / "b.py").write_text(
        f'"""prunecheck check loop:{FAKE}:trimming_buggy and again\n'
        f'prunecheck check loop:{FAKE}:buggy"""\n',
        encoding="utf-8",
    )
    return folder


def test_the_table_is_the_same_bar_the_wall_clock_for_the_same_seed(tmp_path: Path) -> None:
    examples = _examples(tmp_path / "ex")
    assert discover(examples) == [f"loop:{FAKE}:buggy", f"loop:{FAKE}:trimming_buggy"]
    tables = []
    for n in (1, 2):
        out = tmp_path / f"run{n}" / "loops.md"
        argv = ["--out", str(out), "--scripts", str(out.parent / "loops"), "--examples",
                str(examples), "--seed", "1", "--max-examples", "40", "--no-run"]  # fmt: skip
        assert main(argv) == 0
        tables.append(re.sub(r"\| \d+ s \|", "| - |", out.read_text(encoding="utf-8")))
        scripts = sorted(p.name for p in (out.parent / "loops").iterdir())
        assert "loops_fake-buggy-crash_new_message.py" in scripts
    assert tables[0] == tables[1]
    table = tables[0]
    assert "| `loop:" in table and "**UNSAFE**" in table and "n/a: no human-in-the-loop" in table
    assert "orphaned_result" in table  # the trim that cuts units, at the framework's hook
    assert "](loops/loops_fake-buggy-crash_new_message.py)" in table and GUARD_NOTE in table

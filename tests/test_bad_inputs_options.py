"""Bad-input cases of issue 30's options part: an option given with a
``loop:`` subject that does not apply to it, a bad value of one that does,
and ``--scenario`` given with a subject that is not a loop.

They reuse :mod:`test_bad_inputs`' machinery (:class:`Case`, ``_c``, ``_run``
and its ``case_dir`` fixture) and assert what it asserts: the exit status
(2), no traceback, one paragraph on stderr naming the option, nothing on
stdout (no JSON document under ``--json``), and no file in the case folder
changed (no bundle, no JUnit report).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from test_bad_inputs import Case, _c, _run, case_dir

__all__ = ["case_dir"]  # the fixture, imported for pytest

FAKE = f"loop:{Path(__file__).resolve().parent / 'loops_fake.py'}:careful"
CHECK = f"check {FAKE} --max-examples 2"
SEARCH = f"search {FAKE} --max-examples 2"

CASES = [
    # an option that does not apply to an agent loop: refused naming it (one per kind of rule)
    _c("check-loop-gate", f"{CHECK} --gate commit",
       needle="--gate: does not apply to an agent loop"),
    _c("check-loop-budget-json", f"{CHECK} --budget 4000 --json", needle="--budget"),
    _c("check-loop-levels-junit", f"{CHECK} --levels 0.5 --junit {{tmp}}/r.xml", needle="--levels"),
    _c("check-loop-policy-timeout", f"{CHECK} --policy-timeout 3", needle="--policy-timeout"),
    _c("search-loop-provider", f"{SEARCH} --provider openai", needle="--provider"),
    _c("search-loop-max-chunks-out", f"{SEARCH} --max-chunks 2 --out {{tmp}}/repro",
       needle="--max-chunks"),
    _c("search-loop-format", f"{SEARCH} --format openai", needle="--format"),
    # a bad value of an option that applies (the failure database is a folder, not a file)
    _c("check-loop-failures-file", f"{CHECK} --failures {{tmp}}/empty.json",
       needle="failure database is a folder"),
    _c("search-loop-failures-file", f"{SEARCH} --failures {{tmp}}/empty.json",
       needle="failure database is a folder"),
    _c("check-loop-max-examples-0", f"check {FAKE} --max-examples 0", needle="--max-examples 0"),
    _c("check-loop-scenario-unknown", f"{CHECK} --scenario cancel,nap", needle="--scenario 'nap'"),
    _c("check-loop-junit-folder", f"{CHECK} --junit {{tmp}}", needle="--junit"),
    _c("check-loop-out-holds-files", f"{CHECK} --out {{tmp}}/held", needle="already holds files"),
    *(
        _c(f"search-loop-{flag}-{value}", f"{SEARCH} --{flag} {value}", needle=f"--{flag}")
        for flag, value in (
            ("max-calls", "0"),
            ("max-batches", "0"),
            ("max-steps", "0"),
            ("sizes", "0"),
            ("sizes", "a,b"),
            ("time-steps", "soon"),
            ("target", "nonsense"),
        )
    ),
    # --scenario names a loop's scenario classes: refused for any other subject
    _c("check-policy-scenario", "check recency --scenario cancel --max-examples 2",
       needle="--scenario"),
    _c("search-policy-scenario", "search recency --scenario cancel --max-examples 2",
       needle="--scenario"),
    _c("search-runtime-scenario",
       "search runtime:examples/agent_loop.py:NaiveLoop --scenario parallel --max-examples 2",
       needle="--scenario"),
]  # fmt: skip


def _snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` and the digest of its bytes."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_bad_option_input(case: Case, case_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (case_dir / "held").mkdir()
    (case_dir / "held" / "notes.txt").write_text("the user's notes\n", encoding="utf-8")
    before = _snapshot(case_dir)
    status, out, err = _run(case, case_dir, capsys)
    assert status == case.status, (status, out[-2000:], err[-2000:])
    assert "Traceback" not in out and "Traceback" not in err
    paragraph = [line for line in err.splitlines() if line.startswith("prunecheck")]
    assert len(paragraph) == 1, err[-2000:]
    assert case.needle in paragraph[0], paragraph[0]
    assert out == ""
    assert _snapshot(case_dir) == before

"""Bad-input cases of issue 36's output part: progress, ``--json``,
``--junit``, ``--help`` and imported labels.

They reuse :mod:`test_bad_inputs`' machinery (:class:`Case`, ``_c``,
``_run`` and its ``case_dir`` fixture) and assert what it asserts: the exit
status, no traceback, one paragraph on stderr naming the input, and that no
file in the case folder changed.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from test_bad_inputs import DOCUMENTED_TRACE, Case, _c, _run, case_dir

__all__ = ["case_dir"]  # the fixture, imported for pytest

CASES = [
    *(
        _c(
            f"{cmd.split()[0]}-env-progress-{value}",
            cmd,
            needle="PRUNECHECK_PROGRESS_INTERVAL",
            env={"PRUNECHECK_PROGRESS_INTERVAL": value},
        )
        for cmd in (
            "search recency --max-examples 2",
            f"replay {DOCUMENTED_TRACE}",
            "check recency --levels 0.5 --seeds 1 --max-examples 2 --horizon 5",
            "sweep --out {tmp}/r.jsonl recency --gate none --levels 0.5 --seeds 1 --jobs 1",
        )
        for value in ("-1", "soon", "nan", "inf")
    ),
]


def _snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` and the digest of its bytes."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_bad_output_input(
    case: Case, case_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for var, value in case.env if not case.subprocess else ():
        monkeypatch.setenv(var, value)
    before = _snapshot(case_dir)
    status, out, err = _run(case, case_dir, capsys)
    assert status == case.status, (status, out[-2000:], err[-2000:])
    assert "Traceback" not in out and "Traceback" not in err
    if case.status == 2:
        paragraph = [line for line in err.splitlines() if line.startswith("prunecheck")]
        assert len(paragraph) == 1, err[-2000:]
        assert case.needle in paragraph[0], paragraph[0]
        assert out == ""
    assert _snapshot(case_dir) == before

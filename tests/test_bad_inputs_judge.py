"""Bad-input cases of the loop judge's options (issue 31), run by the
machinery of ``tests/test_bad_inputs.py``: ``--fail-on-framework`` gates on an
agent loop's framework findings and is refused for any other subject.  Each
asserts the exit status, one paragraph naming the option on stderr, no
traceback, and that no file of the case's folder changed."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import test_bad_inputs
from test_bad_inputs import Case, _c, _run

case_dir = test_bad_inputs.case_dir  # the fixture

CASES = [
    _c("fail-on-framework-policy", "check recency --fail-on-framework",
       needle="--fail-on-framework"),
    _c("fail-on-framework-search-policy", "search recency --max-examples 2 --fail-on-framework",
       needle="is not a loop: spec"),
]  # fmt: skip


def _tree(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input(case: Case, case_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = _tree(case_dir)
    status, out, err = _run(case, case_dir, capsys)
    assert status == case.status, (status, out[-2000:], err[-2000:])
    assert "Traceback" not in out and "Traceback" not in err
    paragraph = err.strip()
    assert paragraph and "\n\n" not in paragraph and case.needle in paragraph
    assert paragraph.count("--fail-on-framework") >= 1
    assert _tree(case_dir) == before

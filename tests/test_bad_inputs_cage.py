"""Bad-input cases of the policy cage and user code (issue 36), run by the
machinery of ``tests/test_bad_inputs.py``: each asserts the exit status, one
paragraph with its phrase on stderr, no traceback, nothing a policy prints
on stdout, and that no user file changed."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import test_bad_inputs
from test_bad_inputs import Case, _c, _run

case_dir = test_bad_inputs.case_dir  # the fixture

_STATELESS = "--levels 0.5 --seeds 1 --max-examples 2 --horizon 5"

_RAISES = "{bad}/raises_index.py"
_ASKED = "--levels 0.5 --seeds 1 --max-examples 1 --horizon 5 --budget 200"  # asked at once
_AT_SELECT = "line 12: return [ids[len(ids) + 5]])"
_AT_TRIM = "line 16: return [messages[len(messages) + 5]])"
_AT_FEED = "line 27: self.fed[3 - len(self.fed) + 5])"
_OFF = {"PRUNECHECK_CAGE": "0"}

CASES = [
    # a policy or runtime that raises: its file, line and code, in one paragraph
    *(
        _c(
            f"{name}-raises-index{'-uncaged' if env else ''}",
            argv,
            needle=needle,
            env=env,
        )
        for env in (None, _OFF)
        for name, argv, needle in (
            ("check", f"check {_RAISES}:select {_ASKED}", _AT_SELECT),
            ("search", f"search {_RAISES}:select --max-examples 5 --budget 200", _AT_SELECT),
            ("explore", f"explore {_RAISES}:select --depth 3", _AT_SELECT),
            ("check-list", f"check {_RAISES}:trim@openai {_ASKED}", _AT_TRIM),
            ("check-runtime", f"check runtime:{_RAISES}:Runtime {_ASKED}", _AT_FEED),
            ("search-runtime", f"search runtime:{_RAISES}:Runtime --max-examples 5", _AT_FEED),
        )
    ),
    _c(
        "check-framework-setting-twice",
        f"check autogen:context=buffered,buffer_size=3,buffer_size=9 {_STATELESS}",
        needle="buffer_size is given twice",
    ),
    _c(
        "search-framework-setting-twice",
        "search langchain:strategy=last,strategy=first --max-examples 2",
        needle="strategy is given twice",
    ),
]


def _tree(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize(
    "case", [pytest.param(c, id=c.name, marks=[pytest.mark.slow] if c.slow else []) for c in CASES]
)
def test_bad_input(
    case: Case, case_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for var, value in case.env if not case.subprocess else ():
        monkeypatch.setenv(var, value)
    before = _tree(case_dir)
    status, out, err = _run(case, case_dir, capsys)
    assert status == case.status, (status, out[-2000:], err[-2000:])
    assert "Traceback" not in out and "Traceback" not in err
    assert "POLICY-STDOUT" not in out
    if case.status == 2:
        paragraph = [line for line in err.splitlines() if line.startswith("prunecheck")]
        assert len(paragraph) == 1, err[-2000:]
        assert case.needle in paragraph[0], paragraph[0]
    assert not (case_dir / "evil-ran.txt").exists()
    assert _tree(case_dir) == before

"""Bad-input cases of black-box mode's input over HTTP (``input = "http"``), run by the
machinery of ``tests/test_bad_inputs.py`` and ``tests/test_bad_inputs_blackbox.py``: the exit
status, one paragraph with its phrase on stderr, no traceback, and no user file changed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import test_bad_inputs
from test_bad_inputs import Case, _c, _check, _run
from test_bad_inputs_blackbox import _ARGS, _TOOL, _tree

case_dir = test_bad_inputs.case_dir  # the fixture

MANIFESTS = {"http-no-url.toml": f'command = ["x"]\ninput = "http"\n{_TOOL}'}
CASES = [
    _c(
        "process-http-input-without-its-url",
        f"check loop:process:{{tmp}}/http-no-url.toml {_ARGS}",
        needle="needs the placeholder {input_url}",
    ),
]


@pytest.mark.skipif(sys.platform != "linux", reason="black-box mode reads /proc")
@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_bad_input(case: Case, case_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name, text in MANIFESTS.items():
        (case_dir / name).write_text(text)
    before = _tree(case_dir)
    status, out, err = _run(case, case_dir, capsys)
    _check(case, case_dir, status, out, err)
    assert _tree(case_dir) == before  # no user file changed

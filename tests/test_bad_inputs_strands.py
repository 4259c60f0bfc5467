"""Bad input to the Strands Agents loop adapter (issue 35), with the machinery of
tests/test_bad_inputs.py: an installed strands-agents outside the releases the
adapter drives, with and without naming the framework in the spec, is refused
before anything of Strands is imported for a run (exit status 2, one paragraph
naming the installed and the supported releases and what to install), and
``loop:strands:`` on an object that is no Strands agent is refused too."""

from __future__ import annotations

from pathlib import Path

import pytest
import test_bad_inputs
from test_bad_inputs import Case, _c, _check, _run

from prunecheck.sim.subjects.loops import versions

case_dir = test_bad_inputs.case_dir  # the fixture

ROOT = Path(__file__).resolve().parent.parent
SLIDING = ROOT / "examples" / "loops" / "strands_sliding.py"

CASES = [
    _c(
        "strands-too-new",
        f"check loop:{SLIDING}:agent --max-examples 2",
        needle="strands-agents 2.0.0 is installed; prunecheck's strands adapter drives "
        "strands-agents >=1.34.0,<2",
    ),
    _c(
        "strands-too-new-named",
        f"check loop:strands:{SLIDING}:agent --max-examples 2",
        needle="pip install 'strands-agents>=1.34.0,<2'",
    ),
    _c(
        "strands-not-an-agent",
        f"check loop:strands:{SLIDING}:search --max-examples 2",
        needle="search is not a strands agent",
    ),
]


@pytest.fixture(autouse=True)
def _framework() -> None:
    pytest.importorskip("strands")


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_bad_input(
    case: Case, case_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    if "too-new" in case.name:
        real = versions.installed
        monkeypatch.setattr(
            versions, "installed", lambda d: "2.0.0" if d == "strands-agents" else real(d)
        )
    before = sorted(p.name for p in case_dir.iterdir())
    status, out, err = _run(case, case_dir, capsys)
    _check(case, case_dir, status, out, err)
    assert sorted(p.name for p in case_dir.iterdir()) == before  # nothing written

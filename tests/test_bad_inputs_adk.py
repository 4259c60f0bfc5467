"""Bad input to the Google ADK loop adapter (issue 35), with the machinery of
tests/test_bad_inputs.py: an installed google-adk outside the releases the
adapter drives, with and without naming the framework in the spec, is refused
(exit status 2, one paragraph naming the installed and the supported releases
and what to install), and ``loop:adk:`` on an object that is no ADK agent, App
or Runner is refused too.  The cases that import the example (ADK costs about
1.3 s of CPU to import) are slow; the fast one takes the same refusal path on a
module without ADK."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import test_bad_inputs
from test_bad_inputs import Case, _c, _check, _run

from prunecheck.sim.subjects.loops import versions

case_dir = test_bad_inputs.case_dir  # the fixture

ROOT = Path(__file__).resolve().parent.parent
FILTER = ROOT / "examples" / "loops" / "adk_context_filter.py"
NO_ADK = ROOT / "tests" / "bad_loops.py"

CASES = [
    _c(
        "adk-too-new",
        f"check loop:{FILTER}:app --max-examples 2",
        needle="google-adk 3.0.0 is installed; prunecheck's adk adapter drives "
        "google-adk >=2.13.0,<3",
        slow=True,
    ),
    _c(
        "adk-too-new-named",
        f"check loop:adk:{FILTER}:app --max-examples 2",
        needle="pip install 'google-adk>=2.13.0,<3'",
        slow=True,
    ),
    _c(
        "adk-not-an-agent",
        f"check loop:adk:{FILTER}:search --max-examples 2",
        needle="search is not a adk agent",
        slow=True,
    ),
    _c(
        "adk-not-an-agent-fast",
        f"check loop:adk:{NO_ADK}:_Spinner --max-examples 2",
        needle="_Spinner is not a adk agent",
    ),
]


@pytest.fixture(autouse=True)
def _framework() -> None:
    if importlib.util.find_spec("google.adk") is None:  # found, not imported (1.3 s of CPU)
        pytest.skip("google-adk is not installed")


@pytest.mark.parametrize(
    "case",
    [pytest.param(c, id=c.name, marks=[pytest.mark.slow] if c.slow else []) for c in CASES],
)
def test_bad_input(
    case: Case, case_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    if "too-new" in case.name:
        real = versions.installed
        monkeypatch.setattr(
            versions, "installed", lambda d: "3.0.0" if d == "google-adk" else real(d)
        )
    before = sorted(p.name for p in case_dir.iterdir())
    status, out, err = _run(case, case_dir, capsys)
    _check(case, case_dir, status, out, err)
    assert sorted(p.name for p in case_dir.iterdir()) == before  # nothing written

"""Bad input to the Microsoft Agent Framework loop adapter (issue 35), with the
machinery of tests/test_bad_inputs.py: an installed agent-framework-core
outside the releases the adapter drives, with and without naming the
framework in the spec, is refused before anything of the framework is
imported for a run (exit status 2, one paragraph naming the installed and the
supported releases and what to install), and ``loop:maf:`` on an object that
is no Agent Framework agent is refused too."""

from __future__ import annotations

from pathlib import Path

import pytest
import test_bad_inputs
from test_bad_inputs import Case, _c, _check, _run

from prunecheck.sim.subjects.loops import versions

case_dir = test_bad_inputs.case_dir  # the fixture

ROOT = Path(__file__).resolve().parent.parent
COMPACTION = ROOT / "examples" / "loops" / "maf_compaction.py"

CASES = [
    _c(
        "maf-too-new",
        f"check loop:{COMPACTION}:agent --max-examples 2",
        needle="agent-framework-core 2.0.0 is installed; prunecheck's maf adapter drives "
        "agent-framework-core >=1.9.0,<2",
    ),
    _c(
        "maf-too-new-named",
        f"check loop:maf:{COMPACTION}:agent --max-examples 2",
        needle="pip install 'agent-framework-core>=1.9.0,<2'",
    ),
    _c(
        "maf-not-an-agent",
        f"check loop:maf:{COMPACTION}:search --max-examples 2",
        needle="search is not a maf agent",
    ),
]


@pytest.fixture(autouse=True)
def _framework() -> None:
    pytest.importorskip("agent_framework")
    pytest.importorskip("agent_framework_openai")


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_bad_input(
    case: Case, case_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    if "too-new" in case.name:
        real = versions.installed
        monkeypatch.setattr(
            versions, "installed", lambda d: "2.0.0" if d == "agent-framework-core" else real(d)
        )
    before = sorted(p.name for p in case_dir.iterdir())
    status, out, err = _run(case, case_dir, capsys)
    _check(case, case_dir, status, out, err)
    assert sorted(p.name for p in case_dir.iterdir()) == before  # nothing written

"""Bad input to the LlamaIndex loop adapters (issue 35), with the machinery of
tests/test_bad_inputs.py: an installed llama-index-core outside the releases the
workflow agents' adapter drives, with and without naming the framework in the
spec, is refused before a run (exit status 2, one paragraph naming the
installed and the supported releases and what to install); ``loop:llamaindex:``
on an object that is no LlamaIndex agent is refused, and
``loop:llamaindex-openai-agent:`` (LlamaIndex 0.11's OpenAIAgent) with llama-index-core 0.14
installed is refused naming the 0.11 releases it drives."""

from __future__ import annotations

from pathlib import Path

import pytest
import test_bad_inputs
from test_bad_inputs import Case, _c, _check, _run

from prunecheck.sim.subjects.loops import versions

case_dir = test_bad_inputs.case_dir  # the fixture

ROOT = Path(__file__).resolve().parent.parent
WINDOW = ROOT / "examples" / "loops" / "llamaindex_window.py"

CASES = [
    _c(
        "llamaindex-too-new",
        f"check loop:{WINDOW}:agent --max-examples 2",
        needle="llama-index-core 0.15.0 is installed; prunecheck's llamaindex adapter drives "
        "llama-index-core >=0.14.25,<0.15",
    ),
    _c(
        "llamaindex-too-new-named",
        f"check loop:llamaindex:{WINDOW}:agent --max-examples 2",
        needle="pip install 'llama-index-core>=0.14.25,<0.15'",
    ),
    _c(
        "llamaindex-not-an-agent",
        f"check loop:llamaindex:{WINDOW}:search --max-examples 2",
        needle="search is not a llamaindex agent",
    ),
    _c(
        "llamaindex-openai-agent-on-a-workflow-agent",
        f"check loop:llamaindex-openai-agent:{WINDOW}:agent --max-examples 2",
        needle="is installed; prunecheck's llamaindex-openai-agent adapter drives "
        "llama-index-agent-openai >=0.3.4,<0.4, llama-index-core >=0.11.13,<0.12",
    ),
]


@pytest.fixture(autouse=True)
def _framework() -> None:
    pytest.importorskip("llama_index.core")
    pytest.importorskip("llama_index.llms.anthropic")


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_bad_input(
    case: Case, case_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    if "too-new" in case.name:
        real = versions.installed
        monkeypatch.setattr(
            versions, "installed", lambda d: "0.15.0" if d == "llama-index-core" else real(d)
        )
    before = sorted(p.name for p in case_dir.iterdir())
    status, out, err = _run(case, case_dir, capsys)
    _check(case, case_dir, status, out, err)
    assert sorted(p.name for p in case_dir.iterdir()) == before  # nothing written

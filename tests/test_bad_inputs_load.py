"""Bad-input cases of loading and caging a user's agent loop (issue 31), run by
the machinery of ``tests/test_bad_inputs.py``: a module or factory that exits,
calls ``os._exit``, raises ``KeyboardInterrupt`` or connects out at import; an
agent whose code does so in a run, or hangs; an adapter whose framework
module moved (an ``ImportError`` in a turn); a framework release the adapter
does not drive.  Each asserts the exit status, one paragraph with its phrase
on stderr, no traceback, and that no file of the case's folder changed."""

from __future__ import annotations

import hashlib
import importlib.util
from collections.abc import Callable
from pathlib import Path

import pytest
import test_bad_inputs
from test_bad_inputs import Case, _c, _run

#: An aborted run leaves nothing that prints a traceback when it is finalized later
#: (the framework's suspended generators: confine._forget drops them quietly).
#: pydantic-ai is looked for, not imported, at collection: every xdist worker
#: collects every test file, and importing it there cost each worker about 1 s of CPU.
pytestmark = [
    pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning"),
    pytest.mark.skipif(
        importlib.util.find_spec("pydantic_ai") is None, reason="pydantic-ai is not installed"
    ),
]

case_dir = test_bad_inputs.case_dir  # the fixture

LOAD = Path(__file__).resolve().parent / "load_agents"
BAD = f"{LOAD}/misbehaving.py"
_ONE = "--max-examples 2 --scenario parallel"
_WHILE_IMPORTING = "while importing"

CASES = [
    # the module, at import
    _c("load-import-exits", f"check loop:{LOAD}/exits_at_import.py:agent",
       needle="called sys.exit(3)"),
    _c("load-import-os-exits", f"check loop:{LOAD}/os_exits_at_import.py:agent",
       needle="called os._exit(4)"),
    _c("load-import-interrupts", f"search loop:{LOAD}/interrupts_at_import.py:agent",
       needle="raised KeyboardInterrupt"),
    _c("load-import-connects", f"check loop:{LOAD}/connects_at_import.py:agent",
       needle="prunecheck refused the connection to api.openai.com:443"),
    # the factory, when prunecheck builds the agent
    _c("load-factory-raises", f"check loop:{BAD}:factory_raises {_ONE}",
       needle="raised ValueError: no configuration file"),
    _c("load-factory-exits", f"check loop:{BAD}:factory_exits {_ONE}",
       needle="called sys.exit(5)"),
    _c("load-factory-os-exits", f"search loop:{BAD}:factory_os_exits {_ONE}",
       needle="called os._exit(6)"),
    _c("load-factory-interrupts", f"check loop:{BAD}:factory_interrupts {_ONE}",
       needle="raised KeyboardInterrupt"),
    # the agent's own code in a run (a history processor)
    _c("run-exits", f"check loop:{BAD}:exits_in_run {_ONE}", needle="called sys.exit(7)"),
    _c("run-os-exits", f"search loop:{BAD}:os_exits_in_run {_ONE}",
       needle="called os._exit(8)"),
    _c("run-interrupts", f"check loop:{BAD}:interrupts_in_run {_ONE}",
       needle="raised KeyboardInterrupt"),
    _c("run-hangs", f"check loop:{BAD}:hangs_in_run {_ONE}",
       needle="did not return within 0.5 s of real time"),
    _c("run-ctrl-c", f"check loop:{BAD}:ctrl_c_in_run {_ONE}", status=130),
    # the adapter and the framework's release
    _c("adapter-import-error", f"check loop:{LOAD}/pydantic_ai_string.py:agent {_ONE}",
       needle="cannot import name 'FunctionToolset'"),
    _c("framework-too-old", f"check loop:{LOAD}/pydantic_ai_string.py:agent {_ONE}",
       needle="pydantic-ai-slim 2.9.0 is installed"),
    _c("framework-named-too-old", f"search loop:pydantic-ai:{LOAD}/pydantic_ai_string.py:agent",
       needle="drives pydantic-ai-slim >="),
    # as a user runs it: a subprocess (os._exit for real would end it with its own status)
    _c("process-run-os-exits", f"check loop:{BAD}:os_exits_in_run {_ONE}",
       needle="called os._exit(8)", sub=True, slow=True),
]  # fmt: skip


def _too_old(monkeypatch: pytest.MonkeyPatch) -> None:
    from prunecheck.sim.subjects.loops import versions

    real = versions.installed
    monkeypatch.setattr(
        versions, "installed", lambda dist: "2.9.0" if dist == "pydantic-ai-slim" else real(dist)
    )


def _moved(monkeypatch: pytest.MonkeyPatch) -> None:
    import pydantic_ai.toolsets

    monkeypatch.delattr(pydantic_ai.toolsets, "FunctionToolset")  # as if a release moved it


def _short(monkeypatch: pytest.MonkeyPatch) -> None:
    from prunecheck.sim.subjects.loops import confine

    monkeypatch.setattr(confine, "SCHEDULE_TIMEOUT", 0.5)


_PATCHES: dict[str, Callable[[pytest.MonkeyPatch], None]] = {
    "framework-too-old": _too_old,
    "framework-named-too-old": _too_old,
    "adapter-import-error": _moved,
    "run-hangs": _short,
}


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
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):  # as in a CI job without keys
        monkeypatch.delenv(var, raising=False)
    if case.name in _PATCHES:
        _PATCHES[case.name](monkeypatch)
    before = _tree(case_dir)
    status, out, err = _run(case, case_dir, capsys)
    assert status == case.status, (status, out[-2000:], err[-2000:])
    assert "Traceback" not in out and "Traceback" not in err
    if case.status == 2:
        paragraph = [line for line in err.splitlines() if line.startswith("prunecheck")]
        assert len(paragraph) == 1, err[-2000:]
        assert case.needle in paragraph[0], paragraph[0]
    assert _tree(case_dir) == before

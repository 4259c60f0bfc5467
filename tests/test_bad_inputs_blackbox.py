"""Bad-input cases of black-box mode (``loop:process:MANIFEST.toml``, issue 35), run by
the machinery of ``tests/test_bad_inputs.py``: each asserts the exit status, one
paragraph with its phrase on stderr, no traceback, and that no user file changed."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest
import test_bad_inputs
from test_bad_inputs import Case, _c, _check, _run

case_dir = test_bad_inputs.case_dir  # the fixture

_TOOL = '[[tools]]\nname = "t"\n'
MANIFESTS = {
    "not-toml.toml": "command = [\n",
    "unknown-key.toml": f'command = ["x"]\ncolour = "red"\n{_TOOL}',
    "no-tools.toml": 'command = ["x"]\n',
    "no-ready.toml": f'command = ["x"]\ninput = "stdin"\n{_TOOL}',
    "bad-placeholder.toml": f'command = ["x"]\n[env]\nURL = "{{base}}"\n{_TOOL}',
    "no-command.toml": f'command = ["prunecheck-no-such-program-x"]\n{_TOOL}',
    "dies.toml": 'command = ["{python}", "-c", "raise SystemExit(\'no module named ai\')"]\n'
    + _TOOL,
}
_ARGS = "--scenario parallel --max-examples 1 --no-failures"
CASES = [
    _c("process-spec-not-toml", "check loop:process:agent.py:agent", needle="a .toml file"),
    _c(
        "process-manifest-missing",
        f"check loop:process:{{tmp}}/none.toml {_ARGS}",
        needle="cannot be read",
    ),
    _c(
        "process-not-toml",
        f"check loop:process:{{tmp}}/not-toml.toml {_ARGS}",
        needle="is not TOML",
    ),
    _c(
        "process-unknown-key",
        f"check loop:process:{{tmp}}/unknown-key.toml {_ARGS}",
        needle="unknown key(s) colour",
    ),
    _c(
        "process-no-tools",
        f"check loop:process:{{tmp}}/no-tools.toml {_ARGS}",
        needle="at least one [[tools]]",
    ),
    _c(
        "process-no-ready",
        f"check loop:process:{{tmp}}/no-ready.toml {_ARGS}",
        needle="needs ready",
    ),
    _c(
        "process-bad-placeholder",
        f"check loop:process:{{tmp}}/bad-placeholder.toml {_ARGS}",
        needle="placeholder {base}",
    ),
    _c(
        "process-command-missing",
        f"check loop:process:{{tmp}}/no-command.toml {_ARGS}",
        needle="could not start",
    ),
    _c(
        "process-agent-dies-at-start",
        f"check loop:process:{{tmp}}/dies.toml {_ARGS}",
        needle="no module named ai",
    ),
]


def _tree(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}  # fmt: skip


@pytest.mark.skipif(sys.platform != "linux", reason="black-box mode reads /proc")
@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_bad_input(case: Case, case_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name, text in MANIFESTS.items():
        (case_dir / name).write_text(text)
    before = _tree(case_dir)
    status, out, err = _run(case, case_dir, capsys)
    _check(case, case_dir, status, out, err)
    assert _tree(case_dir) == before  # no user file changed

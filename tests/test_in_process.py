"""With the cage off (``PRUNECHECK_CAGE=0``), user code still prints on
stderr, never into prunecheck's standard output (issue 36)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prunecheck.sim.cli.app import main
from prunecheck.sim.subjects.in_process import InProcessPolicy
from prunecheck.sim.subjects.loader import load_policy

PRINTS = Path(__file__).resolve().parent / "bad_policies" / "prints.py"
_TINY = ["--levels", "0.5", "--seeds", "1", "--max-examples", "2", "--horizon", "5"]


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        (f"{PRINTS}:select", "select"),
        (f"{PRINTS}:trim@openai", "trim"),
        (f"runtime:{PRINTS}:Runtime", "feed"),
    ],
)
def test_with_the_cage_off_json_stays_one_document(
    spec: str, said: str, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PRUNECHECK_CAGE", "0")
    status = main(["check", spec, *_TINY, "--check-at", "after_append", "--json"])
    out, err = capfd.readouterr()
    assert status in (0, 1, 4), err[-2000:]
    assert "POLICY-STDOUT" not in out
    assert json.loads(out)["exit_status"] == status
    for how in ("print", "__stdout__", "fd"):
        assert f"POLICY-STDOUT {how} {said}" in err


def test_an_in_process_policy_keeps_its_own_attributes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRUNECHECK_CAGE", "0")
    policy = load_policy(f"{PRINTS}:trim@openai")
    assert isinstance(policy, InProcessPolicy)
    assert policy.format.value == "openai"  # the list function's own
    assert policy.name == policy.inner.name

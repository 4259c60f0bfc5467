"""Bad-input cases of issue 34's ``check --provider NAME[,NAME]``: an
unknown provider, an empty value, an empty name between commas, in every
spelling (one flag, a list, the flag repeated; with ``--json`` and
``--junit``); and the Python API's ``providers=`` refused the same way.

They reuse :mod:`test_bad_inputs`' machinery (:class:`Case`, ``_c``, ``_run``
and its ``case_dir`` fixture) and assert what it asserts: exit status 2, no
traceback, one paragraph on stderr naming the bad value, nothing on stdout
(no JSON document under ``--json``), and no file in the case folder changed
(no JUnit report, no bundle), all before any work is done.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from test_bad_inputs import Case, _c, _run, case_dir

from prunecheck.model.errors import ConfigError
from prunecheck.sim.api.check import check_policy

__all__ = ["case_dir"]  # the fixture, imported for pytest

CHECK = "check recency --levels 0.5 --seeds 1 --max-examples 2 --horizon 5"

CASES = [
    _c("check-provider-unknown", f"{CHECK} --provider nope",
       needle="--provider 'nope': is not a provider"),
    _c("check-provider-unknown-in-list", f"{CHECK} --provider openai,nope",
       needle="--provider 'nope'"),
    _c("check-provider-unknown-repeated", f"{CHECK} --provider openai --provider nope",
       needle="--provider 'nope'"),
    _c("check-provider-empty-comma", f"{CHECK} --provider ,", needle="names no provider"),
    _c("check-provider-empty-between", f"{CHECK} --provider openai,,anthropic",
       needle="empty name between commas"),
    _c("check-provider-unknown-json", f"{CHECK} --provider nope --json", needle="--provider"),
    _c("check-provider-unknown-junit", f"{CHECK} --provider nope --junit {{tmp}}/r.xml",
       needle="--provider"),
    _c("check-provider-unknown-out", f"{CHECK} --provider nope --out {{tmp}}/repro",
       needle="--provider"),
]  # fmt: skip


def _snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` and the digest of its bytes."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_bad_provider_input(case: Case, case_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = _snapshot(case_dir)
    status, out, err = _run(case, case_dir, capsys)
    assert status == case.status, (status, out[-2000:], err[-2000:])
    assert "Traceback" not in out and "Traceback" not in err
    paragraph = [line for line in err.splitlines() if line.startswith("prunecheck")]
    assert len(paragraph) == 1, err[-2000:]
    assert case.needle in paragraph[0], paragraph[0]
    assert "Hint:" in paragraph[0]
    assert out == ""
    assert _snapshot(case_dir) == before


def test_an_empty_provider_value_is_one_paragraph() -> None:
    """``--provider ""`` (an empty argument, which ``str.split`` cannot show)."""
    import io
    from contextlib import redirect_stderr, redirect_stdout

    from prunecheck.sim.cli.app import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main([*CHECK.split(), "--provider", ""])
    assert status == 2
    assert out.getvalue() == ""
    lines = [line for line in err.getvalue().splitlines() if line.startswith("prunecheck")]
    assert len(lines) == 1 and "names no provider" in lines[0], err.getvalue()


@pytest.mark.parametrize(
    ("value", "needle"),
    [("nope", "is not a provider"), ("", "names no provider"), (["openai", 3], "not a provider")],
)
def test_the_api_refuses_a_bad_provider_before_any_work(value: object, needle: str) -> None:
    with pytest.raises(ConfigError) as caught:
        check_policy("recency", providers=value, levels=(0.5,), seeds=(1,), max_examples=1)  # type: ignore[arg-type]
    assert needle in caught.value.paragraph()
    assert caught.value.paragraph().startswith("providers")

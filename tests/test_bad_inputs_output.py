"""Bad-input cases of issue 36's output part: progress, ``--json``,
``--junit``, ``--help`` and imported labels.

They reuse :mod:`test_bad_inputs`' machinery (:class:`Case`, ``_c``,
``_run`` and its ``case_dir`` fixture) and assert what it asserts: the exit
status, no traceback, one paragraph on stderr naming the input, and that no
file in the case folder changed.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from test_bad_inputs import DOCUMENTED_TRACE, Case, _c, _run, case_dir

from prunecheck.sim.support.ledger import seal
from prunecheck.sim.sweeps.loop_sweep import ROW_KIND, LoopRow
from prunecheck.sim.sweeps.sweep import LOOP_ROW_KIND

__all__ = ["case_dir"]  # the fixture, imported for pytest

ROOT = Path(__file__).resolve().parent.parent
CUT_LOG = ROOT / "tests" / "data" / "telemetry" / "raw_chat_cut.jsonl"
INCIDENT = ROOT / "examples" / "incident" / "spans.otlp.jsonl"


def _files(tmp: Path) -> None:
    """This module's inputs, beside test_bad_inputs' own."""
    # user text that looks like a label (the old digest form, and the new one)
    text = CUT_LOG.read_text(encoding="utf-8")
    fake = text.replace(
        '"What do app.py, db.py and auth.py do?"', '"#b2ab4565 #user-2 What do the files do?"'
    )
    assert fake != text
    (tmp / "fake_labels.jsonl").write_text(fake, encoding="utf-8")
    trace = json.loads(Path(DOCUMENTED_TRACE).read_text(encoding="utf-8"))
    for name, policy in (
        ("observed_verb", "observed:@#user-1 nuke #user-2"),
        ("observed_label", "observed:@#user-1 evict user-2"),
        ("observed_empty", "observed:@#user-1"),
    ):
        (tmp / f"{name}.json").write_text(json.dumps({**trace, "policy": policy}), "utf-8")
    # a policy sweep's results file (its first row), given to a loop sweep
    first_row = (ROOT / "reports" / "results.jsonl").read_text(encoding="utf-8").split("\n")[0]
    (tmp / "policy_sweep.jsonl").write_text(first_row + "\n", encoding="utf-8")
    # and a loop sweep's (one session row, sealed as a loop sweep writes it)
    row = LoopRow("loop:agent.py:agent", "cancel", 1.0, 0, 0, 3, 2, 1, ("hang",), 3, None, 4.5)
    (tmp / "loop_sweep.jsonl").write_text(json.dumps(seal(row.to_json()), sort_keys=True) + "\n")


CASES = [
    *(
        _c(
            f"{cmd.split()[0]}-env-progress-{value}",
            cmd,
            needle="PRUNECHECK_PROGRESS_INTERVAL",
            env={"PRUNECHECK_PROGRESS_INTERVAL": value},
        )
        for cmd in (
            "search recency --max-examples 2",
            f"replay {DOCUMENTED_TRACE}",
            "check recency --levels 0.5 --seeds 1 --max-examples 2 --horizon 5",
            "sweep --out {tmp}/r.jsonl recency --gate none --levels 0.5 --seeds 1 --jobs 1",
        )
        for value in ("-1", "soon", "nan", "inf")
    ),
    # when a placement fires: a placement that is none of the three
    *(
        _c(
            f"{cmd.split()[0]}-check-at-sometimes",
            f"{cmd} --check-at sometimes",
            needle="--check-at",
        )
        for cmd in (
            "check recency",
            "search recency",
            "explore recency",
            "baseline --out {tmp}/b.json",
        )
    ),
    # imported labels: an observed policy whose entries are not '@#T VERB #L ...'
    _c("replay-observed-verb", "replay {tmp}/observed_verb.json", needle="has the verb 'nuke'"),
    _c("replay-observed-label", "replay {tmp}/observed_label.json", needle="not a #label"),
    _c("replay-observed-empty", "replay {tmp}/observed_empty.json", needle="observed policy"),
    # user text that looks like a label (old digest or new #ROLE-N) imports as text
    _c("import-fake-labels", "import {tmp}/fake_labels.jsonl", status=1),
    # the output options: --json and --junit of a bad run print no document, write no file
    _c(
        "check-junit-under-a-file",
        "check recency --levels 0.5 --seeds 1 --max-examples 2 --horizon 5 "
        "--junit {tmp}/fake_labels.jsonl/r.xml --json",
        needle="--junit",
    ),
    _c("import-json-missing-log", "import {tmp}/no_such_log.jsonl --json", needle="no_such_log"),
    # a loop sweep's --plot: only for a loop, only a .png (an earlier picture), nothing run
    _c(
        "sweep-plot-policy", "sweep --out {tmp}/r.jsonl recency --plot {tmp}/p.png", needle="--plot"
    ),
    _c(
        "sweep-loop-plot-not-png",
        f"sweep --out {{tmp}}/r.jsonl loop:{ROOT}/tests/loops_fake.py:buggy --plot {{tmp}}/p.svg",
        needle="must end in .png",
    ),
    # a loop sweep given a policy sweep's results: refused, not rewritten without its rows
    _c(
        "sweep-loop-into-policy-results",
        f"sweep --out {{tmp}}/policy_sweep.jsonl loop:{ROOT}/tests/loops_fake.py:buggy "
        "--levels 1 --sessions 1 --scenario cancel",
        needle="is a row of a policy sweep",
    ),
    _c(
        "sweep-policy-into-loop-results",
        "sweep --out {tmp}/loop_sweep.jsonl recency --gate none --levels 0.5 --seeds 1 "
        "--horizon 5 --jobs 1",
        needle="is a session of an agent loop's sweep",
    ),
]


def test_a_policy_sweep_knows_the_kind_of_a_loop_sweep_s_rows() -> None:
    assert LOOP_ROW_KIND == ROW_KIND


def _snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` and the digest of its bytes."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize("case", [pytest.param(c, id=c.name) for c in CASES])
def test_bad_output_input(
    case: Case, case_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for var, value in case.env if not case.subprocess else ():
        monkeypatch.setenv(var, value)
    _files(case_dir)
    before = _snapshot(case_dir)
    status, out, err = _run(case, case_dir, capsys)
    assert status == case.status, (status, out[-2000:], err[-2000:])
    assert "Traceback" not in out and "Traceback" not in err
    if case.status == 2:
        paragraph = [line for line in err.splitlines() if line.startswith("prunecheck")]
        assert len(paragraph) == 1, err[-2000:]
        assert case.needle in paragraph[0], paragraph[0]
        assert out == ""
    if case.name == "import-fake-labels":  # imported: the user's words, not taken for labels
        assert "#b2ab4565 #user-2 What do the files do?" in out
    assert _snapshot(case_dir) == before

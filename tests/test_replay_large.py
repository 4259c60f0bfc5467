"""Long generated traces (benchmarks/gen_trace.py) replay to the model's own
verdict, in every layout and however they are read; a 700,000-event one
(make test-all) tells its progress on stderr.  No timing is asserted: the
speed is what ``make bench`` reports."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from prunecheck.model.model_system import ModelSystem
from prunecheck.model.policies import builtin_policy
from prunecheck.model.system import incidents_of
from prunecheck.sim.cli.app import main
from prunecheck.sim.evidence import trace_file

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from gen_trace import write_trace


def _model_verdict(path: Path, policy: str) -> str:
    """The verdict line's counts, from the model's incidents (no narrative)."""
    trace = trace_file.read_trace(path)
    found = builtin_policy(policy)
    assert found is not None
    counts = Counter(
        i.kind.label for i in incidents_of(trace, ModelSystem(found)) if i.is_violation
    )
    return ", ".join(f"{n} {label}" for label, n in sorted(counts.items()))


def _told(verdict_line: str) -> str:
    """The violations a verdict line counts, in the order of :func:`_model_verdict`."""
    found = re.search(r"violation\(s\) \((.*?)\)", verdict_line)
    named = [] if found is None else [part.split(" ", 1) for part in found[1].split(", ")]
    return ", ".join(f"{n} {label}" for n, label in sorted(named, key=lambda p: p[1]))


@pytest.mark.parametrize(
    ("policy", "events"),
    [
        ("recency", 500),
        pytest.param("recency", 5_000, marks=pytest.mark.slow),
        pytest.param("unit_safe", 5_000, marks=pytest.mark.slow),
    ],
)
def test_a_generated_trace_tells_the_models_verdict_in_every_layout(
    policy: str,
    events: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    lines, one_line = tmp_path / "lines.json", tmp_path / "one_line.json"
    write_trace(lines, events, seed=3, policy=policy)
    write_trace(one_line, events, seed=3, policy=policy, layout="compact")
    told = []
    for path, stream in ((lines, False), (lines, True), (one_line, True)):
        monkeypatch.setattr(trace_file, "STREAM_BYTES", 0 if stream else 2**40)
        assert isinstance(trace_file.read_trace(path).events, tuple) is not stream
        status = main(["replay", str(path)])
        told.append((status, capsys.readouterr().out.replace(str(path), "TRACE")))
    assert told[0] == told[1] == told[2]  # read whole, line by line, walked: one story
    status, out = told[0]
    verdict = out.rstrip("\n").splitlines()[-1]
    expected = _model_verdict(lines, policy)
    assert expected or policy == "unit_safe"  # recency breaks units here: a verdict to tell
    assert status == (1 if expected else 0)
    assert _told(verdict) == expected, verdict
    assert sum(line.startswith("[") for line in out.splitlines()) == events  # every event told


@pytest.mark.slow
def test_a_700k_event_trace_replays_to_the_models_verdict_with_progress(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    write_trace(path, 700_000, seed=0, policy="recency")
    env = {**os.environ, "PRUNECHECK_PROGRESS_INTERVAL": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "prunecheck", "replay", str(path)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    out = done.stdout.rstrip("\n").splitlines()
    assert done.returncode == 1, done.stderr[-2000:]
    assert out[-1].startswith("verdict: ") and _told(out[-1]) == _model_verdict(path, "recency")
    assert sum(line.startswith("[") for line in out) == 700_000
    progress = [line for line in done.stderr.splitlines() if "still running after" in line]
    assert progress and all("of 700000 events" in line for line in progress), done.stderr[-2000:]

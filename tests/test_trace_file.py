"""Large traces replay streamed: the same narrative as a whole-file parse,
and a bad line in the middle is one paragraph naming the event."""

from __future__ import annotations

from pathlib import Path

import pytest

from prunecheck.sim.cli.app import main
from prunecheck.sim.reproductions import trace_file

CORPUS = Path(__file__).resolve().parent / "corpus"


@pytest.mark.parametrize("name", sorted(p.name for p in CORPUS.glob("*.json")))
def test_a_streamed_replay_tells_the_same_story(
    name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(CORPUS / name)
    whole = main(["replay", path]), capsys.readouterr().out
    monkeypatch.setattr(trace_file, "STREAM_BYTES", 0)  # stream even a small file
    events = trace_file.read_trace(Path(path)).events
    assert not isinstance(events, tuple)  # really streamed
    assert (main(["replay", path]), capsys.readouterr().out) == whole


def test_a_bad_line_in_a_streamed_trace_is_one_paragraph(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = (CORPUS / "seed_parallel_batch.json").read_text().splitlines()
    first = next(i for i, line in enumerate(lines) if line == '  "events": [')
    lines[first + 3] = '    {"kind": "teleport"},'
    bad = tmp_path / "bad.json"
    bad.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(trace_file, "STREAM_BYTES", 0)
    assert main(["replay", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "events[2]" in err and "Traceback" not in err and err.count("\n") == 1

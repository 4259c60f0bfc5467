"""Large traces replay streamed: the same narrative as a whole-file parse,
and a bad line in the middle is one paragraph naming the event."""

from __future__ import annotations

from pathlib import Path

import pytest

from prunecheck.sim.cli.app import main
from prunecheck.sim.evidence import trace_file

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


def _long_trace(path: Path, turns: int) -> None:
    """A valid trace of ``7 * turns + 1`` events in the layout prunecheck writes."""
    with path.open("w", encoding="utf-8") as out:
        out.write('{\n  "format": "prunecheck-trace",\n  "version": 1,\n  "policy": "recency",\n')
        out.write('  "config": {"budget": 4000, "hard_ceiling": 8000},\n  "events": [\n')
        out.write('    {"kind": "system", "tokens": 500}')
        for k in range(turns):
            a, b = 2 * k + 1, 2 * k + 2
            for event in (
                '{"kind": "user", "tokens": 120}',
                '{"kind": "invoke"}',
                '{"kind": "batch", "tokens": 40, "calls": [{"tool": "read_file", "path": "a"}, '
                '{"tool": "grep", "path": "b"}]}',
                f'{{"kind": "result", "call": "c{a}", "tokens": 300}}',
                f'{{"kind": "result", "call": "c{b}", "tokens": 200}}',
                '{"kind": "invoke"}',
                '{"kind": "assistant", "tokens": 150}',
            ):
                out.write(",\n    " + event)
        out.write("\n  ]\n}\n")


def test_a_streamed_replay_prints_before_the_file_is_read_to_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The last event line is broken: a replay that parsed the whole file
    first would print nothing but the error; a streamed one has told the
    story up to there (issue 19)."""
    path = tmp_path / "long.json"
    _long_trace(path, 300)
    text = path.read_text(encoding="utf-8").replace(
        '{"kind": "assistant", "tokens": 150}\n  ]', '{"kind": "teleport"}\n  ]'
    )
    path.write_text(text, encoding="utf-8")
    monkeypatch.setattr(trace_file, "STREAM_BYTES", 0)
    assert main(["replay", str(path)]) == 2
    out, err = capsys.readouterr()
    assert "events[2100]" in err and "Traceback" not in err
    assert "[2100] " in out  # the step before the broken line was already told


@pytest.mark.parametrize(
    "sizes",
    [
        pytest.param((30, 200), id="1401-events"),
        pytest.param((200, 2000), id="14001-events", marks=pytest.mark.slow),
    ],
)
def test_a_streamed_replay_does_not_hold_the_events(
    sizes: tuple[int, int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a replay's peak memory gains per event: streamed, only the model's
    record of each call (its ground truth); parsed whole, every event too —
    at least twice as much (issue 19).  Measured between two lengths (211 and
    1,401 events; make test-all: 1,401 and 14,001; the ratio is about 3 on both)."""
    import tracemalloc

    from prunecheck.model.model_system import ModelSystem
    from prunecheck.model.policies import builtin_policy
    from prunecheck.model.system import replay

    policy = builtin_policy("recency")
    assert policy is not None
    growth = {}
    for streamed in (True, False):
        monkeypatch.setattr(trace_file, "STREAM_BYTES", 0 if streamed else 2**40)
        peaks = []
        for turns in sizes:
            path = tmp_path / f"t{turns}.json"
            _long_trace(path, turns)
            tracemalloc.start()
            trace = trace_file.read_trace(path)
            assert isinstance(trace.events, tuple) is not streamed
            steps = sum(1 for _ in replay(trace, ModelSystem(policy), record=False))
            peaks.append(tracemalloc.get_traced_memory()[1])
            tracemalloc.stop()
            assert steps == 7 * turns + 1
        growth[streamed] = (peaks[1] - peaks[0]) / (7 * (sizes[1] - sizes[0]))
    assert growth[True] * 2 < growth[False], growth


@pytest.mark.parametrize("indent", [None, 2], ids=["one-line", "indented"])
@pytest.mark.parametrize("name", ["seed_parallel_batch.json", "stream_evicted_mid_append.json"])
def test_a_large_trace_in_another_layout_streams_and_tells_the_same_story(
    name: str,
    indent: int | None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A trace written by another tool (one line, or pretty-printed with an
    event over several lines) is walked, not parsed whole; an indented one
    failed at its first event before (issue 36)."""
    import json

    source = CORPUS / name
    whole = main(["replay", str(source)]), capsys.readouterr().out
    data = json.loads(source.read_text(encoding="utf-8"))
    data["times"] = [float(i) for i in range(len(data["events"]))]  # after the events
    other = tmp_path / name
    other.write_text(json.dumps(data, indent=indent), encoding="utf-8")
    monkeypatch.setattr(trace_file, "STREAM_BYTES", 0)
    trace = trace_file.read_trace(other)
    assert not isinstance(trace.events, tuple) and trace.times == tuple(data["times"])
    status, out = main(["replay", str(other)]), capsys.readouterr().out
    assert (status, out) == whole


def test_a_large_trace_that_is_not_json_is_named_as_the_whole_parse_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (CORPUS / "seed_parallel_batch.json").read_text(encoding="utf-8")
    cut = tmp_path / "cut.json"
    cut.write_text(text.replace("\n", " ")[: len(text) // 2], encoding="utf-8")
    assert main(["replay", str(cut)]) == 2
    expected = capsys.readouterr().err
    monkeypatch.setattr(trace_file, "STREAM_BYTES", 0)
    assert main(["replay", str(cut)]) == 2
    err = capsys.readouterr().err
    assert err == expected and "is not JSON" in err and err.count("\n") == 1

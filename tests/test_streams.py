"""Streaming a log (``prunecheck.sim.ingest.streams``): every layout gives
the records a whole-file parse gives, whatever the read size, and the
import says how far it got."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from prunecheck.model.errors import TranscriptError
from prunecheck.sim.ingest import streams
from prunecheck.sim.ingest.reading import read_log

TELEMETRY = Path(__file__).resolve().parent / "data" / "telemetry"
RECORDS = [json.loads(line) for line in (TELEMETRY / "raw_chat_cut.jsonl").read_text().splitlines()]
LAYOUTS = {
    "lines.jsonl": "".join(json.dumps(r) + "\n" for r in RECORDS),
    "crlf.jsonl": "\r\n".join(json.dumps(r) for r in RECORDS) + "\r\n",
    "console.json": "".join(json.dumps(r, indent=4) + "\n" for r in RECORDS),
    "list.json": json.dumps(RECORDS, indent=2),
    "one_line_list.json": "  " + json.dumps(RECORDS) + "\n",
    "several_a_line.jsonl": " ".join(json.dumps(r) for r in RECORDS) + "\n",
    "indent_0.json": "".join(json.dumps(r, indent=0) + "\n" for r in RECORDS),
    "bom.jsonl": "\ufeff" + "".join(json.dumps(r) + "\n" for r in RECORDS),
    "bom_list.json": "\ufeff" + json.dumps(RECORDS),
}


@pytest.mark.parametrize("chunk", [1, 7, 64, 2**20])
@pytest.mark.parametrize("name", sorted(LAYOUTS))
def test_every_layout_gives_every_record_whatever_the_read_size(
    name: str, chunk: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(streams, "_CHUNK", chunk)
    path = tmp_path / name
    path.write_text(LAYOUTS[name], encoding="utf-8")
    found = list(streams.records(path, name))
    assert [value for _, value, _, _ in found] == RECORDS
    assert [json.loads(text) for _, _, text, _ in found] == RECORDS  # each record's own text
    bom = 3 if name.startswith("bom") else 0
    assert found[-1][3] + bom == path.stat().st_size  # read to the end, counted
    wheres = [where for where, *_ in found]
    assert len(set(wheres)) == len(wheres) or name == "several_a_line.jsonl"


def test_a_record_split_across_reads_keeps_its_line_number(tmp_path: Path) -> None:
    path = tmp_path / "console.json"
    path.write_text(LAYOUTS["console.json"], encoding="utf-8")
    lines = [where.rpartition("line ")[2] for where, *_ in streams.records(path, "c")]
    starts = [n + 1 for n, line in enumerate(LAYOUTS["console.json"].splitlines()) if line == "{"]
    assert lines == [str(n) for n in starts]


def test_a_list_element_that_is_not_json_is_named_by_its_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(streams, "_CHUNK", 16)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(RECORDS)[:-1] + ', {"x": tru}]', encoding="utf-8")
    with pytest.raises(TranscriptError, match=r"bad\.json: \[3\]: is not JSON"):
        list(streams.records(path, "bad.json"))


def test_read_log_reports_its_progress_in_bytes(tmp_path: Path) -> None:
    path = tmp_path / "lines.jsonl"
    path.write_text(LAYOUTS["lines.jsonl"], encoding="utf-8")
    seen: list[tuple[int, int]] = []
    log = read_log([path], progress=lambda done, total: seen.append((done, total)))
    size = path.stat().st_size
    assert seen[-1] == (size, size) and len(seen) == len(RECORDS)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert log.size == size


def test_a_long_import_prints_how_many_megabytes_it_has_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not on a terminal, a line every interval: the clock advances 11 s a
    reading, so every record's progress call prints one."""
    from prunecheck.sim.cli.app import main
    from prunecheck.sim.support import progress

    path = tmp_path / "lines.jsonl"
    path.write_text(LAYOUTS["lines.jsonl"], encoding="utf-8")
    now = [0.0]

    def clock() -> float:
        now[0] += 11.0
        return now[0]

    monkeypatch.setenv("PRUNECHECK_PROGRESS_INTERVAL", "10")
    monkeypatch.setattr(progress, "_clock", clock)
    monkeypatch.setattr(progress, "_TICKER", False)
    monkeypatch.setattr("sys.stderr", io.StringIO())
    status = main(["import", str(path)])
    err = progress.sys.stderr.getvalue()  # type: ignore[attr-defined]
    assert status == 1
    assert "prunecheck import: still running after" in err
    assert "0 of 1 MB" in err
    capsys.readouterr()

"""Tests of prunecheck.sim.evidence.json_stream: one JSON object read a
member at a time, its streamed list an element at a time, in any layout."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prunecheck.sim.evidence import json_stream
from prunecheck.sim.evidence.json_stream import ELEMENT, END, NotStreamable, members

DOC = {
    "format": "x",
    "n": 12345,
    "config": {"a": [1, 2, {"b": None}], "c": "é, \\" + '"'},
    "events": [{"kind": "user", "tokens": i, "text": f"t{i} ]}}, {{"} for i in range(40)],
    "times": [0.5 * i for i in range(40)],
}


def _walk(path: Path) -> tuple[dict[object, object], list[object], object]:
    header: dict[object, object] = {}
    elements: list[object] = []
    count: object = None
    for key, value in members(path, "events", 32):
        if key is ELEMENT:
            elements.append(value)
        elif key is END:
            count = value
        else:
            header[key] = value
    return header, elements, count


@pytest.mark.parametrize("chunk", [1, 7, 1 << 20])
@pytest.mark.parametrize("indent", [None, 2])
def test_every_member_and_element_is_read_whatever_the_layout_and_chunk(
    chunk: int, indent: int | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(json_stream, "_CHUNK", chunk)  # values cut by every chunk boundary
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(DOC, indent=indent, ensure_ascii=False) + "\n", encoding="utf-8")
    header, elements, count = _walk(path)
    assert elements == DOC["events"] and count == len(DOC["events"])
    assert header == {k: v for k, v in DOC.items() if k != "events"}


@pytest.mark.parametrize(
    "text",
    [
        "",
        "[]",
        '{"events": []} x',
        '{"events": [1,, 2]}',
        '{"events": [1, 2}',
        '{"events": {}}',
        '{"a": 1}',
        '{"events": [], "events": []}',
        '{"a": 1 "events": []}',
        '{"events": [' + "[" * 40 + "]" * 40 + "]}",
        '{"events": [1, 2',
    ],
)
def test_anything_but_one_object_with_the_list_is_not_streamable(text: str, tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(NotStreamable):
        _walk(path)


def test_an_empty_object_or_list_is_read(tmp_path: Path) -> None:
    path = tmp_path / "doc.json"
    path.write_text('{"a": {}, "events": [ ], "b": []}', encoding="utf-8")
    assert _walk(path) == ({"a": {}, "b": []}, [], 0)

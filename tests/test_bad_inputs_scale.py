"""Hostile production logs for ``prunecheck import`` (issue 33), run by the
machinery of ``tests/test_bad_inputs.py``: each gets a verdict or one
paragraph with exit 2 — never a traceback, a ``RecursionError``, a
``MemoryError`` or a hang — and no file of the case folder changes.

The classes: a record too large to be a request (a 200 MB line: slow, with
a fast twin under a small limit), 100,000-deep JSON (a record, a list
element, a span attribute's JSON), NaN, infinite and 400-digit times (in
each reader's own time field; none among requests with times; epoch
seconds in a string), a
5,000-digit integer, a log shipped twice (duplicated records), a log named
twice, non-UTF-8 file names, a FIFO given as the log or inside a log
folder, a file ``stat`` calls regular whose reads wait (``/proc/kmsg``), a
log cut inside its last record or its list, and JSON after a list; and odd
content: Anthropic content blocks inside GenAI spans (read as
the calls and results they are) and ``parts`` given as a string (named; every
request resends that message, so none can be read: exit 2).
A verdict case also names the phrase its output must hold.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from pathlib import Path

import pytest
import test_bad_inputs
from test_bad_inputs import TELEMETRY, Case, _c, _check, _run

from prunecheck.sim.ingest import streams

case_dir = test_bad_inputs.case_dir  # the fixture

CHAT = (TELEMETRY / "raw_chat_cut.jsonl").read_text(encoding="utf-8")
SPANS = (TELEMETRY / "otel_genai_cut.otlp.jsonl").read_text(encoding="utf-8")
CONSOLE = (TELEMETRY / "otel_genai_cut.sdk.json").read_text(encoding="utf-8")
ODD = os.fsdecode(b"odd-\xff.jsonl")  # a file name that is not UTF-8
DEEP = "[" * 100_000 + "]" * 100_000


def _line(n: int, **change: object) -> str:
    record = json.loads(CHAT.splitlines()[n])
    record.update(change)
    return json.dumps(record)


def _deep_span() -> str:
    data = json.loads(SPANS)
    for span in data["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        for kv in span["attributes"]:
            if kv["key"] == "gen_ai.input.messages":
                kv["value"]["stringValue"] = DEEP
    return json.dumps(data)


def _blocks(messages: list[dict[str, object]], as_content: bool) -> list[dict[str, object]]:
    """GenAI parts written as Anthropic content blocks (tool_use, tool_result,
    text), as ``parts`` or as ``content``."""
    out = []
    for m in messages:
        blocks: list[dict[str, object]] = []
        for p in m.get("parts", []):  # type: ignore[attr-defined]
            if p["type"] == "tool_call":
                blocks.append({"type": "tool_use", "id": p["id"], "name": p["name"],
                               "input": p.get("arguments")})  # fmt: skip
            elif p["type"] == "tool_call_response":
                blocks.append({"type": "tool_result", "tool_use_id": p["id"],
                               "content": p.get("response")})  # fmt: skip
            elif p["type"] == "text":
                blocks.append({"type": "text", "text": p["content"]})
        role = "user" if m["role"] == "tool" else m["role"]
        out.append({"role": role, ("content" if as_content else "parts"): blocks})
    return out


def _odd_span(edit: object) -> str:
    """The cut conversation's spans with ``edit`` applied to each messages attribute."""
    data = json.loads(SPANS)
    for span in data["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        for kv in span["attributes"]:
            if kv["key"] in ("gen_ai.input.messages", "gen_ai.output.messages"):
                value = json.loads(kv["value"]["stringValue"])
                kv["value"]["stringValue"] = json.dumps(edit(value))  # type: ignore[operator]
    return json.dumps(data) + "\n"


def _parts_as_string(messages: list[dict[str, object]]) -> list[dict[str, object]]:
    for m in messages:
        if m.get("role") == "user":
            m["parts"] = "What do app.py, db.py and auth.py do?"
            break
    return messages


@functools.cache
def _files() -> dict[str, str | None]:
    """The case files by name (None: a FIFO)."""
    lines = CHAT.splitlines()
    return {
        "chat.jsonl": CHAT,
        "deep_record.jsonl": CHAT + DEEP + "\n",
        "deep_list.json": "[" + DEEP + "]",
        "deep_attribute.otlp.jsonl": _deep_span() + "\n",
        "nan_time.jsonl": "\n".join([lines[0], _line(1, time=float("nan")), lines[2]]) + "\n",
        "huge_time.jsonl": "\n".join([lines[0], lines[1], _line(2)]).replace(
            '"time": "2026-11-30T14:02:12Z"', '"time": ' + "9" * 400
        )
        + "\n",
        "huge_nanos.otlp.jsonl": SPANS.replace(
            '"startTimeUnixNano": "', '"startTimeUnixNano": "' + "9" * 400
        ),
        "long_integer.jsonl": '{"tokens": ' + "7" * 5000 + ", " + lines[0][1:] + "\n",
        "twice.otlp.jsonl": SPANS + SPANS,
        "twice.jsonl": CHAT + CHAT,
        "list.json": json.dumps([json.loads(line) for line in lines]),
        "list_cut.json": json.dumps([json.loads(line) for line in lines])[:-400],
        "after_list.json": json.dumps([json.loads(line) for line in lines]) + ' {"more": 1}',
        "console_cut.sdk.json": CONSOLE[: CONSOLE.rindex("}", 0, len(CONSOLE) - 10)],
        ODD: CHAT,
        "pipe.jsonl": None,
        "folder/a.jsonl": CHAT,
        "folder/pipe.jsonl": None,
        "anthropic_content.otlp.jsonl": _odd_span(lambda m: _blocks(m, True)),
        "anthropic_parts.otlp.jsonl": _odd_span(lambda m: _blocks(m, False)),
        "parts_string.otlp.jsonl": _odd_span(_parts_as_string),
        # a time that is no time in each reader's own field
        "nan_nanos.otlp.jsonl": re.sub(
            r'"startTimeUnixNano": "\d+"', '"startTimeUnixNano": "NaN"', SPANS
        ),
        "nan_time.traces.jsonl": re.sub(
            r'"start_time_unix_nano": "?\d+"?',
            '"start_time_unix_nano": "NaN"',
            _stack("mlflow/cut.traces.jsonl"),
        ),
        "huge_time.traces.jsonl": re.sub(
            r'"start_time_unix_nano": "?\d+"?',
            '"start_time_unix_nano": "' + "9" * 400 + '"',
            _stack("mlflow/cut.traces.jsonl"),
        ),
        "nan_time.spans.jsonl": re.sub(
            r'"started_at": "[^"]+"',
            '"started_at": "NaN"',
            _stack("agents_tracing/cut.spans.jsonl"),
        ),
        "nan_time.spans.json": re.sub(
            r'"start_time": "[^"]+"', '"start_time": "NaN"', _stack("phoenix/cut.spans.json")
        ),
        "nan_time.runs.jsonl": re.sub(
            r'"start_time": "[^"]+"', '"start_time": "NaN"', _stack("langsmith_list_runs/cut.jsonl")
        ),
        # no time among requests with times; times as epoch seconds in strings
        "no_time.jsonl": "\n".join([lines[0], _line(1, time=None), lines[2]]) + "\n",
        "epoch_string.jsonl": "\n".join(_line(n, time=str(1795960000 + 2 * n)) for n in range(3))
        + "\n",
        "long_line.jsonl": CHAT + _long() + "\n",
        "long_element.json": "[" + lines[0] + ", " + _long() + "]",
    }


def _stack(name: str) -> str:
    return (TELEMETRY / name).read_text(encoding="utf-8")


def _long() -> str:
    """A request of more than 10,000 characters (over a limit of 4,096 bytes)."""
    return json.dumps({"request": {"messages": [{"role": "user", "content": "x" * 10_000}]}})


@pytest.fixture
def scale_dir(case_dir: Path) -> Path:
    for name, content in _files().items():
        path = case_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if content is None:
            os.mkfifo(path)
        else:
            path.write_text(content, encoding="utf-8")
    return case_dir


def _c2(name: str, argv: str, status: int, needle: str) -> tuple[Case, str]:
    """A case and the phrase its output must hold (a verdict's stdout, or for
    exit 2 the paragraph)."""
    return _c(name, argv, status, needle if status == 2 else ""), needle


CASES = [
    # bad input: one paragraph
    _c2("import-deep-record", "import {tmp}/deep_record.jsonl", 2, "deeper than 32"),
    _c2("import-deep-list-element", "import {tmp}/deep_list.json", 2, "deeper than 32"),
    _c2("import-deep-attribute", "import {tmp}/deep_attribute.otlp.jsonl", 2, "nests too deeply"),
    _c2("import-long-integer", "import {tmp}/long_integer.jsonl", 2, "4300 digits"),
    _c2("import-fifo", "import {tmp}/pipe.jsonl", 2, "FIFO"),
    _c2("import-list-cut", "import {tmp}/list_cut.json", 2, "list_cut.json"),
    _c2("import-after-list", "import {tmp}/after_list.json", 2, "after its JSON list"),
    _c2("import-console-cut", "import {tmp}/console_cut.sdk.json", 2, "ends inside this record"),
    # a verdict, saying what it could not see
    _c2("import-nan-time", "import {tmp}/nan_time.jsonl", 1, "(nan) is not a time"),
    _c2("import-400-digit-time", "import {tmp}/huge_time.jsonl", 1, "(inf) is not a time"),
    _c2("import-400-digit-nanos", "import {tmp}/huge_nanos.otlp.jsonl", 1, "is not a time"),
    # a request with no time among timed ones was put first (at 0), as if sent before them
    _c2(
        "import-no-time-among-times",
        "import {tmp}/no_time.jsonl",
        1,
        "it holds no time, so where it falls among the others is not known",
    ),
    # epoch seconds in a string are a time (they were read as missing, unsaid)
    _c2(
        "import-epoch-in-a-string",
        "import {tmp}/epoch_string.jsonl",
        1,
        "request 3 (13:46:44) was rejected with HTTP 400",
    ),
    # each reader says a time that is no time (they were read as missing, unsaid)
    _c2("import-nan-nanos", "import {tmp}/nan_nanos.otlp.jsonl", 1, "(nan) is not a time"),
    _c2("import-mlflow-nan-time", "import {tmp}/nan_time.traces.jsonl", 1, "(nan) is not a time"),
    _c2(
        "import-mlflow-400-digit-time",
        "import {tmp}/huge_time.traces.jsonl",
        1,
        "(inf) is not a time",
    ),
    _c2("import-agents-nan-time", "import {tmp}/nan_time.spans.jsonl", 1, "(nan) is not a time"),
    _c2("import-phoenix-nan-time", "import {tmp}/nan_time.spans.json", 1, "(nan) is not a time"),
    _c2("import-langsmith-nan-time", "import {tmp}/nan_time.runs.jsonl", 1, "(nan) is not a time"),
    _c2("import-spans-shipped-twice", "import {tmp}/twice.otlp.jsonl", 1, "4 span(s) or record"),
    _c2("import-records-shipped-twice", "import {tmp}/twice.jsonl", 1, "3 span(s) or record"),
    _c2("import-named-twice", "import {tmp}/chat.jsonl {tmp}/chat.jsonl", 1, "named twice"),
    _c2("import-list", "import {tmp}/list.json", 1, "3 of 3 request(s)"),
    _c2("import-odd-name", "import {tmp}/" + ODD + " --json", 1, "odd-\\\\xff.jsonl"),
    # odd content: read as what it is, or named
    _c2(
        "import-anthropic-blocks-as-content",
        "import {tmp}/anthropic_content.otlp.jsonl",
        1,
        "call_01x0013, call_02x0026, call_03x0039: it cut the unit in two (a bad prune)",
    ),
    _c2(
        "import-anthropic-blocks-as-parts",
        "import {tmp}/anthropic_parts.otlp.jsonl",
        1,
        "call_01x0013, call_02x0026, call_03x0039: it cut the unit in two (a bad prune)",
    ),
    _c2(
        "import-parts-as-string",
        "import {tmp}/parts_string.otlp.jsonl",
        2,  # every request resends the message: none can be read
        "parts is a JSON str, not a list of parts",
    ),
    _c2("import-fifo-in-folder", "import {tmp}/folder", 1, "FIFO (named pipe), not a log file"),
]


def _tree(folder: Path) -> dict[str, str]:
    out = {}
    for p in sorted(folder.rglob("*")):
        if p.is_fifo():
            out[str(p.relative_to(folder))] = "fifo"
        elif p.is_file():
            out[str(p.relative_to(folder))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


@pytest.mark.parametrize(("case", "needle"), [pytest.param(c, n, id=c.name) for c, n in CASES])
def test_a_hostile_log_gets_a_verdict_or_one_paragraph(
    case: Case, needle: str, scale_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _tree(scale_dir)
    status, out, err = _run(case, scale_dir, capsys)
    _check(case, scale_dir, status, out, err)
    if case.status != 2:
        assert needle in out + err, (out + err)[-3000:]
    assert _tree(scale_dir) == before


@pytest.mark.parametrize("name", ["long_line.jsonl", "long_element.json"])
def test_a_record_over_the_limit_is_one_paragraph(
    name: str, scale_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fast twin of the 200 MB line: the same path under a 4,096-byte
    limit (a line, then a list element)."""
    monkeypatch.setattr(streams, "MAX_RECORD", 4096)
    case = _c(f"import-{name}", f"import {{tmp}}/{name}", needle="more than 4,096 bytes")
    status, out, err = _run(case, scale_dir, capsys)
    _check(case, scale_dir, status, out, err)


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["line", "list"])
def test_a_200_mb_line_is_one_paragraph(
    layout: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 200 MB line (a JSON line, or one list on one line): exit 2 naming
    it, read no further than the limit."""
    path = tmp_path / f"big.{layout}.json"
    with path.open("w", encoding="utf-8") as big:
        big.write('[{"request": {"messages": [{"role": "user", "content": "' if layout == "list"
                  else '{"request": {"messages": [{"role": "user", "content": "')  # fmt: skip
        for _ in range(200):
            big.write("x" * 2**20)
        big.write('"}]}}]\n' if layout == "list" else '"}]}}\n')
    case = _c(f"import-200mb-{layout}", f"import {path}", needle="more than 67,108,864 bytes")
    status, out, err = _run(case, tmp_path, capsys)
    _check(case, tmp_path, status, out, err)


def test_a_file_stat_calls_regular_whose_reads_wait_is_one_paragraph(
    scale_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kernel file that ``stat`` calls regular but whose read waits for data
    (``/proc/kmsg``: ``import /proc/kmsg`` hung): one paragraph, exit 2.  Not
    read here (reading it takes the kernel's messages from whoever logs them):
    a FIFO that a writer holds open waits the same way, given to import with
    the file-type checks seeing a regular file."""
    from prunecheck.sim.support import inputs

    class Regular:  # the stat module, but a FIFO is regular to it
        def __getattr__(self, name: str) -> object:
            return getattr(__import__("stat"), name)

        @staticmethod
        def S_ISREG(mode: int) -> bool:
            return True

    monkeypatch.setattr(inputs, "stat", Regular())
    monkeypatch.setattr(inputs, "file_kind", lambda mode: None)
    writer = os.open(scale_dir / "pipe.jsonl", os.O_RDWR | os.O_NONBLOCK)  # open, writes nothing
    try:
        case = _c("import-reads-wait", "import {tmp}/pipe.jsonl", needle="reads wait for data")
        status, out, err = _run(case, scale_dir, capsys)
    finally:
        os.close(writer)
    _check(case, scale_dir, status, out, err)

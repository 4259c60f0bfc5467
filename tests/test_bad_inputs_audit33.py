"""Odd paths given to ``prunecheck import`` (issue 33, "odd file names and
special files"), run by the machinery of ``tests/test_bad_inputs.py``: a
symlink loop, a dangling symlink, a second name of the same log (a symlink or
a hard link: read once, and said), and names a shell or a terminal trips on
(a leading dash, a newline), and a span whose droppedAttributesCount is
negative.  Each gets a verdict or one paragraph with
exit 2, never a traceback, and no entry of the case folder changes (its
content, or the target of a link).  The special files themselves (FIFOs,
devices, sockets) are the cases of ``tests/test_bad_inputs_files.py``; the
hostile contents those of ``tests/test_bad_inputs_scale.py``."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
import test_bad_inputs
from test_bad_inputs import TELEMETRY, Case, _c, _check, _run

case_dir = test_bad_inputs.case_dir  # the fixture

CHAT = (TELEMETRY / "raw_chat_cut.jsonl").read_bytes()


def _negative_dropped_count() -> str:
    """The GenAI cut log with a span whose droppedAttributesCount is -1."""
    data = json.loads((TELEMETRY / "otel_genai_cut.otlp.jsonl").read_text(encoding="utf-8"))
    data["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["droppedAttributesCount"] = -1
    return json.dumps(data) + "\n"


NEWLINE = "new\nline.jsonl"


@pytest.fixture
def paths_dir(case_dir: Path) -> Path:
    (case_dir / "log.jsonl").write_bytes(CHAT)
    (case_dir / "-dash.jsonl").write_bytes(CHAT)
    (case_dir / NEWLINE).write_bytes(CHAT)
    (case_dir / "loop_a.jsonl").symlink_to("loop_b.jsonl")
    (case_dir / "loop_b.jsonl").symlink_to("loop_a.jsonl")
    (case_dir / "dangling.jsonl").symlink_to("nowhere.jsonl")
    (case_dir / "alias.jsonl").symlink_to("log.jsonl")
    os.link(case_dir / "log.jsonl", case_dir / "hard.jsonl")
    (case_dir / "negative.otlp.jsonl").write_text(_negative_dropped_count(), encoding="utf-8")
    return case_dir


CASES = [
    (_c("import-symlink-loop", "import {tmp}/loop_a.jsonl", needle="symbolic links"), ""),
    (_c("import-dangling-symlink", "import {tmp}/dangling.jsonl", needle="does not exist"), ""),
    (
        _c("import-log-and-its-symlink", "import log.jsonl alias.jsonl", 1),
        "alias.jsonl is the file log.jsonl again (named twice): read once",
    ),
    (
        _c("import-log-and-its-hard-link", "import log.jsonl hard.jsonl", 1),
        "hard.jsonl is the file log.jsonl again (named twice): read once",
    ),
    (_c("import-leading-dash", "import -- -dash.jsonl", 1), "3 of 3 request(s)"),
    (Case("import-newline-name", ("import", "{tmp}/" + NEWLINE), 1), "3 of 3 request(s)"),
    (
        _c("import-negative-dropped-count", "import negative.otlp.jsonl", needle="is not a count"),
        "",
    ),
]


def _tree(folder: Path) -> dict[str, str]:
    """Each entry of ``folder``: a link's target, a file's content hash."""
    out = {}
    for p in sorted(folder.rglob("*")):
        name = str(p.relative_to(folder))
        if p.is_symlink():
            out[name] = "-> " + os.readlink(p)
        elif p.is_file():
            out[name] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


@pytest.mark.parametrize(("case", "needle"), [pytest.param(c, n, id=c.name) for c, n in CASES])
def test_an_odd_path_gets_a_verdict_or_one_paragraph(
    case: Case, needle: str, paths_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _tree(paths_dir)
    status, out, err = _run(case, paths_dir, capsys)
    _check(case, paths_dir, status, out, err)
    if case.status != 2:
        assert needle in out + err, (out + err)[-3000:]
        assert "bad prune" in out  # the log's own verdict, read once
    assert _tree(paths_dir) == before

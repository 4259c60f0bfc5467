"""The bad-input suite, files and streams (issue 36): files as SQLite treats them.

Every case is one command line run in-process by ``main`` (the machinery of
:mod:`test_bad_inputs`), and checks, beside its exit status, its one
paragraph and no traceback, that **no file that was there before changed**:
every pre-existing entry of the case folder keeps its content (hash), its
modification time and its kind — a FIFO stays a FIFO, a symlink the same
link, a device node a device node.  Devices are nodes made in the case
folder (``mknod``, as root) or FIFOs; no case ever writes to a real device.

A watchdog opens every FIFO of the folder from the other side after a few
seconds, so that a command that waits on one (the bug these cases are
about) fails its case instead of hanging the suite.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_bad_inputs import DOCUMENTED_TRACE, TELEMETRY, Case, _c, _run

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.errors import ConfigError
from prunecheck.model.events import SystemPrompt, UserMessage
from prunecheck.model.trace import Trace
from prunecheck.sim.cli.app import EXIT_BROKEN_PIPE, main
from prunecheck.sim.evidence.failures import FailureDatabase
from prunecheck.sim.support.outputs import check_bundle_folder, write_text

TINY = "--levels 0.5 --seeds 1 --horizon 5"
CHECK = f"check recency {TINY} --max-examples 2 --check-at after_append"
KEEP_LAST = Path(__file__).resolve().parent.parent / "examples" / "openai_keep_last.py"
#: Non-UTF-8 names, as Linux hands them to Python (surrogateescape).
BYTES_NAME = os.fsdecode(b"\xff.json")
BYTES_DIR = os.fsdecode(b"\xfeout")


# ------------------------------------------------------------ baselines
def _baseline(**change: object) -> dict[str, object]:
    """A small valid baseline (one run, two sessions), with ``change`` applied."""
    data: dict[str, object] = {
        "format": "prunecheck-baseline",
        "version": 2,
        "complete": True,
        "policy": "recency",
        "config": {"budget": 32000, "hard_ceiling": 40000, "gate": "none"},
        "suite": {"levels": [0.5], "seeds": [1], "horizon": 5.0},
        "policy_digest": None,
        "runtime_digest": None,
        "runs": [
            {
                "level": 0.5,
                "seed": 1,
                "invocations": 2,
                "events": 9,
                "incidents": {},
                "exposed": {},
                "error": None,
                "sessions": [
                    {"t": 5.0, "turns": 2, "end": "censored", "inv": 1},
                    {"t": 4.0, "turns": 1, "end": "natural", "inv": 1},
                ],
            }
        ],
        "corpus": {"dir": None, "traces": []},
    }
    data.update(change)
    return data


def _run_with(**change: object) -> dict[str, object]:
    runs = _baseline()["runs"]
    assert isinstance(runs, list)
    return {**runs[0], **change}


def _session(**change: object) -> dict[str, object]:
    return {"t": 5.0, "turns": 2, "end": "censored", "inv": 1, **change}


BASELINES = {
    "b_ok.json": _baseline(),
    "b_no_runs.json": _baseline(runs=[]),
    "b_nan_level.json": _baseline(runs=[_run_with(level=float("nan"))]),
    "b_level_two.json": _baseline(runs=[_run_with(level=2)]),
    "b_negative_turns.json": _baseline(runs=[_run_with(sessions=[_session(turns=-3)])]),
    "b_negative_time.json": _baseline(runs=[_run_with(sessions=[_session(t=-1.0)])]),
    "b_negative_count.json": _baseline(runs=[_run_with(incidents={"invalid_prune": -1})]),
    "b_bool_seed.json": _baseline(runs=[_run_with(seed=True)]),
    "b_bad_end.json": _baseline(runs=[_run_with(sessions=[_session(end="exploded")])]),
    "b_first_after_end.json": _baseline(
        runs=[_run_with(sessions=[_session(first={"any_violation": [9.0, 1]})])]
    ),
    "b_zero_horizon.json": _baseline(suite={"levels": [0.5], "seeds": [1], "horizon": 0}),
    "b_inf_horizon.json": _baseline(suite={"levels": [0.5], "seeds": [1], "horizon": float("inf")}),
    "b_run_not_in_suite.json": _baseline(runs=[_run_with(seed=7)]),
    "b_twice.json": _baseline(runs=[_run_with(), _run_with()]),
    "b_all_errors.json": _baseline(runs=[_run_with(error="policy raised")]),
}


# ----------------------------------------------------------------- cases
#: Special files in the case folder: ``pipe.fifo``,
#: ``link_fifo`` -> it, ``dev`` (a character device node, the null device,
#: made here; a FIFO where mknod is not permitted), ``link_dev`` -> it,
#: ``sock`` (a listening Unix socket) and ``keep.txt`` (a user's file).
def _can_make_devices() -> bool:
    with tempfile.TemporaryDirectory() as folder:
        try:
            os.mknod(Path(folder) / "null", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
        except OSError:
            return False
    return True


DEVICE = "character device" if _can_make_devices() else "FIFO"
SPECIAL = (
    ("fifo", "pipe.fifo", "FIFO"),
    ("link-to-fifo", "link_fifo", "FIFO"),
    ("device", "dev", DEVICE),
    ("link-to-device", "link_dev", DEVICE),
    ("socket", "sock", "socket"),
)
OUTPUT_FILES = (
    ("baseline-out", f"baseline --out {{tmp}}/{{name}} {TINY}"),
    ("regress-out", "regress --baseline {tmp}/b_ok.json --out {tmp}/{name}"),
    ("sweep-out", f"sweep --out {{tmp}}/{{name}} recency {TINY} --jobs 1"),
    ("check-junit", f"{CHECK} --junit {{tmp}}/{{name}}"),
    ("regress-junit", "regress --baseline {tmp}/b_ok.json --junit {tmp}/{name}"),
)
OUTPUT_FOLDERS = (
    ("report-out", "report --out {tmp}/{name} --quick --seeds 1 --jobs 1"),
    ("search-out", "search lowest_salience --max-examples 5 --out {tmp}/{name}"),
    ("explore-out", "explore lowest_salience --depth 2 --out {tmp}/{name}"),
    ("check-out", f"{CHECK} --out {{tmp}}/{{name}}"),
    ("import-out", "import {tmp}/imp_chat.jsonl --out {tmp}/{name}"),
    ("shrink-out", f"shrink {DOCUMENTED_TRACE} --out {{tmp}}/{{name}}"),
)
INPUTS = (
    ("import", "import {tmp}/{name}"),
    ("regress-baseline", "regress --baseline {tmp}/{name}"),
    ("replay", "replay {tmp}/{name}"),
    ("validate", "validate {tmp}/{name} --format openai"),
    ("shrink", "shrink {tmp}/{name}"),
    ("check-failures", f"{CHECK} --failures {{tmp}}/{{name}}"),
    ("search-failures", "search recency --max-examples 2 --failures {tmp}/{name}"),
)

#: Commands that meet every special file in make test: one per way a path
#: is checked (an output file, a JUnit file, an output folder, an input, the
#: failure database); every other command meets the FIFO (the file that
#: would hang it) in make test, and every special file in make test-all.
EVERY_KIND = {"sweep-out", "check-junit", "search-out", "replay", "check-failures"}
SPECIAL_CASES = [
    *(
        _c(
            f"{cmd}-{kind}",
            argv.format(tmp="{tmp}", name=name),
            needle=needle,
            slow=kind != "fifo" and cmd not in EVERY_KIND,
        )
        for cmd, argv in (*OUTPUT_FILES, *OUTPUT_FOLDERS, *INPUTS)
        for kind, name, needle in SPECIAL
    ),
    _c(
        "failures-env-fifo",
        CHECK,
        needle="PRUNECHECK_FAILURES",
        env={"PRUNECHECK_FAILURES": "pipe.fifo"},
    ),
]
OVERWRITE_CASES = [
    *(
        _c(f"{cmd}-user-file", argv.format(tmp="{tmp}", name="keep.txt"), needle="--force")
        for cmd, argv in OUTPUT_FILES
    ),
    *(
        _c(f"{cmd}-folder", argv.format(tmp="{tmp}", name="empty_dir"), needle="is a folder")
        for cmd, argv in OUTPUT_FILES
    ),
    _c(
        "report-out-holds-user-files",
        "report --out {tmp}/userdir --quick --seeds 1 --jobs 1",
        needle="--force",
    ),
    _c(
        "report-results-not-ours",
        "report --out {tmp}/foreigndir --quick --seeds 1 --jobs 1",
        needle="--force",
    ),
    _c(
        "regress-out-is-the-baseline",
        "regress --baseline {tmp}/b_ok.json --out {tmp}/b_ok.json --force",
        needle="is the baseline file",
    ),
    _c(
        "sweep-one-line-user-file",
        f"sweep --out {{tmp}}/oneline.txt recency {TINY} --jobs 1",
        needle="--force",
    ),
]
FOLDER_INPUT_CASES = [
    _c("validate-folder", "validate {tmp}/empty_dir --format openai", needle="is a folder"),
    _c("regress-baseline-folder", "regress --baseline {tmp}/empty_dir", needle="is a folder"),
    _c("failures-is-a-file", f"{CHECK} --failures {{tmp}}/keep.txt", needle="not a folder"),
]
BASELINE_CASES = [
    _c(
        f"regress-{name[2:-5].replace('_', '-')}",
        f"regress --baseline {{tmp}}/{name}",
        needle=needle,
    )
    for name, needle in (
        ("b_no_runs.json", "runs: is empty"),
        ("b_nan_level.json", "runs[0].level"),
        ("b_level_two.json", "runs[0].level"),
        ("b_negative_turns.json", "runs[0].sessions[0].turns"),
        ("b_negative_time.json", "runs[0].sessions[0].t"),
        ("b_negative_count.json", "runs[0].incidents.invalid_prune"),
        ("b_bool_seed.json", "runs[0].seed"),
        ("b_bad_end.json", "runs[0].sessions[0].end"),
        ("b_first_after_end.json", "first.any_violation[0]"),
        ("b_zero_horizon.json", "suite.horizon"),
        ("b_inf_horizon.json", "suite.horizon"),
        ("b_run_not_in_suite.json", "not a run of the file's suite"),
        ("b_twice.json", "repeats a run"),
        ("b_all_errors.json", "0 of 1 suite runs were compared"),
    )
]
NAME_CASES = [
    _c("replay-non-utf8-missing", f"replay {{tmp}}/{BYTES_DIR}.json", needle="does not exist"),
    _c("validate-non-utf8-name", f"validate {{tmp}}/{BYTES_NAME} --format openai", status=0),
    _c("replay-non-utf8-name", f"replay {{tmp}}/{BYTES_NAME[:-5]}.trace.json", status=1),
    _c("baseline-non-utf8-out", f"baseline --out {{tmp}}/{BYTES_DIR}.b.json {TINY}", status=0),
    _c(
        "import-non-utf8-bundle",
        f"import {{tmp}}/imp_chat.jsonl --out {{tmp}}/{BYTES_DIR}",
        status=1,
    ),
    _c(
        "replay-non-utf8-policy-file",
        f"replay {DOCUMENTED_TRACE} {{tmp}}/{BYTES_NAME[:-5]}.py:trim@openai",
        status=0,
    ),
]
CASES = [
    *SPECIAL_CASES,
    *OVERWRITE_CASES,
    *FOLDER_INPUT_CASES,
    *BASELINE_CASES,
    *NAME_CASES,
]


def test_every_class_has_cases() -> None:
    assert len({c.name for c in CASES}) == len(CASES)
    assert EVERY_KIND.issubset(cmd for cmd, _ in (*OUTPUT_FILES, *OUTPUT_FOLDERS, *INPUTS))
    commands = {c.argv[0] for c in SPECIAL_CASES}
    assert {"baseline", "regress", "sweep", "report", "search", "explore", "check"} <= commands
    assert {"import", "shrink", "replay", "validate"} <= commands


# -------------------------------------------------------------- fixtures
@pytest.fixture
def files_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The case folder: special files, a user's files, baselines, a log to
    import; a watchdog for the FIFOs."""
    tmp = tmp_path
    os.mkfifo(tmp / "pipe.fifo")
    (tmp / "empty_dir").mkdir()
    shutil.copyfile(TELEMETRY / "raw_chat_cut.jsonl", tmp / "imp_chat.jsonl")
    (tmp / "keep.txt").write_text("a user's notes, not prunecheck's\n", encoding="utf-8")
    (tmp / "oneline.txt").write_text("one line without a newline", encoding="utf-8")
    for name, data in BASELINES.items():
        (tmp / name).write_text(json.dumps(data), encoding="utf-8")
    try:
        os.mknod(tmp / "dev", 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # the null device
    except OSError:
        os.mkfifo(tmp / "dev")
    (tmp / "link_fifo").symlink_to(tmp / "pipe.fifo")
    (tmp / "link_dev").symlink_to(tmp / "dev")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp / "sock"))
    (tmp / "userdir").mkdir()
    (tmp / "userdir" / "summary.md").write_text("my own summary\n", encoding="utf-8")
    (tmp / "foreigndir").mkdir()
    (tmp / "foreigndir" / "results.jsonl").write_text('{"my": "data"}\n', encoding="utf-8")
    trace = Path(DOCUMENTED_TRACE).read_text(encoding="utf-8")
    (tmp / f"{BYTES_NAME[:-5]}.trace.json").write_text(trace, encoding="utf-8")
    (tmp / BYTES_NAME).write_text('[{"role": "user", "content": "hi"}]', encoding="utf-8")
    (tmp / f"{BYTES_NAME[:-5]}.py").write_text(KEEP_LAST.read_text(encoding="utf-8"))
    monkeypatch.setenv("PRUNECHECK_POLICY_MEMORY_MB", "1024")
    monkeypatch.setenv("PRUNECHECK_FAILURES", str(tmp / "db"))
    monkeypatch.chdir(tmp)
    stop = threading.Event()
    guard = threading.Thread(target=_unblock_fifos, args=(tmp, stop), daemon=True)
    guard.start()
    try:
        yield tmp
    finally:
        stop.set()
        guard.join()
        server.close()


def _unblock_fifos(folder: Path, stop: threading.Event) -> None:
    """After 5 s, open every FIFO from both sides now and then: a command
    waiting on one gets its end of file (its case then fails, not hangs)."""
    if stop.wait(5):
        return
    while not stop.wait(0.2):
        for path in folder.rglob("*"):
            if not path.is_fifo():
                continue
            for flags in (os.O_RDONLY | os.O_NONBLOCK, os.O_WRONLY | os.O_NONBLOCK):
                with contextlib.suppress(OSError):
                    os.close(os.open(path, flags))


def _snapshot(folder: Path) -> dict[str, tuple[object, ...]]:
    """Every entry under ``folder``: its kind, content hash (files), link
    target (links), modification time and permissions."""
    seen: dict[str, tuple[object, ...]] = {}
    for root, dirs, names in os.walk(folder):
        for name in [*dirs, *names]:
            path = Path(root) / name
            info = path.lstat()
            kind = stat.S_IFMT(info.st_mode)
            extra: object = None
            if stat.S_ISREG(info.st_mode):
                extra = hashlib.sha256(path.read_bytes()).hexdigest()
                extra = (extra, info.st_mtime_ns)
            elif stat.S_ISLNK(info.st_mode):
                extra = os.readlink(path)
            elif stat.S_ISCHR(info.st_mode):
                extra = info.st_rdev
            seen[str(path.relative_to(folder))] = (kind, extra, stat.S_IMODE(info.st_mode))
    return seen


@pytest.mark.parametrize(
    "case", [pytest.param(c, id=c.name, marks=[pytest.mark.slow] if c.slow else []) for c in CASES]
)
def test_bad_file(
    case: Case, files_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for var, value in case.env:
        monkeypatch.setenv(var, value)
    before = _snapshot(files_dir)
    status, out, err = _run(case, files_dir, capsys)
    assert status == case.status, (status, out[-2000:], err[-2000:])
    assert "Traceback" not in out and "Traceback" not in err
    if case.status == 2:
        paragraph = [line for line in err.splitlines() if line.startswith("prunecheck")]
        assert len(paragraph) == 1, err[-2000:]
        assert case.needle in paragraph[0], paragraph[0]
    after = _snapshot(files_dir)
    changed = {k: (v, after.get(k)) for k, v in before.items() if after.get(k) != v}
    assert not changed, changed


# ------------------------------------------------------ writing, by kind
def test_an_existing_file_is_replaced_only_with_force(files_dir: Path) -> None:
    keep = files_dir / "keep.txt"
    keep.chmod(0o640)
    assert main(["baseline", "--out", str(keep), *TINY.split(), "--force"]) == 0
    data = json.loads(keep.read_text(encoding="utf-8"))
    assert data["format"] == "prunecheck-baseline" and data["complete"] is True
    assert stat.S_IMODE(keep.stat().st_mode) == 0o640  # a replaced file keeps its permissions
    assert not [p for p in files_dir.iterdir() if p.name.endswith(".tmp")]


def test_a_rerun_replaces_its_own_junit_report_but_no_other_file(files_dir: Path) -> None:
    junit = files_dir / "j.xml"
    argv = ["regress", "--baseline", str(files_dir / "b_ok.json"), "--junit", str(junit)]
    assert main(argv) == 0
    junit.write_text(junit.read_text(encoding="utf-8") + "<!-- seen -->\n", encoding="utf-8")
    assert main(argv) == 0  # prunecheck's own report: replaced without --force
    assert "<testsuites" in junit.read_text(encoding="utf-8")
    assert "seen" not in junit.read_text(encoding="utf-8")


def test_a_resumed_results_file_is_appended_to_not_refused(files_dir: Path) -> None:
    out = files_dir / "r.jsonl"
    argv = ["sweep", "--out", str(out), "recency", *TINY.split(), "--jobs", "1"]
    assert main(argv) == 0
    rows = out.read_text(encoding="utf-8")
    assert main(argv) == 0  # its own results file: resumed, every run reused
    assert out.read_text(encoding="utf-8") == rows


def test_force_replaces_another_tools_file_with_a_results_file(files_dir: Path) -> None:
    out = files_dir / "keep.txt"
    argv = ["sweep", "--out", str(out), "recency", *TINY.split(), "--jobs", "1", "--force"]
    assert main(argv) == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines and all(json.loads(line)["policy"] == "recency" for line in lines)


def test_write_text_never_writes_through_what_is_at_the_path(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    link = tmp_path / "link"
    link.symlink_to(fifo)
    write_text(link, "replaces the link itself")  # never opens the FIFO (no hang)
    assert fifo.is_fifo() and not link.is_symlink()
    assert link.read_text(encoding="utf-8") == "replaces the link itself"


# ------------------------------------------------- conversation content
def test_bundles_and_saved_failures_are_readable_by_their_owner_only(files_dir: Path) -> None:
    out = files_dir / "bundle_new"
    assert main(["import", str(files_dir / "imp_chat.jsonl"), "--out", str(out)]) == 1
    assert stat.S_IMODE(out.stat().st_mode) == 0o700
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in out.iterdir()}
    assert {"trace.json", "narrative.md", "request.json", "test_reproduction.py"} <= set(modes)
    assert set(modes.values()) == {0o600}, modes
    db = FailureDatabase(files_dir / "db")
    trace = Trace("recency", RuntimeConfig(), (SystemPrompt(10), UserMessage(10)))
    saved = db.save(trace)
    assert saved is not None and stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert stat.S_IMODE(saved.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(db.root.stat().st_mode) == 0o700


def test_shared_files_follow_the_umask(files_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRUNECHECK_SHARED_FILES", "1")
    old = os.umask(0o022)
    try:
        out = files_dir / "bundle_shared"
        assert main(["import", str(files_dir / "imp_chat.jsonl"), "--out", str(out)]) == 1
    finally:
        os.umask(old)
    modes = {stat.S_IMODE(p.stat().st_mode) for p in out.rglob("*") if p.is_file()}
    assert modes == {0o644}, modes


def test_a_bad_shared_files_value_is_bad_input(
    files_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PRUNECHECK_SHARED_FILES", "yes")
    assert main(["replay", DOCUMENTED_TRACE, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "PRUNECHECK_SHARED_FILES" in err


# ----------------------------------------------------- the failure database
def test_stray_entries_in_the_failure_database_are_reported_once_and_skipped(
    files_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = files_dir / "db"
    argv = [*CHECK.split(), "--max-examples", "0"]  # the database is read all the same
    folders: list[Path] = []
    real = FailureDatabase.folder

    def spy(self: FailureDatabase, spec: str, config: RuntimeConfig) -> Path:
        folders.append(real(self, spec, config))
        return folders[-1]

    monkeypatch.setattr(FailureDatabase, "folder", spy)
    assert main(argv) == 0  # nothing saved yet: safe at this size
    (folder,) = set(folders)  # the placement's key folder
    folder.mkdir(parents=True)
    (folder / "stray.json").mkdir()  # a folder where an entry would be
    os.mkfifo(folder / "pipe.json")  # a FIFO: never opened for reading
    (folder / "notes.json").write_text("my notes", encoding="utf-8")  # not JSON
    (folder / "other.json").write_text('{"format": "other"}', encoding="utf-8")
    (db / "junk").mkdir()  # a folder no key names
    (db / "README").write_text("a file beside the keys", encoding="utf-8")
    capsys.readouterr()
    before = _snapshot(files_dir)
    for _ in range(2):  # never fatal, on any later run
        assert main(argv) == 0
        err = capsys.readouterr().err
        assert "Traceback" not in err
        for name in ("stray.json", "pipe.json", "notes.json", "other.json"):
            assert sum(name in line for line in err.splitlines()) == 1, err
    assert _snapshot(files_dir) == before  # skipped, left where they are


def test_the_python_api_skips_strays_without_raising(tmp_path: Path) -> None:
    db = FailureDatabase(tmp_path)
    folder = db.folder("recency", RuntimeConfig())
    folder.mkdir(parents=True)
    os.mkfifo(folder / "a.json")
    (folder / "b.json").mkdir()
    assert db.entries("recency", RuntimeConfig()) == []
    assert len(db.problems) == 2 and all("skipped" in p for p in db.problems)
    db.trim(folder)  # a folder or a FIFO among the entries is never deleted
    assert (folder / "a.json").is_fifo() and (folder / "b.json").is_dir()


# ------------------------------------------------------------- streams
class _Broken(io.StringIO):
    """A standard output whose reader has gone (``| head -1``)."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_broken_pipe_on_stdout_exits_quietly_with_141(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdout", _Broken())
    assert main(["policies"]) == EXIT_BROKEN_PIPE == 141
    monkeypatch.undo()
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("command", [["policies"], ["replay", DOCUMENTED_TRACE, "--json"]])
def test_a_closed_stdout_is_one_paragraph_and_exit_2(
    command: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdout", None)  # what Python makes of a closed descriptor 1
    assert main(command) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 1
    assert "standard output is closed" in err


def test_a_closed_stdin_is_one_paragraph_and_exit_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", None)  # what Python makes of a closed descriptor 0
    assert main(["validate", "-", "--format", "openai"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 1
    assert "standard input is closed" in err


def test_validate_reads_stdin(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO('[{"role": "user", "content": "hi"}]'))
    assert main(["validate", "-", "--format", "openai"]) == 0


def _shell(script: str) -> subprocess.CompletedProcess[str]:
    """``script`` in sh, with ``P`` the prunecheck command (the real descriptors)."""
    return subprocess.run(
        ["sh", "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "P": f"{sys.executable} -m prunecheck"},
    )


def test_real_closed_descriptors_and_a_real_broken_pipe() -> None:
    """One process each, as a shell starts them: ``>&-``, ``<&-``, ``| head``."""
    done = _shell('$P validate - --format openai <&- ; echo "status $?" >&2')
    assert "standard input is closed" in done.stderr and "status 2" in done.stderr
    assert "Traceback" not in done.stderr
    done = _shell('$P validate - --format openai </dev/null >&- ; echo "status $?" >&2')
    assert "standard output is closed" in done.stderr and "status 2" in done.stderr
    assert "Traceback" not in done.stderr
    proc = subprocess.Popen(
        [sys.executable, "-m", "prunecheck", "policies"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    proc.stdout.close()
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == EXIT_BROKEN_PIPE and err == b"", err[-2000:]


def test_write_text_escapes_what_utf8_cannot_hold(tmp_path: Path) -> None:
    """A page naming a folder whose name is not UTF-8 (report --out b'\\xefr'):
    the byte is written as its escape, not a traceback."""
    page = tmp_path / "index.html"
    write_text(page, f"<a href='{BYTES_DIR}/x'>bundle</a>")
    assert "\\udcfe" in page.read_text(encoding="utf-8")


def test_one_rule_for_every_bundle_folder(tmp_path: Path) -> None:
    """Search's, explore's, check's, shrink's, import's and an agent loop's
    bundles share one check: a folder holding files takes --force."""
    folder = tmp_path / "bundle"
    folder.mkdir()
    (folder / "notes.md").write_text("mine", encoding="utf-8")
    with pytest.raises(ConfigError, match="--force"):
        check_bundle_folder(folder)
    check_bundle_folder(folder, force=True)
    check_bundle_folder(tmp_path / "new")  # a new folder: nothing to refuse
    assert (folder / "notes.md").read_text(encoding="utf-8") == "mine"

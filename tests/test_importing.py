"""``prunecheck import``: production logs recorded by the real instrumentation
libraries (tests/data/telemetry/, written by its generate.py) import to
traces that replay to the logged incident."""

from __future__ import annotations

import contextlib
import io
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from timeline_sketch import timeline_sketched

from prunecheck.model.incidents import IncidentKind
from prunecheck.model.provider import Provider
from prunecheck.model.system import incidents_of
from prunecheck.sim.cli.app import main
from prunecheck.sim.drivers.polish import minimize
from prunecheck.sim.drivers.shape import Shape
from prunecheck.sim.evidence.trace_file import read_trace
from prunecheck.sim.subjects.loader import load_system

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "telemetry"
EXAMPLE = ROOT / "examples" / "incident"

#: log file -> (the logged provider text's rule, the calls the cut unit holds,
#: the provider) for every log of a conversation whose trimmer cut a batch.
CUT = {
    "otel_genai_cut.otlp.jsonl": "result_without_call",
    "otel_genai_cut.sdk.json": "result_without_call",
    "openinference_anthropic_dropped_result.otlp.jsonl": "call_without_result",
    "openinference_openai_cut.sdk.json": "result_without_call",
    "langsmith_cut.jsonl": "result_without_call",
    "raw_chat_cut.jsonl": "result_without_call",
    "raw_responses_cut.jsonl": "result_without_call",
    "raw_anthropic_dropped_result.jsonl": "call_without_result",
}
CLEAN = ("otel_genai_clean.otlp.jsonl", "raw_chat_clean.jsonl", "raw_responses_clean.jsonl",
         "raw_anthropic_clean.jsonl")  # fmt: skip


def _logged(name: str) -> tuple[str, str]:
    """The rejected request's logged provider text and the conversation
    (read from the log itself, not from prunecheck)."""
    text = (DATA / name).read_text(encoding="utf-8")
    found = re.search(
        r"(Invalid parameter: messages with role 'tool'[^\"\\]*\.|messages\.\d+: `tool_use` ids "
        r"were found without `tool_result` blocks immediately after: [^.]+\. Each `tool_use` "
        r"block must have a corresponding `tool_result` block in the next message\.|No tool call "
        r"found for function call output with call_id [^.]+\.)",
        text,
    )
    assert found, name
    return found.group(1), name


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return status, out, err


Imported = Callable[[str], tuple[int, str, Path]]


@pytest.fixture(scope="module", autouse=True)
def _no_timeline_drawn() -> Iterator[None]:
    """The bundles of this module's in-process imports compute their
    timeline's lanes from the imported trace but draw no PNG
    (tests/timeline_sketch.py): the timeline of an imported trace is drawn in
    make test by the README's and docs/on-call.md's import examples."""
    with timeline_sketched():
        yield


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Imported:
    """``prunecheck import LOG --out DIR`` of a log, run once per module (two
    tests read each cut log's bundle): its status, standard output and DIR.
    Read the bundle only."""
    done: dict[str, tuple[int, str, Path]] = {}

    def run(name: str) -> tuple[int, str, Path]:
        if name not in done:
            out_dir = tmp_path_factory.mktemp("import") / "bundle"
            stdout, stderr = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
                status = main(["import", str(DATA / name), "--out", str(out_dir)])
            assert "Traceback" not in stdout.getvalue() + stderr.getvalue()
            done[name] = (status, stdout.getvalue(), out_dir)
        return done[name]

    return run


@pytest.mark.parametrize("name", sorted(CUT))
def test_a_cut_batch_log_imports_to_a_trace_that_replays_to_the_logged_rejection(
    name: str, imported: Imported, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, out_dir = imported(name)
    assert status == 1, out
    logged, _ = _logged(name)
    # The report names the first bad prune, the request pair with times, and quotes the 400.
    bad = [line for line in out.splitlines() if "bad prune" in line]
    assert bad and re.search(r"between request \d+ \([\d:.]+\) and request \d+ \([\d:.]+\)", bad[0])
    assert logged in out
    # ... between the rejected request and the one before it, and the replay gives the 400
    rejected = re.search(r"request (\d+) \([\d:.]+\) was rejected with HTTP 400", out)
    assert rejected, out
    n = int(rejected.group(1))
    assert f"between request {n - 1} (" in bad[0] and f"and request {n} (" in bad[0], bad[0]
    assert "the replayed request is rejected as the logged one was" in out
    # The bundle: its trace replays (with prunecheck replay) to the same rule's rejection.
    trace = read_trace(out_dir / "trace.json")
    incidents = incidents_of(trace, load_system(trace.policy))
    rejections = [i for i in incidents if i.kind is IncidentKind.PROVIDER_REJECTION]
    assert rejections and rejections[0].reason == CUT[name]
    assert any(i.kind is IncidentKind.INVALID_PRUNE for i in incidents)
    status, replayed, _ = _run(["replay", str(out_dir / "trace.json")], capsys)
    assert status == 1 and "provider rejection" in replayed
    narrative = (out_dir / "narrative.md").read_text(encoding="utf-8")
    pair = re.search(r"between request (\d+) \(([\d:.]+)\) and request (\d+)", narrative, re.I)
    assert pair and "First bad prune" in narrative and logged in narrative
    # The narrative says which step each request is, so the pair can be found in the steps.
    assert f"request {pair.group(3)} is step" in narrative
    assert json.loads((out_dir / "request.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", CLEAN)
def test_a_log_with_no_structural_damage_imports_and_replays_clean(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "bundle"
    status, out, _ = _run(["import", str(DATA / name), "--out", str(out_dir)], capsys)
    assert status == 0, out
    assert "a whole closed unit" in out and "bad prune" not in out  # it did remove units
    assert "??" not in out and "!!" not in out, out  # nothing it cannot tell
    status, replayed, _ = _run(["replay", str(out_dir / "trace.json"), "--quiet"], capsys)
    assert (status, replayed.strip()) == (0, "verdict: no violation.")


def test_the_formats_are_told_apart_and_grouped_by_their_conversation_ids(
    capsys: pytest.CaptureFixture[str],
) -> None:
    expected = {
        "otel_genai_cut.otlp.jsonl": ("conv-cut-batch", "otel-genai", Provider.OPENAI),
        "otel_genai_cut.sdk.json": ("conv-cut-batch", "otel-genai", Provider.OPENAI),
        "openinference_anthropic_dropped_result.otlp.jsonl": (
            "conv-anthropic",
            "openinference",
            Provider.ANTHROPIC,
        ),
        "openinference_openai_cut.sdk.json": (
            "conv-openinference",
            "openinference",
            Provider.OPENAI,
        ),
        "langsmith_cut.jsonl": ("conv-langsmith", "langsmith", Provider.OPENAI),
        "raw_chat_cut.jsonl": ("conv-cut-batch", "openai-chat", Provider.OPENAI),
        "raw_responses_cut.jsonl": (
            "conv-responses",
            "openai-responses",
            Provider.OPENAI_RESPONSES,
        ),
        "raw_anthropic_dropped_result.jsonl": ("conv", "anthropic", Provider.ANTHROPIC),
    }
    for name, (conversation, fmt, provider) in expected.items():
        _, out, _ = _run(["import", str(DATA / name)], capsys)
        head = out.splitlines()[0]
        assert head.startswith(f"conversation {conversation}:"), (name, head)
        assert f"({fmt}, provider {provider})" in head, (name, head)


def test_the_spans_of_the_two_layouts_import_to_the_same_trace(tmp_path: Path) -> None:
    from prunecheck.sim.ingest.incident import import_conversation
    from prunecheck.sim.ingest.reading import read_log

    traces = []
    for name in ("otel_genai_cut.otlp.jsonl", "otel_genai_cut.sdk.json", "raw_chat_cut.jsonl"):
        log = read_log([DATA / name])
        (conversation, requests), *_ = log.conversations.items()
        traces.append(import_conversation(conversation, requests).trace)
    assert traces[0].events == traces[1].events == traces[2].events
    assert traces[0].policy == traces[1].policy == traces[2].policy


def test_a_folder_of_request_files_and_a_user_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "requests"
    folder.mkdir()
    for i, line in enumerate((DATA / "raw_chat_cut.jsonl").read_text().splitlines()):
        record = json.loads(line)
        record["tenant"] = {"chat": "t-42"}
        (folder / f"{i:03d}.json").write_text(json.dumps(record, indent=2))
    status, out, _ = _run(["import", str(folder), "--key", "tenant.chat"], capsys)
    assert status == 1 and out.startswith("conversation t-42: 3 of 3 request(s)")


def test_each_conversation_of_a_log_gets_its_own_bundle(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    both = tmp_path / "both.jsonl"
    both.write_text(
        (DATA / "raw_chat_cut.jsonl").read_text() + (DATA / "raw_chat_clean.jsonl").read_text()
    )
    status, out, _ = _run(["import", str(both), "--out", str(tmp_path / "out")], capsys)
    assert status == 1  # one of them reproduces a violation
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["conv-clean", "conv-cut-batch"]
    for name, expected in (("conv-clean", 0), ("conv-cut-batch", 1)):
        trace = read_trace(tmp_path / "out" / name / "trace.json")
        violations = [i for i in incidents_of(trace, load_system(trace.policy)) if i.is_violation]
        assert bool(violations) == bool(expected)
    status, out, _ = _run(["import", str(both), "--conversation", "conv-clean"], capsys)
    assert status == 0 and out.startswith("conversation conv-clean:")


def test_fix_policy_replays_the_same_events_and_exits_with_its_verdict(
    capsys: pytest.CaptureFixture[str],
) -> None:
    log = str(EXAMPLE / "spans.otlp.jsonl")
    fixed = f"{EXAMPLE / 'trim.py'}:keep_last_units@openai"
    status, out, _ = _run(["import", log, "--policy", fixed], capsys)
    assert status == 0 and "no violation on the same events (the fix holds)" in out
    buggy = f"{EXAMPLE / 'trim.py'}:keep_last@openai"  # the trimmer that wrote the log
    status, out, _ = _run(["import", log, "--policy", buggy], capsys)
    assert status == 1 and "still 5 violation(s) on the same events" in out


@pytest.mark.parametrize("name", sorted(CUT))
def test_an_imported_cut_batch_trace_shrinks_to_at_most_15_events(
    name: str, imported: Imported
) -> None:
    trace = read_trace(imported(name)[2] / "trace.json")
    system = load_system(trace.policy)
    target = frozenset({IncidentKind.PROVIDER_REJECTION})
    shrunk = minimize(trace.events, trace.config, system, Shape(), target)
    assert len(trace.events) <= 15 and len(shrunk) <= len(trace.events)
    rejected = [i for i in incidents_of(trace.with_events(shrunk), system) if i.kind in target]
    assert rejected and rejected[0].reason == CUT[name]


def test_the_on_call_page_shows_commands_that_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    page = (ROOT / "docs" / "on-call.md").read_text(encoding="utf-8")
    commands = [
        line.removeprefix("$ ").split("  #")[0].split()
        for line in page.splitlines()
        if line.startswith("$ prunecheck ")
    ]
    assert len(commands) >= 4
    monkeypatch.chdir(tmp_path)
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    statuses = []
    for argv in commands:
        status, _out, err = _run(argv[1:], capsys)
        assert status in (0, 1), (argv, err)
        statuses.append((" ".join(argv), status))
    # the import reproduces the incident, the fix holds, the gated replay is clean
    assert ("prunecheck import examples/incident/spans.otlp.jsonl --out incident", 1) in statuses
    assert any("--policy" in c and s == 0 for c, s in statuses)
    assert any("--gate commit" in c and s == 0 for c, s in statuses)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/on-call.md" in readme


def test_import_help_shows_the_workflow(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _run(["import", "--help"], capsys)
    assert status == 0
    assert "prunecheck import examples/incident/spans.otlp.jsonl --out incident/" in out
    assert "prunecheck replay incident/trace.json" in out


@pytest.mark.slow
def test_regenerated_logs_import_the_same_way(tmp_path: Path) -> None:
    """Run the real libraries again (generate.py) and import both sets."""
    import importlib.util

    from prunecheck.sim.ingest.incident import import_conversation
    from prunecheck.sim.ingest.reading import read_log

    spec = importlib.util.spec_from_file_location("generate", DATA / "generate.py")
    assert spec is not None and spec.loader is not None
    generate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generate)
    written = generate.generate(tmp_path)
    assert {p.name for p in written} == {*CUT, *CLEAN}
    for path in written:
        imports = []
        for log in (path, DATA / path.name):
            (conversation, requests), *_ = read_log([log]).conversations.items()
            imported = import_conversation(conversation, requests)
            imports.append((conversation, imported.trace.events, imported.trace.policy))
        assert imports[0] == imports[1], path.name


def test_import_then_shrink_on_the_command_line_gives_at_most_15_events(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The on-call workflow end to end: ``prunecheck import LOG --out B``
    then ``prunecheck shrink B/trace.json --out S``: the shrunk bundle's
    trace holds at most 15 events and still shows the logged rejection."""
    log = EXAMPLE / "spans.otlp.jsonl"
    status, _out, err = _run(["import", str(log), "--out", str(tmp_path / "b")], capsys)
    assert status == 1, err
    imported = read_trace(tmp_path / "b" / "trace.json")
    status, _out, err = _run(
        ["shrink", str(tmp_path / "b" / "trace.json"), "--out", str(tmp_path / "s")], capsys
    )
    assert status == 1, err
    shrunk = read_trace(tmp_path / "s" / "trace.json")
    assert len(shrunk.events) <= 15
    assert len(shrunk.events) <= len(imported.events) + 4  # shrunk, then run on to the harm
    kinds = {i.kind for i in incidents_of(shrunk, load_system(shrunk.policy))}
    assert IncidentKind.PROVIDER_REJECTION in kinds

"""``prunecheck import`` on the instrumentation stacks people run, each recorded
for real (tests/data/telemetry/record_stacks.py: the real framework and its
real instrumentation against the loopback stub): clean traffic imports clean,
a real cut gives the bad prune between the right requests, a replay that
reproduces the provider's 400, and a trace that shrinks to at most 15 events.
Each stack's own semantics has a test on its recorded log."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from timeline_sketch import timeline_sketched

from prunecheck.model.incidents import IncidentKind
from prunecheck.model.provider import Provider
from prunecheck.model.system import incidents_of
from prunecheck.sim.cli.app import main
from prunecheck.sim.drivers.polish import minimize
from prunecheck.sim.drivers.shape import Shape
from prunecheck.sim.evidence.trace_file import read_trace
from prunecheck.sim.ingest.reading import read_log
from prunecheck.sim.ingest.recovery import named_ids
from prunecheck.sim.subjects.loader import load_system

DATA = Path(__file__).resolve().parent / "data" / "telemetry"

CLEAN = (
    "openai_agents_openinference/clean.otlp.jsonl",
    "openai_agents_openinference/clean_no_instructions.otlp.jsonl",
    "langchain_openinference/clean.sdk.json",
    "langsmith_list_runs/clean.jsonl",
    "openllmetry_anthropic/clean.otlp.jsonl",
    "pydantic_ai_otel/1.x_v1_clean.otlp.jsonl",
    "pydantic_ai_otel/1.x_v2_clean.otlp.jsonl",
    "pydantic_ai_otel/2.9_v5_clean.otlp.jsonl",
    "pydantic_ai_otel/2.x_v5_clean.otlp.jsonl",
    "pydantic_ai_otel/2.x_v6_clean.otlp.jsonl",
    "pydantic_ai_otel/2.x_v5_last_3.otlp.jsonl",
)
#: log -> (the rule of the logged 400, the request the provider rejected)
CUT = {
    "openai_agents_openinference/cut.otlp.jsonl": ("result_without_call", 2),
    "langchain_openinference/cut.sdk.json": ("result_without_call", 3),
    "langchain_openinference/two_threads_one_parent.sdk.json": ("result_without_call", 3),
    "langsmith_list_runs/cut.jsonl": ("result_without_call", 3),
    "openllmetry_anthropic/cut.otlp.jsonl": ("call_without_result", 2),
    "pydantic_ai_otel/1.x_v1_cut.otlp.jsonl": ("result_without_call", 2),
    "pydantic_ai_otel/1.x_v2_cut.otlp.jsonl": ("result_without_call", 2),
    # pydantic-ai 2.0 to 2.9 send the cut as it is (2.9.1, its format 5)
    "pydantic_ai_otel/2.9_v5_cut.otlp.jsonl": ("result_without_call", 2),
}


@pytest.fixture(scope="module", autouse=True)
def _no_timeline_drawn() -> Iterator[None]:
    """The bundles written here compute their timeline's lanes but draw no PNG
    (tests/timeline_sketch.py; the docs' import examples draw one)."""
    with timeline_sketched():
        yield


def _import(name: str, capsys: pytest.CaptureFixture[str], *more: str) -> tuple[int, str]:
    status = main(["import", str(DATA / name), *more])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return status, out


@pytest.mark.parametrize("name", CLEAN)
def test_clean_traffic_imports_clean_with_nothing_it_cannot_tell(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out = _import(name, capsys)
    assert status == 0, out
    assert "??" not in out and "!!" not in out, out
    assert "replay: no violation" in out


@pytest.mark.parametrize("name", sorted(CUT))
def test_a_real_cut_is_the_bad_prune_before_the_rejected_request_and_replays_to_its_400(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rule, rejected = CUT[name]
    status, out = _import(name, capsys, "--out", str(tmp_path / "b"))
    assert status == 1, out
    bad = [line for line in out.splitlines() if "bad prune" in line]
    assert len(bad) == 1, out
    assert f"between request {rejected - 1} (" in bad[0] and f"and request {rejected} (" in bad[0]
    assert re.search(rf"request {rejected} \([\d:.]+\) was rejected with HTTP 400", out), out
    assert "the replayed request is rejected as the logged one was" in out
    bundle = tmp_path / "b"
    if not (bundle / "trace.json").exists():  # several conversations: the one with the cut
        (bundle,) = [p for p in bundle.iterdir() if "bad prune" in (p / "narrative.md").read_text()]
    trace = read_trace(bundle / "trace.json")
    system = load_system(trace.policy)
    rejections = [i for i in incidents_of(trace, system)
                  if i.kind is IncidentKind.PROVIDER_REJECTION]  # fmt: skip
    assert rejections and rejections[0].reason == rule
    target = frozenset({IncidentKind.PROVIDER_REJECTION})
    shrunk = minimize(trace.events, trace.config, system, Shape(), target)
    assert len(shrunk) <= 15
    again = [i for i in incidents_of(trace.with_events(shrunk), system) if i.kind in target]
    assert again and again[0].reason == rule


# ------------------------------------------------------ each stack's semantics
def test_responses_items_of_one_response_are_one_assistant_message() -> None:
    """OpenInference writes each function_call item of the Agents SDK's input
    as an assistant message of its own; they are the one batch that issued them."""
    log = read_log([DATA / "openai_agents_openinference/clean.otlp.jsonl"])
    (requests,) = log.conversations.values()
    second = requests[1]  # the user's question, the batch, its three results
    batches = [m for m in second.messages if m.calls]
    assert [len(m.calls) for m in batches] == [3]
    assert [m.answers for m in second.messages if m.answers] == [c.id for c in batches[0].calls]
    raw = (DATA / "openai_agents_openinference/clean.otlp.jsonl").read_text()
    # the log itself writes them one message each (what was read as six bad prunes)
    assert re.search(r"llm\.input_messages\.4\.message\.tool_calls\.0\.tool_call\.id", raw)


@pytest.mark.parametrize("name", ["clean.otlp.jsonl", "cut.otlp.jsonl"])
def test_agents_sdk_spans_are_judged_in_the_responses_apis_words(name: str) -> None:
    """OpenInference writes the Agents SDK's Responses items as chat messages;
    the requests are still the Responses API's, judged by its rules: the
    replay of the cut gives the Responses text the log holds."""
    log = read_log([DATA / "openai_agents_openinference" / name])
    (requests,) = log.conversations.values()
    assert {r.provider for r in requests} == {Provider.OPENAI_RESPONSES}
    assert all("input" in r.request_body() for r in requests)


def test_the_agents_sdk_cut_replays_to_the_responses_text(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out = _import("openai_agents_openinference/cut.otlp.jsonl", capsys)
    assert status == 1, out
    assert "provider openai-responses" in out
    line = next(x for x in out.splitlines() if x.strip().startswith("replay:"))
    assert "rejected as the logged one was: No tool call found for function call output" in line
    assert "Chat Completions' words" not in line


def test_a_rejected_agents_sdk_call_is_rebuilt_from_the_spans_around_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The Agents SDK records a failed response's span with its error and no
    input: request 2 is request 1, its response and the results of the tool
    spans, less the call the provider's error names."""
    log = read_log([DATA / "openai_agents_openinference/cut.otlp.jsonl"])
    (requests,) = log.conversations.values()
    failed = requests[-1]
    assert failed.rejection is not None and failed.rejection.startswith("No tool call found")
    named = named_ids(failed.rejection)
    assert named is not None
    (missing,) = named[1]
    assert missing not in {c.id for m in failed.messages for c in m.calls}
    assert missing in {m.answers for m in failed.messages}
    assert any("rebuilt from request 1" in b for b in failed.blind)


def test_a_rejected_call_that_cannot_be_rebuilt_keeps_the_incident(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without the tool spans the request cannot be rebuilt: it is an incomplete
    request that keeps the 400, and the import never exits 0 on it."""
    data = json.loads((DATA / "openai_agents_openinference/cut.otlp.jsonl").read_text())
    for resource in data["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            scope["spans"] = [s for s in scope["spans"] if s["name"] != "read_file"]
    log = tmp_path / "no_tools.otlp.jsonl"
    log.write_text(json.dumps(data) + "\n")
    status = main(["import", str(log)])
    out = capsys.readouterr().out
    assert status == 1, out
    assert "No tool call found for function call output" in out
    assert "its span holds no messages" in out


def test_pydantic_ai_failed_call_is_read_from_its_agent_run_span() -> None:
    for name in ("1.x_v1_cut.otlp.jsonl", "1.x_v2_cut.otlp.jsonl", "2.9_v5_cut.otlp.jsonl"):
        log = read_log([DATA / "pydantic_ai_otel" / name])
        (requests,) = log.conversations.values()
        assert any("read from the agent run span" in b for b in requests[-1].blind)
        assert [m.role.value for m in requests[-1].messages][:1] == ["system"]


def test_pydantic_ai_before_2_10_sends_the_cut_and_the_provider_answers_400() -> None:
    """The 2.x cut that reaches the provider: pydantic-ai 2.9.1 (the last
    release before the repair) sends the window as the history processor left
    it, and its failed chat span holds the provider's 400 body; the import of
    it is test_a_real_cut_is_the_bad_prune_before_the_rejected_request's case."""
    data = json.loads((DATA / "pydantic_ai_otel/2.9_v5_cut.otlp.jsonl").read_text())
    scopes = [sc for r in data["resourceSpans"] for sc in r["scopeSpans"]]
    assert {sc["scope"]["version"] for sc in scopes if sc["scope"]["name"] == "pydantic-ai"} == {
        "2.9.1"
    }
    chats = [s for sc in scopes for s in sc["spans"] if s["name"].startswith("chat ")]
    assert [(s.get("status") or {}).get("code") for s in chats] == [None, "STATUS_CODE_ERROR"]
    assert "status_code: 400" in chats[-1]["status"]["message"]
    assert "must be a response to a preceeding message" in chats[-1]["status"]["message"]


@pytest.mark.parametrize("name", ["2.x_v5_cut.otlp.jsonl", "2.x_v6_cut.otlp.jsonl"])
def test_pydantic_ai_2x_repairs_the_cut_before_sending_and_the_import_invents_no_400(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """pydantic-ai 2.10 on (2.68 here) drops the tool results whose call the
    window removed (and would synthesize results for calls left without one)
    before each request: the recorded cut never reaches the provider (2.0 to
    2.9 send it: 2.9_v5_cut gets its 400, above) -- every model call
    succeeded, and the run ends at pydantic-ai's request limit as the agent
    calls the tools again.  The import reads every request and names each
    batch gone whole with its results; it invents no bad prune and no 400."""
    data = json.loads((DATA / "pydantic_ai_otel" / name).read_text())
    spans = [s for r in data["resourceSpans"] for sc in r["scopeSpans"] for s in sc["spans"]]
    chats = [s for s in spans if s["name"].startswith("chat ")]
    assert len(chats) == 6
    assert not [s for s in chats if (s.get("status") or {}).get("code") == "STATUS_CODE_ERROR"]
    assert any("UsageLimitExceeded" in (s.get("status") or {}).get("message", "") for s in spans)
    status, out = _import(f"pydantic_ai_otel/{name}", capsys)
    assert status == 0, out
    assert "bad prune" not in out and "rejected" not in out and "!!" not in out, out
    assert "6 of 6 request(s)" in out
    assert out.count("and the results of call_") == 5  # each batch removed whole
    assert "replay: no violation" in out
    # the results no request carried: their execute_tool spans say the tools ran
    ran = {_attr(s, "gen_ai.tool.call.id"): _attr(s, "gen_ai.tool.call.result")
           for s in spans if s["name"] == "execute_tool read_file"}  # fmt: skip
    said = r"the result of (call_\w+) is in no logged request, though its tool ran \(a tool "
    lost = re.findall(said + r"span records (\d+) characters of output for it\)", out)
    assert len(lost) == 15 and "the log cannot tell which" not in out, out
    assert all(int(n) == len(ran[c]) for c, n in lost)


def _attr(span: dict[str, Any], key: str) -> str:
    return next(str(a["value"]["stringValue"]) for a in span["attributes"] if a["key"] == key)


def test_langsmith_runs_are_grouped_by_thread_never_by_the_project(
    capsys: pytest.CaptureFixture[str],
) -> None:
    runs = [json.loads(line) for line in (DATA / "langsmith_list_runs/cut.jsonl").open()]
    (project,) = {r["session_id"] for r in runs}  # list_runs: session_id is the project's id
    status, out = _import("langsmith_list_runs/cut.jsonl", capsys)
    heads = [line for line in out.splitlines() if line.startswith("conversation ")]
    assert [h.split(":")[0] for h in heads] == [
        "conversation thread-clean",
        "conversation thread-cut",
    ]
    assert project not in out
    assert "not imported" not in out  # the clean thread is not dropped after the 400
    assert status == 1


def test_langsmith_runs_without_thread_metadata_are_joined_by_lineage(tmp_path: Path) -> None:
    """wrap_openai records each model call as a trace of its own: without
    thread metadata the threads are the traces that continue each other."""
    runs = [json.loads(line) for line in (DATA / "langsmith_list_runs/cut.jsonl").open()]
    for run in runs:
        for name in ("thread_id", "conversation_id"):
            run["extra"]["metadata"].pop(name, None)
    assert len({r["trace_id"] for r in runs}) == len(runs)
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in runs))
    log = read_log([path])
    assert sorted(len(held) for held in log.conversations.values()) == [3, 4]
    cut = next(held for held in log.conversations.values() if len(held) == 3)
    assert cut[-1].rejection is not None
    assert read_log([path], key="extra.metadata.missing").conversations.keys() == {
        f"trace {r['trace_id']}" for r in runs
    }  # a key the user names is kept to, even where runs lack it


def test_an_agent_without_instructions_is_no_cut() -> None:
    """The Agents SDK's spans number the input items from 1 (0 is the
    instructions): an agent with none has no message 0, and nothing was cut."""
    log = read_log([DATA / "openai_agents_openinference/clean_no_instructions.otlp.jsonl"])
    assert not log.incomplete
    (requests,) = log.conversations.values()
    assert len(requests) == 4 and all(m.role.value != "system" for m in requests[0].messages)


def test_two_threads_under_one_parent_span_are_told_apart_by_lineage(
    capsys: pytest.CaptureFixture[str],
) -> None:
    log = read_log([DATA / "langchain_openinference/two_threads_one_parent.sdk.json"])
    names = sorted(log.conversations)
    assert len(names) == 2 and all(" thread " in n for n in names)
    assert [len(log.conversations[n]) for n in names] == [4, 3]
    assert any("told apart by their lineage" in note for note in log.notes)


def test_the_same_words_twice_are_two_answers_not_one_sent_again(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """pydantic-ai 2.x, a window of the last three messages, three turns answered
    in the same words: the third request holds the second answer, not the first
    one sent again."""
    text = (DATA / "pydantic_ai_otel/2.x_v5_last_3.otlp.jsonl").read_text()
    assert text.count("They define the app, its database and its token check.") >= 3
    status, out = _import("pydantic_ai_otel/2.x_v5_last_3.otlp.jsonl", capsys)
    assert status == 0 and "again" not in out and "??" not in out, out


def test_openais_tool_call_id_not_found_text_is_recognized_and_rebuilds_the_request(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """OpenAI's `'tool_call_id' of 'X' not found in 'tool_calls' of previous
    message` (seen in logs, recognized by the provider registry): in place of
    the Responses text of the recorded Agents SDK cut, it names the same
    missing call, so the rejected request is rebuilt and replays to its 400."""
    raw = (DATA / "openai_agents_openinference/cut.otlp.jsonl").read_text()
    found = re.search(r"No tool call found for function call output with call_id (\w+)\.", raw)
    assert found is not None
    other = f"Invalid parameter: 'tool_call_id' of '{found.group(1)}' not found in 'tool_calls' " \
        "of previous message."  # fmt: skip
    data = json.loads(raw)
    for resource in data["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                if found.group(0) in span.get("status", {}).get("message", ""):
                    # the SDK's SpanError as OpenInference writes it (Python's repr)
                    error = {"error": f"Error code: 400 - {other}"}
                    span["status"]["message"] = f"Error getting response: {error!r}"
    path = tmp_path / "cut.otlp.jsonl"
    path.write_text(json.dumps(data) + "\n")
    assert named_ids(other) == ("result_without_call", (found.group(1),))
    status = main(["import", str(path)])
    out = capsys.readouterr().out
    assert status == 1, out
    assert f"rejected with HTTP 400: {other} — the provider's tool pairing rule" in out
    assert "the replayed request is rejected as the logged one was" in out


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("No tool call found for function call output with call_id call_7.",
         ("result_without_call", ("call_7",))),
        ("No tool output found for function call call_8.", ("call_without_result", ("call_8",))),
        ("messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: "
         "toolu_1. Each `tool_use` block must have a corresponding `tool_result` block in the "
         "next message.", ("call_without_result", ("toolu_1",))),
    ],
)  # fmt: skip
def test_the_ids_a_rejection_names_are_read_from_the_providers_texts(
    text: str, expected: tuple[str, tuple[str, ...]]
) -> None:
    assert named_ids(text) == expected


@pytest.mark.slow
def test_recording_the_stacks_again_imports_the_same_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run the real frameworks and instrumentations again (record_stacks.py,
    the `record` extra) and import both sets: the same requests, removals and
    rejections (ids and times differ run to run)."""
    import importlib.util

    from prunecheck.sim.ingest.incident import import_conversation

    for name in (
        "openinference.instrumentation.openai_agents",
        "openinference.instrumentation.langchain",
        "opentelemetry.instrumentation.anthropic",
        "pydantic_ai",
        "langsmith",
    ):
        pytest.importorskip(name)  # fmt: skip
    spec = importlib.util.spec_from_file_location("record_stacks", DATA / "record_stacks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "record_stacks", module)  # pydantic-ai reads its hints
    spec.loader.exec_module(module)
    written = module.record(tmp_path)

    def shape(path: Path) -> list[tuple[int, int, list[bool]]]:
        out = []
        for conversation, requests in read_log([path]).conversations.items():
            done = import_conversation(conversation, requests)
            out.append((len(requests), len(done.trace.events), [f.bad for f in done.findings]))
        return sorted(out)

    assert len(written) >= 12
    for path in written:
        committed = DATA / path.relative_to(tmp_path)
        assert shape(path) == shape(committed), path.name


# ------------------------------------------------- every stack shipped twice
def _exercised(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    status = main(["import", str(path), "--json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return status, json.loads(out)["exercised"]


def _shipped_twice(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``name`` shipped twice (its records again after it, a JSON list's
    elements twice) imports as it does once, and says it read records twice."""
    path = DATA / name
    twice = tmp_path / path.name
    if name.endswith(".spans.json"):  # Phoenix's export: one JSON list
        listed = json.loads(path.read_text())
        twice.write_text(json.dumps(listed + listed))
    else:
        text = path.read_text().rstrip("\n") + "\n"
        twice.write_text(text + text)
    assert _exercised(twice, capsys) == _exercised(path, capsys)
    main(["import", str(twice)])
    assert "seen before" in capsys.readouterr().out


@pytest.mark.parametrize(
    "name",
    ["langsmith_list_runs/cut.jsonl", "mlflow/cut.traces.jsonl", "agents_tracing/cut.spans.jsonl",
     "phoenix/cut.spans.json"],
)  # fmt: skip
def test_a_stack_log_shipped_twice_imports_as_once(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The readers with ids of their own: LangSmith runs, MLflow traces, the
    Agents SDK's processor export, Phoenix's span list (the spans' own ids
    are test_bad_inputs_scale's case)."""
    _shipped_twice(name, tmp_path, capsys)


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    sorted(
        str(p.relative_to(DATA))
        for p in DATA.rglob("*.json*")
        if "responses_cut.spans" not in p.name
    ),
)
def test_every_recorded_log_shipped_twice_imports_as_once(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _shipped_twice(name, tmp_path, capsys)

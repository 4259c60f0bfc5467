"""``prunecheck import`` on the logs of six observability stacks, each recorded
by the stack's real instrumentation (tests/data/telemetry/record_observability.py:
OpenLLMetry, Pydantic Logfire, Langfuse, Arize Phoenix, MLflow, the OpenAI
Agents SDK's own tracing) against a fake model that answers broken requests
with the provider's real 400 body.  Each stack: a clean conversation, a cut
one (a dropped tool result) and a rejected one (a window that starts inside
a parallel batch); Logfire, MLflow and Phoenix also the three on the anthropic
client.  The tests read the committed logs only: none of the
recording packages is needed."""

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
from prunecheck.model.system import incidents_of
from prunecheck.sim.cli.app import main
from prunecheck.sim.drivers.polish import minimize
from prunecheck.sim.drivers.shape import Shape
from prunecheck.sim.evidence.trace_file import read_trace
from prunecheck.sim.ingest.reading import read_log
from prunecheck.sim.subjects.loader import load_system

DATA = Path(__file__).resolve().parent / "data" / "telemetry"

#: stack folder -> the suffix of its logs (the file format a user of it gets).
STACKS = {
    "openllmetry": ".otlp.jsonl",
    "logfire": ".otlp.jsonl",
    "langfuse": ".otlp.jsonl",
    "phoenix": ".spans.json",
    "mlflow": ".traces.jsonl",
    "agents_tracing": ".spans.jsonl",
}
#: recorded case -> the tool pairing rule the fake model's 400 quotes.
BROKEN = {
    "cut": "call_without_result",
    "rejected": "result_without_call",
    "anthropic_cut": "call_without_result",
    "anthropic_rejected": "result_without_call",
}
#: Logfire, MLflow and Phoenix also recorded the anthropic client: a second provider's texts.
ANTHROPIC = ("logfire", "mlflow", "phoenix")
CLEAN = [
    *((stack, "clean") for stack in STACKS),
    *((s, "anthropic_clean") for s in ANTHROPIC),
    ("agents_tracing", "responses_clean_inputs"),  # the SDK's default model, inputs written
]
CUT = [(stack, "cut") for stack in STACKS] + [(s, "anthropic_cut") for s in ANTHROPIC]
REJECTED = [*CUT, *((stack, "rejected") for stack in STACKS),
            *((s, "anthropic_rejected") for s in ANTHROPIC)]  # fmt: skip
_TEXTS = re.compile(
    r"(An assistant message with 'tool_calls' must be followed by tool messages responding to "
    r"each 'tool_call_id'\. The following tool_call_ids did not have response messages: "
    r"call_\w+|Invalid parameter: messages with role 'tool' must be a response to a "
    r"preceeding message with 'tool_calls'\.|messages\.\d+: `tool_use` ids were found without "
    r"`tool_result` blocks immediately after: toolu_\w+\. Each `tool_use` block must have a "
    r"corresponding `tool_result` block in the next message\.|messages\.\d+\.content\.\d+: "
    r"unexpected `tool_use_id` found in `tool_result` blocks: toolu_\w+\. Each `tool_result` "
    r"block must have a corresponding `tool_use` block in the previous message\.)"
)


def _log(stack: str, case: str) -> Path:
    return DATA / stack / f"{case}{STACKS[stack]}"


def _logged(path: Path) -> str:
    """The provider's text as the log holds it (read from the file, not by prunecheck)."""
    found = _TEXTS.search(path.read_text(encoding="utf-8"))
    assert found, path
    return found.group(1)


Imported = Callable[[Path], tuple[int, str, Path]]


@pytest.fixture(scope="module", autouse=True)
def _no_timeline_drawn() -> Iterator[None]:
    with timeline_sketched():
        yield


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Imported:
    """``prunecheck import LOG --out DIR``, once per log: status, output, DIR."""
    done: dict[Path, tuple[int, str, Path]] = {}

    def run(log: Path) -> tuple[int, str, Path]:
        if log not in done:
            out_dir = tmp_path_factory.mktemp("import") / "bundle"
            stdout, stderr = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
                status = main(["import", str(log), "--out", str(out_dir)])
            text = stdout.getvalue() + stderr.getvalue()
            assert "Traceback" not in text
            done[log] = (status, text, out_dir)
        return done[log]

    return run


@pytest.mark.parametrize(("stack", "case"), CLEAN)
def test_clean_traffic_imports_to_no_incident_and_nothing_unknown(
    stack: str, case: str, imported: Imported
) -> None:
    status, out, out_dir = imported(_log(stack, case))
    assert status == 0, out
    assert "??" not in out and "bad prune" not in out and "rejected" not in out
    assert "a whole closed unit" in out  # the trimmer did remove whole units
    assert "4 of 4 request(s)" in out  # two turns of two model calls each
    trace = read_trace(out_dir / "trace.json")
    assert not [i for i in incidents_of(trace, load_system(trace.policy)) if i.is_violation]


@pytest.mark.parametrize(("stack", "case"), REJECTED)
def test_a_broken_conversation_names_the_prune_the_400_and_replays_it(
    stack: str, case: str, imported: Imported
) -> None:
    log = _log(stack, case)
    status, out, out_dir = imported(log)
    assert status == 1, out
    logged = _logged(log)
    # the rejected request is the last one; the bad prune is between it and the one before
    rejected = re.search(r"request (\d+) \([\d:.]+\) was rejected with HTTP 400: (.*?) — (.*)", out)
    assert rejected and rejected.group(2) == logged, out
    assert rejected.group(3).startswith("the provider's tool pairing rule, in its own words")
    n = int(rejected.group(1))
    total = re.search(r"(\d+) of (\d+) request\(s\)", out)
    assert total and int(total.group(2)) == n
    bad = [line for line in out.splitlines() if "bad prune" in line]
    assert bad and f"and request {n} (" in bad[0] and f"between request {n - 1} (" in bad[0]
    # the replayed trace meets the same provider rule
    trace = read_trace(out_dir / "trace.json")
    incidents = incidents_of(trace, load_system(trace.policy))
    rejections = [i for i in incidents if i.kind is IncidentKind.PROVIDER_REJECTION]
    assert rejections and rejections[0].reason == BROKEN[case]
    assert any(i.kind is IncidentKind.INVALID_PRUNE for i in incidents)
    assert "the replayed request is rejected as the logged one was" in out
    assert json.loads((out_dir / "request.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(("stack", "case"), REJECTED)
def test_a_cut_conversation_shrinks_to_at_most_15_events(
    stack: str, case: str, imported: Imported
) -> None:
    """Every broken conversation: the dropped result and the window inside a
    batch alike (each trace is the import's, already made for the test above)."""
    trace = read_trace(imported(_log(stack, case))[2] / "trace.json")
    system = load_system(trace.policy)
    target = frozenset({IncidentKind.PROVIDER_REJECTION})
    shrunk = minimize(trace.events, trace.config, system, Shape(), target)
    assert len(shrunk) <= 15 and len(shrunk) <= len(trace.events)
    rejected = [i for i in incidents_of(trace.with_events(shrunk), system) if i.kind in target]
    assert rejected and rejected[0].reason == BROKEN[case]


def test_each_stack_groups_by_its_own_conversation_id() -> None:
    """Langfuse and Phoenix: session.id; MLflow: the trace's session metadata;
    the Agents SDK: the traces' group_id (two runs, one conversation)."""
    for stack in ("langfuse", "phoenix", "mlflow", "agents_tracing"):
        log = read_log([_log(stack, "clean")])
        assert list(log.conversations) == [f"{stack}-clean"], stack
    log = read_log([_log("agents_tracing", "clean")], key="missing")
    assert len(log.conversations) == 2  # no such metadata: one conversation per trace (run)


def test_a_model_call_whose_input_the_stack_did_not_keep_is_a_gap(tmp_path: Path) -> None:
    """An Agents SDK response span (the Responses model logs only the response
    id), a Langfuse generation without input and an MLflow chat span without
    inputs are named as gaps, never guessed at."""
    agents = _log("agents_tracing", "clean").read_text(encoding="utf-8").splitlines()
    first = next(i for i, line in enumerate(agents) if '"type": "generation"' in line)
    span = json.loads(agents[first])
    span["span_data"] = {"type": "response", "response_id": "resp_1", "usage": None}
    agents[first] = json.dumps(span)
    path = tmp_path / "agents.jsonl"
    path.write_text("\n".join(agents) + "\n", encoding="utf-8")
    log = read_log([path])
    (gap,) = log.gaps["agents_tracing-clean"]
    assert "a response span without its input" in gap and span["id"] in gap
    assert len(log.conversations["agents_tracing-clean"]) == 3

    mlflow = json.loads(_log("mlflow", "clean").read_text(encoding="utf-8").splitlines()[0])
    chat = [s for s in mlflow["data"]["spans"] if "mlflow.spanInputs" in s["attributes"]
            and "CHAT_MODEL" in s["attributes"].get("mlflow.spanType", "")]  # fmt: skip
    del chat[0]["attributes"]["mlflow.spanInputs"]
    path = tmp_path / "mlflow.jsonl"
    path.write_text(json.dumps(mlflow) + "\n", encoding="utf-8")
    log = read_log([path])
    assert any("without mlflow.spanInputs" in g for g in log.gaps["mlflow-clean"])

    text = _log("langfuse", "clean").read_text(encoding="utf-8")
    cut = text.replace('"key": "langfuse.observation.input"', '"key": "langfuse.observation.in"', 1)
    path = tmp_path / "langfuse.jsonl"
    path.write_text(cut, encoding="utf-8")
    log = read_log([path])
    assert any("without langfuse.observation.input" in g for g in log.gaps["langfuse-clean"])


def test_the_agents_sdk_default_model_logs_no_request_but_its_400_is_never_a_clean_exit(
    imported: Imported,
) -> None:
    """The Agents SDK's default model (the Responses API) writes ``response``
    spans holding only the response id: every request is incomplete, named so,
    and the logged 400 (the Responses API's own words) is never exit 0."""
    log = DATA / "agents_tracing" / "responses_cut.spans.jsonl"
    status, out, _ = imported(log)
    assert status != 0, out
    assert "a response span without its input" in out
    assert re.search(r"No tool output found for function call call_\w+\.", out), out


def test_the_agents_sdk_default_model_names_the_gap_and_what_closes_it(
    imported: Imported,
) -> None:
    """With export() alone, the gap says what the SDK's export holds and the
    hint names the processor that writes the input and response it keeps."""
    status, out, _ = imported(DATA / "agents_tracing" / "responses_cut.spans.jsonl")
    assert status == 2, out
    assert "holds only the response id and usage" in out
    assert "span.span_data.input and span.span_data.response.model_dump()" in out


def test_the_agents_sdk_default_model_with_its_inputs_written_replays_the_cut(
    imported: Imported,
) -> None:
    """A processor that writes the input and response the SDK keeps on each
    response span (record_observability.py, responses_cut_inputs): every
    accepted call is a Responses request, the failed one is rebuilt from the
    request before it, and the cut replays to the Responses API's 400."""
    log = DATA / "agents_tracing" / "responses_cut_inputs.spans.jsonl"
    status, out, out_dir = imported(log)
    assert status == 1, out
    assert "provider openai-responses" in out
    (bad,) = [line for line in out.splitlines() if "bad prune" in line]
    assert "between request 2 (" in bad and "and request 3 (" in bad, bad
    assert "rebuilt from request 2" in out
    text = re.search(r"No tool output found for function call call_\w+\.", log.read_text())
    assert text is not None and f"rejected with HTTP 400: {text.group(0)}" in out
    assert "the replayed request is rejected as the logged one was: No tool output found" in out
    trace = read_trace(out_dir / "trace.json")
    system = load_system(trace.policy)
    target = frozenset({IncidentKind.PROVIDER_REJECTION})
    shrunk = minimize(trace.events, trace.config, system, Shape(), target)
    assert len(shrunk) <= 15
    assert any(i.kind in target for i in incidents_of(trace.with_events(shrunk), system))


def _verdict(log: Path) -> tuple[int, int, int, int]:
    """What an import says of a log, ids aside: status, requests, !! and ?? lines."""
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        status = main(["import", str(log)])
    out = stdout.getvalue() + stderr.getvalue()
    requests = sum(int(n) for n in re.findall(r"of (\d+) request\(s\)", out))
    return status, requests, out.count("  !! "), out.count("  ?? ")


@pytest.mark.slow
def test_rerecorded_logs_import_the_same_way(tmp_path: Path) -> None:
    """Record every stack again with its real instrumentation (the ``record``
    extra; Phoenix only when ``PHOENIX_URL`` names a running Phoenix) and
    import both sets: the same verdicts, request counts and findings."""
    import importlib.util
    import os

    for module in ("logfire", "langfuse", "mlflow", "agents", "phoenix.otel",
                   "opentelemetry.instrumentation.openai"):  # fmt: skip
        pytest.importorskip(module)
    spec = importlib.util.spec_from_file_location("recorder", DATA / "record_observability.py")
    assert spec is not None and spec.loader is not None
    recorder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(recorder)
    only = tuple(s for s in STACKS if s != "phoenix" or os.environ.get("PHOENIX_URL"))
    written = recorder.record(tmp_path, only)
    assert len(written) >= 3 * len(only)
    for path in written:
        committed = DATA / path.parent.name / path.name
        with timeline_sketched():
            assert _verdict(path) == _verdict(committed), path

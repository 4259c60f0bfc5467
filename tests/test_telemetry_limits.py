"""The OpenTelemetry SDK's limits never invent a prune (issue 33).

``OTEL_ATTRIBUTE_COUNT_LIMIT`` (128 by default) drops a span's oldest
attributes; ``OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT`` cuts every string value.
Logs recorded under them must import to the truth or to less: a clean
conversation shows no bad prune, a cut one shows the bad prune only between
the calls that were really cut (or keeps the incident as an incomplete
rejected request), and every model call is counted — read in full or named
incomplete — or the import says nothing could be read (exit 2).

The slow sweep records for real (tests/data/telemetry/generate.py's agent,
stub and instrumentation, with ``SpanLimits`` on the tracer provider) at
every setting.  Its fast twin sends the committed recordings' spans again
through the real SDK (its ``BoundedAttributes`` apply the limits, in the
recorded order of the attributes) at a few settings.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import importlib.util
import io
import json
import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from prunecheck.model.provider import Provider, validate
from prunecheck.sim.cli.app import main

pytest.importorskip("opentelemetry.sdk.trace")
pytest.importorskip("opentelemetry.exporter.otlp.proto.common.trace_encoder")

DATA = Path(__file__).resolve().parent / "data" / "telemetry"
_CALL = re.compile(r"\b(?:call|toolu)_\w+")


def _generate() -> Any:
    spec = importlib.util.spec_from_file_location("generate_for_limits", DATA / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextlib.contextmanager
def _quiet_sdk() -> Iterator[None]:
    """The SDK warns once per cut value; the sweep cuts hundreds."""
    logger = logging.getLogger("opentelemetry")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _limits(count: int | None, length: int | None) -> Any:
    from opentelemetry.sdk.trace import SpanLimits

    unset = SpanLimits.UNSET
    return SpanLimits(
        max_span_attributes=unset if count is None else count,
        max_attribute_length=unset if length is None else length,
    )


def _imported(path: Path) -> tuple[int, dict[str, Any] | None, str]:
    """(exit status, the --json document or None, the human output)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["import", str(path), "--json"])
    document = json.loads(out.getvalue()) if status != 2 else None
    return status, document, err.getvalue()


def _check(path: Path, truth: set[str], calls: int) -> str:
    """Assert what every limit must keep; return a one-line summary.

    ``truth``: the ids of the calls whose unit was really cut (empty for a
    clean conversation); ``calls``: how many model calls were made.
    """
    status, document, human = _imported(path)
    assert "Traceback" not in human
    if status == 2:  # nothing could be read: one paragraph saying so
        assert human.startswith("prunecheck import: ") and len(human.strip().splitlines()) == 1
        assert "no model request" in human, human
        return f"{path.name}: exit 2"
    bad = [line for line in human.splitlines() if "bad prune" in line]
    named = {c for line in bad for c in _CALL.findall(line)}
    assert named <= truth, (path.name, bad)  # no invented prune
    assert status == (1 if truth else 0), (path.name, human[-3000:])
    assert document is not None
    assert document["exercised"]["requests"] == calls, (path.name, human[-3000:])
    return f"{path.name}: exit {status}, {len(bad)} bad prune(s)"


# ------------------------------------------------------------ the fast twin
def _span_records(path: Path) -> list[dict[str, Any]]:
    """The spans of a committed log, in file order, in one neutral form."""
    from prunecheck.sim.ingest.spans import _any_value  # what the reader does

    text = path.read_text(encoding="utf-8")
    out: list[dict[str, Any]] = []
    decoder, at = json.JSONDecoder(), 0
    while at < len(text.rstrip()):
        while text[at] in " \n":
            at += 1
        record, at = decoder.raw_decode(text, at)
        if "resourceSpans" in record:
            for r in record["resourceSpans"]:
                for scope in r["scopeSpans"]:
                    for s in scope["spans"]:
                        status = s.get("status") or {}
                        out.append({
                            "trace": int(s["traceId"], 16), "span": int(s["spanId"], 16),
                            "parent": int(s["parentSpanId"], 16) if s.get("parentSpanId") else 0,
                            "name": s["name"], "start": int(s["startTimeUnixNano"]),
                            "end": int(s["endTimeUnixNano"]),
                            "attributes": [(a["key"], _any_value(a["value"]))
                                           for a in s.get("attributes", [])],
                            "events": [(e["name"], {a["key"]: _any_value(a["value"])
                                                    for a in e.get("attributes", [])},
                                        int(e["timeUnixNano"])) for e in s.get("events", [])],
                            "error": status.get("message", "error")
                            if status.get("code") in (2, "STATUS_CODE_ERROR") else None,
                        })  # fmt: skip
        else:
            status = record.get("status") or {}
            out.append({
                "trace": int(record["context"]["trace_id"], 16),
                "span": int(record["context"]["span_id"], 16),
                "parent": int(record["parent_id"], 16) if record.get("parent_id") else 0,
                "name": record["name"], "start": _nanos(record["start_time"]),
                "end": _nanos(record["end_time"]),
                "attributes": list(record["attributes"].items()),
                "events": [(e["name"], e.get("attributes") or {}, _nanos(e["timestamp"]))
                           for e in record.get("events", [])],
                "error": status.get("description", "error")
                if status.get("status_code") == "ERROR" else None,
            })  # fmt: skip
    return out


def _nanos(iso: str) -> int:
    moment = dt.datetime.fromisoformat(iso.replace("Z", "+00:00"))
    return int(moment.timestamp()) * 10**9 + moment.microsecond * 1000


def _reemit(records: list[dict[str, Any]], limits: Any) -> Any:
    """The spans sent again through the real SDK under ``limits``."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import NonRecordingSpan, SpanContext, Status, StatusCode, TraceFlags

    class Ids:
        current = (0, 0)

        def generate_trace_id(self) -> int:
            return self.current[0]

        def generate_span_id(self) -> int:
            return self.current[1]

        def is_trace_id_random(self) -> bool:
            return False

    ids = Ids()
    memory = InMemorySpanExporter()
    provider = TracerProvider(id_generator=ids, span_limits=limits)  # type: ignore[arg-type]
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("re-emitted")
    for r in records:
        ids.current = (r["trace"], r["span"])
        parent = SpanContext(r["trace"], r["parent"], False, TraceFlags(1))
        context = trace.set_span_in_context(NonRecordingSpan(parent)) if r["parent"] else None
        span = tracer.start_span(r["name"], context=context, start_time=r["start"])
        for key, value in r["attributes"]:
            span.set_attribute(key, value)
        for name, attributes, at in r["events"]:
            span.add_event(name, attributes, at)
        if r["error"] is not None:
            span.set_status(Status(StatusCode.ERROR, r["error"]))
        span.end(end_time=r["end"])
    return memory.get_finished_spans()


def _truth(path: Path) -> tuple[set[str], int]:
    """The cut calls and the model calls of a committed log, read unlimited."""
    _, document, human = _imported(path)
    assert document is not None, human
    bad = {c for line in human.splitlines() if "bad prune" in line for c in _CALL.findall(line)}
    return bad, document["exercised"]["requests"]


FAST_LOGS = ("otel_genai_cut.otlp.jsonl", "otel_genai_clean.otlp.jsonl",
             "openinference_openai_cut.sdk.json")  # fmt: skip
FAST_LIMITS = ((20, None), (40, 400), (None, 100))


@pytest.mark.parametrize("name", FAST_LOGS)
def test_limits_sent_through_the_sdk_again_invent_no_prune(name: str, tmp_path: Path) -> None:
    generate = _generate()
    truth, calls = _truth(DATA / name)
    assert bool(truth) == ("cut" in name)  # the unlimited log shows its cut
    records = _span_records(DATA / name)
    seen = set()
    with _quiet_sdk():
        for count, length in FAST_LIMITS:
            spans = _reemit(records, _limits(count, length))
            for layout, text in (
                ("otlp.jsonl", generate._otlp_json(spans)),
                ("sdk.json", "".join(s.to_json() + "\n" for s in spans)),
            ):
                path = tmp_path / f"{count}_{length}.{layout}"
                path.write_text(text, encoding="utf-8")
                seen.add(_check(path, truth, calls).partition(": ")[2])
    assert any(s.startswith("exit 0") or s.startswith("exit 1") for s in seen)


def test_a_dropped_attribute_count_is_named_on_a_request_read_in_full(tmp_path: Path) -> None:
    """OpenInference sets session.id before the messages: the count limit
    takes it first, with whole messages left; the request is read, and the
    lost conversation id is said."""
    records = _span_records(DATA / "openinference_openai_cut.sdk.json")
    first = min(records, key=lambda r: r["start"])
    keep = len(first["attributes"]) - 2  # drops llm.system and input.value
    with _quiet_sdk():
        spans = _reemit([first], _limits(keep, None))
    path = tmp_path / "first.otlp.jsonl"
    path.write_text(_generate()._otlp_json(spans), encoding="utf-8")
    status, document, human = _imported(path)
    assert status == 0, human
    assert "the SDK dropped 2 of its span's attributes" in human
    assert document is not None and document["exercised"] == {
        "conversations": 1, "requests": 1, "incomplete": 0, "events": 3,
    }  # fmt: skip


def test_values_cut_at_one_length_name_the_limit_and_keep_the_incident() -> None:
    """The committed example recorded with OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT=1000:
    two requests cut mid-JSON at 1,000 characters, one of them rejected."""
    example = DATA.parents[2] / "examples" / "incident" / "spans_length_limit.otlp.jsonl"
    status, document, human = _imported(example)
    assert status == 1, human
    assert human.count("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT=1000") == 2
    assert "bad prune" not in human and "the incident stands" in human
    assert document is not None
    assert document["exercised"]["requests"] == 3 and document["exercised"]["incomplete"] == 2
    (entry,) = document["details"]["conversations"]
    assert [i["rejection"] is not None for i in entry["incomplete"]] == [False, True]


def test_a_conversation_none_of_whose_requests_can_be_read_is_vacuous(tmp_path: Path) -> None:
    """The first model call kept 12 of its attributes (its messages and its
    session.id gone): under its trace, nothing read in full.  Asked for on
    its own it is named, counted and vacuous (exit 0), not refused."""
    generate = _generate()
    records = sorted(_span_records(DATA / "openinference_openai_cut.sdk.json"),
                     key=lambda r: r["start"])  # fmt: skip
    with _quiet_sdk():
        cut = generate._otlp_json(_reemit(records[:1], _limits(12, None)))
        whole = generate._otlp_json(_reemit(records[1:], _limits(None, None)))
    path = tmp_path / "log.otlp.jsonl"
    path.write_text(cut + whole, encoding="utf-8")
    name = f"trace {records[0]['trace']:032x}"
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["import", str(path), "--conversation", name, "--json"])
    document = json.loads(out.getvalue())
    assert status == 0 and document["verdict"] == "vacuous", err.getvalue()
    assert document["exercised"] == {"conversations": 1, "requests": 1, "incomplete": 1,
                                     "events": 0}  # fmt: skip
    assert "its llm.input_messages are all gone" in err.getvalue()


# ------------------------------------------- the stacks recorded for real
#: record_stacks.py's and record_observability.py's logs (the OpenTelemetry
#: layouts); the four that lost a request silently, guessed the provider or
#: exited 0 on the logged 400 under a count limit of 5 or 10.
STACK_LOGS = sorted(
    str(p.relative_to(DATA)) for layout in ("*/*.otlp.jsonl", "*/*.sdk.json")
    for p in DATA.glob(layout)
)  # fmt: skip
ONCE_WRONG = ("openai_agents_openinference/cut.otlp.jsonl", "openllmetry_anthropic/cut.otlp.jsonl",
              "pydantic_ai_otel/1.x_v1_cut.otlp.jsonl",
              "pydantic_ai_otel/2.9_v5_cut.otlp.jsonl")  # fmt: skip
STACK_LIMITS = (
    (5, None),
    (10, None),
    (20, None),
    (40, 400),
    (128, None),
    (None, 100),
    (None, 1000),
)


def _sweep_log(
    name: str, limits: tuple[tuple[int | None, int | None], ...], tmp: Path
) -> list[str]:
    """The recorded log ``name`` sent through the SDK again at each limit,
    each import checked (:func:`_check`)."""
    generate = _generate()
    truth, calls = _truth(DATA / name)
    records = _span_records(DATA / name)
    out = []
    with _quiet_sdk():
        for count, length in limits:
            path = tmp / f"{count}_{length}.otlp.jsonl"
            path.write_text(generate._otlp_json(_reemit(records, _limits(count, length))),
                            encoding="utf-8")  # fmt: skip
            out.append(_check(path, truth, calls))
    return out


@pytest.mark.parametrize("name", ONCE_WRONG)
def test_count_limits_on_recorded_stacks_keep_every_call_and_the_incident(
    name: str, tmp_path: Path
) -> None:
    """The Agents SDK under OpenInference (its tool spans' outputs and the
    first request's messages gone: the failed call cannot be rebuilt, the
    logged 400 still stands), OpenLLMetry for Anthropic (a span left with its
    usage only is an incomplete request; one that lost gen_ai.system is
    Anthropic's by its name), pydantic-ai's format 1 (a chat span that lost
    gen_ai.operation.name is still read from its events) and pydantic-ai
    2.9's format 5 (the failed ``chat gpt-4.1`` span, which holds no messages,
    lost gen_ai.operation.name at a count limit of 10: it was left out, the
    logged 400 with it, and the import exited 0; it is a model call by its
    name, rebuilt from its agent run span)."""
    seen = _sweep_log(name, ((5, None), (10, None)), tmp_path)
    assert any(": exit 1" in s for s in seen), seen  # read, with the incident it holds


@pytest.mark.slow
@pytest.mark.parametrize("name", STACK_LOGS)
def test_limits_on_every_recorded_stack_invent_no_prune(name: str, tmp_path: Path) -> None:
    """Every log of the stacks recorded for real, at count and length limits:
    the truth or less, every model call counted, never exit 0 on a 400."""
    assert len(_sweep_log(name, STACK_LIMITS, tmp_path)) == len(STACK_LIMITS)


# ------------------------------------------------------------ the real sweep
COUNTS = (None, 1, 3, 5, 8, 10, 20, 30, 40, 128)
LENGTHS = (None, 100, 400, 1000)


@pytest.mark.slow
def test_the_limit_sweep_recorded_for_real_invents_no_prune(tmp_path: Path) -> None:
    """Every count and length limit of the sweep, recorded by the real
    instrumentation (GenAI conventions and OpenInference, OTLP JSON and the
    SDK's JSON), clean and cut: the truth or less, never a prune that did
    not happen, every model call counted."""
    generate = _generate()
    generate.MAX_REQUESTS = 10**6
    memory: dict[str, Any] = {}
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    def provider(seed: int, limits: Any) -> tuple[Any, Any]:
        exporter = InMemorySpanExporter()
        made = TracerProvider(id_generator=generate._Ids(seed), span_limits=limits)
        made.add_span_processor(SimpleSpanProcessor(exporter))
        memory["spans"] = exporter
        return made, exporter

    summary = []
    with _quiet_sdk(), generate.Stub().running() as stub:
        for count in COUNTS:
            for length in LENGTHS:
                limits = _limits(count, length)
                generate._provider = lambda seed, limits=limits: provider(seed, limits)
                for trim, tag in ((generate.keep_last, "cut"), (generate.keep_last_units, "clean")):
                    stub.log.clear()
                    otlp, sdk = generate.record_genai(stub, trim, f"conv-{tag}", 1)
                    logs = {"genai.otlp.jsonl": otlp, "genai.sdk.json": sdk}
                    truths = dict.fromkeys(logs, (_stub_truth(stub.log), len(stub.log)))
                    stub.log.clear()
                    sdk = generate.record_openinference_openai(stub, trim, f"conv-{tag}", 4)
                    spans = memory["spans"].get_finished_spans()
                    logs |= {"oi.otlp.jsonl": generate._otlp_json(spans), "oi.sdk.json": sdk}
                    truths |= dict.fromkeys(("oi.otlp.jsonl", "oi.sdk.json"),
                                            (_stub_truth(stub.log), len(stub.log)))  # fmt: skip
                    for name, text in logs.items():
                        path = tmp_path / f"{tag}_{count}_{length}_{name}"
                        path.write_text(text, encoding="utf-8")
                        summary.append(_check(path, *truths[name]))
    assert len(summary) == len(COUNTS) * len(LENGTHS) * 2 * 4
    assert any("exit 1, 1 bad prune" in s for s in summary)  # the cut is still found


def _stub_truth(log: list[dict[str, Any]]) -> set[str]:
    """The calls whose results the rejected request holds without them."""
    out: set[str] = set()
    for entry in log:
        if entry["status"] == 400:
            for error in validate(entry["request"], Provider.OPENAI):
                out.update(error.ids)
    return out

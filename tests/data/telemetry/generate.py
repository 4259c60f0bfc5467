"""Generate the telemetry logs of tests/data/telemetry/ with the real libraries.

A small agent loop runs against a loopback HTTP stub of the providers
(127.0.0.1 only, a bounded number of requests, stopped at the end; the
whole script stops itself after two minutes).  The stub plays the model —
a scripted one: a user message gets a parallel batch of three
``read_file`` calls, tool results get a short answer — and checks every
request with prunecheck's provider rules: a request whose tool pairing is
broken gets the provider's exact HTTP 400 text (Chat Completions and
Anthropic from ``prunecheck.model.provider``; the Responses API's as seen
in public reports).  The agent trims its history before each model call
with the trimmers of ``examples/incident/trim.py``: ``keep_last`` cuts the
parallel batch (it keeps the results and drops the assistant message that
issued them), ``keep_last_units`` does not.

What records the calls is the real instrumentation:

* ``opentelemetry-instrumentation-openai-v2`` (GenAI semantic conventions,
  ``gen_ai.input.messages``; content captured in spans) with the
  OpenTelemetry SDK: OTLP JSON as the Collector's file exporter writes it
  (the SDK's OTLP protobuf encoder, then protobuf's JSON mapping, ids in
  hex as the OTLP/JSON spec says) and the SDK's console exporter's JSON;
* ``openinference-instrumentation-anthropic`` and ``-openai``
  (``llm.input_messages.N.message.*``, ``session.id``);
* ``langsmith``'s ``wrap_openai`` with a ``langsmith.Client`` whose API is
  the loopback stub: the runs as the client serialized them (POST, then
  PATCH), merged by run id as a LangSmith export holds them;
* the stub's own access log: the raw request bodies with their responses.

Run ``python tests/data/telemetry/generate.py [OUT]`` (default: this
folder).  Times and span ids differ run to run; what the logs import to
does not (``tests/test_telemetry_generated.py`` checks it).
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from prunecheck.model.provider import Provider, validate
from prunecheck.sim.ingest.bodies import RESPONSES_TEXT, read_body
from prunecheck.sim.ingest.records import provider_body

HERE = Path(__file__).resolve().parent
_T0 = dt.datetime(2026, 11, 30, 14, 2, 10)  # the stub's clock: 2 s a request
ROOT = HERE.parents[2]


def _trimmers() -> Any:
    """examples/incident/trim.py, the trimmers the example documents."""
    spec = importlib.util.spec_from_file_location(
        "incident_trim", ROOT / "examples/incident/trim.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TRIM = _trimmers()
keep_last, keep_last_units = TRIM.keep_last, TRIM.keep_last_units

__all__ = ["generate"]

Message = dict[str, Any]
MAX_REQUESTS = 200  # the stub answers at most this many requests, then refuses
SYSTEM = "You are a coding agent. Read files with read_file; answer in one sentence."
FILES = {
    "app.py": "from flask import Flask\napp = Flask(__name__)\n\n@app.get('/')\ndef index():\n"
    "    return 'ok'\n",
    "db.py": "import sqlite3\n\ndef connect(path='app.db'):\n    return sqlite3.connect(path)\n",
    "auth.py": "import hmac\n\ndef check(token, secret):\n    return hmac.compare_digest(token, "
    "secret)\n" * 3,
    "test_app.py": "def test_index(client):\n    assert client.get('/').text == 'ok'\n" * 4,
    "test_db.py": "def test_connect(tmp_path):\n    assert connect(tmp_path / 'x.db')\n" * 4,
    "test_auth.py": "def test_check():\n    assert check('a', 'a')\n" * 12,
}
TURNS = (
    ("What do app.py, db.py and auth.py do?", ("app.py", "db.py", "auth.py")),
    (
        "Now read their tests: which cases are missing?",
        ("test_app.py", "test_db.py", "test_auth.py"),
    ),
)


# ------------------------------------------------------------------ the stub
class Stub:
    """The providers' endpoints on 127.0.0.1, playing a scripted model."""

    def __init__(self) -> None:
        self.log: list[dict[str, Any]] = []  # the raw access log
        self.runs: dict[str, dict[str, Any]] = {}  # LangSmith runs by id
        self.calls = 0
        self.served = 0
        self.clock = 0
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                stub.reply(self, 200, {})  # the LangSmith client's /info

            def do_POST(self) -> None:
                stub.handle(self, "POST")

            def do_PATCH(self) -> None:
                stub.handle(self, "PATCH")

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.timeout = 5
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}"

    def reply(self, handler: BaseHTTPRequestHandler, status: int, body: object) -> None:
        data = json.dumps(body).encode()
        handler.send_response(status)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def handle(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        self.served += 1
        if self.served > MAX_REQUESTS:
            self.reply(handler, 503, {"error": {"message": "stub: request budget spent"}})
            return
        raw = handler.rfile.read(int(handler.headers.get("content-length") or 0))
        path = handler.path.split("?")[0]
        if "/runs" in path:
            self.langsmith(path, method, raw)
            self.reply(handler, 200, {})
            return
        body = json.loads(raw)
        status, answer = self.model(path, body)
        self.clock += 1
        entry = {
            "time": (_T0 + dt.timedelta(seconds=2 * self.clock)).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "conversation_id": body.get("metadata", {}).get("conversation_id", "conv"),
            "url": path,
            "request": body,
            "status": status,
            "response": answer,
        }
        self.log.append(entry)
        self.reply(handler, status, answer)

    def langsmith(self, path: str, method: str, raw: bytes) -> None:
        data = json.loads(raw) if raw else {}
        batch = data.get("post", []) + data.get("patch", []) if "batch" in path else [data]
        for run in batch:
            rid = str(run.get("id") or path.rstrip("/").rsplit("/", 1)[-1])
            self.runs.setdefault(rid, {}).update({k: v for k, v in run.items() if v is not None})

    def model(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if path.endswith("/responses"):
            return self.responses(body)
        provider = Provider.ANTHROPIC if path.endswith("/messages") else Provider.OPENAI
        errors = validate(body, provider)
        if errors:
            if provider is Provider.ANTHROPIC:
                return 400, {"type": "error", "error": {"type": "invalid_request_error",
                                                        "message": errors[0].text}}  # fmt: skip
            return 400, {"error": {"message": errors[0].text, "type": "invalid_request_error",
                                   "param": "messages", "code": None}}  # fmt: skip
        last = body["messages"][-1]
        answered = last["role"] == "tool" or (
            isinstance(last.get("content"), list)
            and any(b.get("type") == "tool_result" for b in last["content"])
        )
        files = () if answered else self.files_for(body)
        calls = [(self.call_id(provider), name) for name in files]
        text = "They define the app, its database and its token check." if answered else ""
        if provider is Provider.ANTHROPIC:
            content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
            content += [{"type": "tool_use", "id": cid, "name": "read_file",
                         "input": {"path": name}} for cid, name in calls]  # fmt: skip
            return 200, {"id": f"msg_{self.clock:04d}", "type": "message", "role": "assistant",
                         "model": body["model"], "content": content,
                         "stop_reason": "tool_use" if calls else "end_turn",
                         "usage": {"input_tokens": 100, "output_tokens": 20}}  # fmt: skip
        message: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            message["tool_calls"] = [
                {"id": cid, "type": "function",
                 "function": {"name": "read_file", "arguments": json.dumps({"path": name})}}
                for cid, name in calls
            ]  # fmt: skip
        return 200, {
            "id": f"chatcmpl-{self.clock:04d}", "object": "chat.completion", "created": 1764511330,
            "model": body["model"],
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
        }  # fmt: skip

    def responses(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        _, _, messages, _ = read_body(body, "request")
        errors = validate(provider_body(messages, Provider.OPENAI), Provider.OPENAI)
        if errors:
            text = RESPONSES_TEXT[errors[0].kind].format(id=errors[0].ids[0] if errors[0].ids
                                                         else _orphan(messages))  # fmt: skip
            return 400, {"error": {"message": text, "type": "invalid_request_error",
                                   "param": "input", "code": None}}  # fmt: skip
        last = body["input"][-1]
        if last.get("type") == "function_call_output":
            output = [
                {
                    "type": "message",
                    "id": f"msg_{self.clock:04d}",
                    "role": "assistant",
                    "status": "completed",
                    "content": [
                        {
                            "type": "output_text",
                            "annotations": [],
                            "text": "They define the app, its database and its check.",
                        }
                    ],
                }
            ]
        else:
            output = [{"type": "function_call", "id": f"fc_{self.calls + 1}",
                       "call_id": self.call_id(Provider.OPENAI), "name": "read_file",
                       "arguments": json.dumps({"path": name}), "status": "completed"}
                      for name in self.files_for(body)]  # fmt: skip
        return 200, {"id": f"resp_{self.clock:04d}", "object": "response", "created_at": 1764511330,
                     "status": "completed", "model": body["model"], "output": output,
                     "parallel_tool_calls": True, "tool_choice": "auto", "tools": []}  # fmt: skip

    def files_for(self, body: dict[str, Any]) -> tuple[str, ...]:
        text = json.dumps(body)
        turn = 1 if TURNS[1][0] in text else 0
        return TURNS[turn][1]

    def call_id(self, provider: Provider) -> str:
        self.calls += 1
        if provider is Provider.ANTHROPIC:
            return f"toolu_01{self.calls:02d}Ab{self.calls * 7:03d}"
        return f"call_{self.calls:02d}x{self.calls * 13:04d}"

    @contextmanager
    def running(self) -> Iterator[Stub]:
        self.thread.start()
        try:
            yield self
        finally:
            self.server.shutdown()
            self.server.server_close()
            self.thread.join(timeout=5)


def _orphan(messages: tuple[Any, ...]) -> str:
    return next((m.answers for m in messages if m.answers), "?")


# -------------------------------------------------------------- the agent
Trim = Callable[[list[Message]], list[Message]]


def _tool(name: str) -> str:
    return FILES[name]


def chat_agent(client: Any, trim: Trim, conversation: str, **extra: Any) -> None:
    """The loop: trim, call the model, run its calls, until each turn is answered."""
    import openai

    history: list[Message] = [{"role": "system", "content": SYSTEM}]
    for user, _ in TURNS:
        history.append({"role": "user", "content": user})
        for _ in range(4):
            try:
                reply = client.chat.completions.create(
                    model="gpt-4.1",
                    messages=trim(history),
                    tools=[
                        {
                            "type": "function",
                            "function": {"name": "read_file", "parameters": {"type": "object"}},
                        }
                    ],
                    metadata={"conversation_id": conversation},
                    **extra,
                )
            except openai.BadRequestError:
                return  # the incident: the agent gives up on the turn
            message = reply.choices[0].message
            calls = message.tool_calls or []
            entry: Message = {"role": "assistant", "content": message.content}
            if calls:
                entry["tool_calls"] = [
                    {"id": c.id, "type": "function",
                     "function": {"name": c.function.name, "arguments": c.function.arguments}}
                    for c in calls
                ]  # fmt: skip
            history.append(entry)
            if not calls:
                break
            for c in calls:
                path = json.loads(c.function.arguments)["path"]
                history.append({"role": "tool", "tool_call_id": c.id, "content": _tool(path)})


def anthropic_agent(client: Any, trim_results: bool, conversation: str, turns: int = 1) -> None:
    """The Anthropic loop; with ``trim_results`` its trimmer drops the largest
    tool_result block when the batch's results are large (the bug); else,
    over ``turns`` turns, it sends the history from the last turn's question
    on (earlier turns dropped whole)."""
    import anthropic

    history: list[Message] = []
    for user, _ in TURNS[:turns]:
        history.append({"role": "user", "content": user})
        start = len(history) - 1
        for _ in range(3):
            sent = _drop_largest_result(history) if trim_results else history[start:]
            try:
                reply = client.messages.create(
                    model="claude-sonnet-4-5", max_tokens=512, system=SYSTEM, messages=sent,
                    metadata={"user_id": conversation},
                )  # fmt: skip
            except anthropic.BadRequestError:
                return
            blocks = [b.model_dump(exclude_none=True) for b in reply.content]
            history.append({"role": "assistant", "content": blocks})
            uses = [b for b in blocks if b["type"] == "tool_use"]
            if not uses:
                break
            results = [
                {
                    "type": "tool_result",
                    "tool_use_id": b["id"],
                    "content": _tool(b["input"]["path"]),
                }
                for b in uses
            ]
            history.append({"role": "user", "content": results})


def _drop_largest_result(history: list[Message], limit: int = 200) -> list[Message]:
    """A trimmer that keeps a batch's results under ``limit`` characters by
    dropping the largest — and with it the pairing of its call."""
    out = []
    for m in history:
        blocks = m["content"] if isinstance(m["content"], list) else None
        results = [b for b in blocks or [] if b.get("type") == "tool_result"]
        if results and sum(len(b["content"]) for b in results) > limit:
            largest = max(results, key=lambda b: len(b["content"]))
            m = {**m, "content": [b for b in blocks or [] if b is not largest]}
        out.append(m)
    return out


def responses_agent(client: Any, window: int | None, conversation: str) -> None:
    """The Responses loop, sending the full history as ``input`` items, cut
    to the last ``window`` items (a window over items cuts batches too); with
    no window, from the last turn's question on (earlier turns dropped whole)."""
    import openai

    items: list[Message] = []
    for user, _ in TURNS:
        items.append({"role": "user", "content": user})
        start = len(items) - 1
        for _ in range(4):
            try:
                reply = client.responses.create(
                    model="gpt-4.1", instructions=SYSTEM,
                    input=items[-window:] if window else items[start:],
                    metadata={"conversation_id": conversation},
                )  # fmt: skip
            except openai.BadRequestError:
                return
            out = [o.model_dump(exclude_none=True) for o in reply.output]
            calls = [o for o in out if o["type"] == "function_call"]
            for o in out:
                o.pop("id", None)
                o.pop("status", None)
            items.extend(out)
            if not calls:
                break
            items.extend(
                {"type": "function_call_output", "call_id": c["call_id"],
                 "output": _tool(json.loads(c["arguments"])["path"])}
                for c in calls
            )  # fmt: skip


# ------------------------------------------------------------- recording
class _Ids:
    """A seeded span id generator, so the logs' ids stay stable run to run."""

    def __init__(self, seed: int) -> None:
        import random

        self.random = random.Random(seed)

    def generate_span_id(self) -> int:
        return self.random.getrandbits(64)

    def generate_trace_id(self) -> int:
        return self.random.getrandbits(128)

    def is_trace_id_random(self) -> bool:
        return False


def _otlp_json(spans: Any) -> str:
    """OTLP JSON, one export request a line, as the Collector's file exporter."""
    from google.protobuf.json_format import MessageToDict  # type: ignore[import-untyped]
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    data = MessageToDict(encode_spans(spans))
    for r in data.get("resourceSpans", []):
        for scope in r.get("scopeSpans", []):
            for s in scope.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in s:  # the OTLP/JSON spec writes ids in hex, not base64
                        s[key] = __import__("base64").b64decode(s[key]).hex()
    return json.dumps(data, sort_keys=True) + "\n"


def _provider(seed: int) -> tuple[Any, Any]:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    memory = InMemorySpanExporter()
    provider = TracerProvider(id_generator=_Ids(seed))  # type: ignore[arg-type]
    provider.add_span_processor(SimpleSpanProcessor(memory))
    return provider, memory


def record_genai(stub: Stub, trim: Trim, conversation: str, seed: int) -> tuple[str, str]:
    """The chat agent under opentelemetry-instrumentation-openai-v2: (OTLP JSON, SDK JSON)."""
    import openai
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "span_only"
    provider, memory = _provider(seed)
    instrumentor = OpenAIInstrumentor()  # type: ignore[no-untyped-call]
    instrumentor.instrument(tracer_provider=provider)
    try:
        client = openai.OpenAI(base_url=f"{stub.url}/v1", api_key="test", max_retries=0)
        tracer = provider.get_tracer("coding-agent")
        with tracer.start_as_current_span(
            "invoke_agent coding-agent",
            attributes={"gen_ai.operation.name": "invoke_agent",
                        "gen_ai.conversation.id": conversation},
        ):  # fmt: skip
            chat_agent(client, trim, conversation)
    finally:
        instrumentor.uninstrument()
    spans = memory.get_finished_spans()
    sdk = "".join(s.to_json() + "\n" for s in spans)  # what ConsoleSpanExporter prints
    return _otlp_json(spans), sdk


def record_openinference(stub: Stub, conversation: str, seed: int) -> str:
    """The Anthropic agent under openinference-instrumentation-anthropic: OTLP JSON."""
    import anthropic
    from openinference.instrumentation import using_session
    from openinference.instrumentation.anthropic import AnthropicInstrumentor

    provider, memory = _provider(seed)
    instrumentor = AnthropicInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        client = anthropic.Anthropic(base_url=stub.url, api_key="test", max_retries=0)
        with using_session(conversation):
            anthropic_agent(client, True, conversation)
    finally:
        instrumentor.uninstrument()
    return _otlp_json(memory.get_finished_spans())


def record_openinference_openai(stub: Stub, trim: Trim, conversation: str, seed: int) -> str:
    """The chat agent under openinference-instrumentation-openai: the SDK's span JSON."""
    import openai
    from openinference.instrumentation import using_session
    from openinference.instrumentation.openai import OpenAIInstrumentor

    provider, memory = _provider(seed)
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        client = openai.OpenAI(base_url=f"{stub.url}/v1", api_key="test", max_retries=0)
        with using_session(conversation):
            chat_agent(client, trim, conversation)
    finally:
        instrumentor.uninstrument()
    return "".join(s.to_json() + "\n" for s in memory.get_finished_spans())


def record_langsmith(stub: Stub, trim: Trim, conversation: str) -> str:
    """The chat agent wrapped by langsmith's wrap_openai, its runs posted to the stub."""
    import langsmith
    import openai
    from langsmith.wrappers import wrap_openai

    ls = langsmith.Client(api_url=f"{stub.url}/langsmith", api_key="test",
                          auto_batch_tracing=False)  # fmt: skip
    client = wrap_openai(openai.OpenAI(base_url=f"{stub.url}/v1", api_key="test", max_retries=0))
    with langsmith.tracing_context(
        enabled=True, client=ls, project_name="coding-agent",
        metadata={"thread_id": conversation},
    ):  # fmt: skip
        chat_agent(client, trim, conversation)
    ls.flush()
    runs = sorted(stub.runs.values(), key=lambda r: (str(r.get("start_time")), str(r.get("id"))))
    return "".join(json.dumps(r, sort_keys=True, default=str) + "\n" for r in runs)


def _lines(entries: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(e, sort_keys=True) + "\n" for e in entries)


def generate(out: Path) -> list[Path]:
    """Write every log into ``out``; return the files written."""
    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, str] = {}
    with Stub().running() as stub:
        otlp, sdk = record_genai(stub, keep_last, "conv-cut-batch", 1)
        written["otel_genai_cut.otlp.jsonl"] = otlp
        written["otel_genai_cut.sdk.json"] = sdk
        written["raw_chat_cut.jsonl"] = _lines(stub.log)
        stub.log.clear()
        otlp, _ = record_genai(stub, keep_last_units, "conv-clean", 2)
        written["otel_genai_clean.otlp.jsonl"] = otlp
        written["raw_chat_clean.jsonl"] = _lines(stub.log)
        stub.log.clear()
        written["openinference_anthropic_dropped_result.otlp.jsonl"] = record_openinference(
            stub, "conv-anthropic", 3
        )
        written["raw_anthropic_dropped_result.jsonl"] = _lines(stub.log)
        stub.log.clear()
        written["openinference_openai_cut.sdk.json"] = record_openinference_openai(
            stub, keep_last, "conv-openinference", 4
        )
        stub.log.clear()
        import openai

        client = openai.OpenAI(base_url=f"{stub.url}/v1", api_key="test", max_retries=0)
        responses_agent(client, 5, "conv-responses")
        written["raw_responses_cut.jsonl"] = _lines(stub.log)
        stub.log.clear()
        written["langsmith_cut.jsonl"] = record_langsmith(stub, keep_last, "conv-langsmith")
        stub.log.clear()
        # clean raw bodies of the two other APIs: each turn sent without the turns before it
        responses_agent(client, None, "conv-responses-clean")
        written["raw_responses_clean.jsonl"] = _lines(stub.log)
        stub.log.clear()
        import anthropic

        claude = anthropic.Anthropic(base_url=stub.url, api_key="test", max_retries=0)
        anthropic_agent(claude, False, "conv-anthropic-clean", turns=2)
        written["raw_anthropic_clean.jsonl"] = _lines(stub.log)
        stub.log.clear()
    paths = []
    for name, text in written.items():
        path = out / name
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def main() -> None:
    signal.alarm(120)  # stops by itself, whatever happens
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE
    for path in generate(out):
        print(path)


if __name__ == "__main__":
    main()

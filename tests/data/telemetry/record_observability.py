"""Record the logs of tests/data/telemetry/{openllmetry,logfire,langfuse,phoenix,mlflow,
agents_tracing}/ with each observability stack's real instrumentation.

The fake model is the loopback stub of ``generate.py`` (127.0.0.1 only, a
bounded number of requests): a user message gets a parallel batch of three
``read_file`` calls, tool results get a short answer, and a request whose
tool pairing is broken gets the provider's real HTTP 400 body (the texts of
``prunecheck.model.provider``).  The agent is the Chat Completions loop of
``generate.py`` on the real ``openai`` client (the Agents SDK stack runs a
real ``agents.Agent`` instead), trimming its history before each model call
with one of three trimmers:

* ``clean``: ``keep_last_units`` (examples/incident/trim.py): whole units only;
* ``cut``: ``drop_largest_result``: over seven messages, it frees room by
  dropping the largest tool result — the call stays, its result is gone, and
  the provider answers 400 (``...did not have response messages``);
* ``rejected``: ``keep_last``: the window starts inside the parallel batch,
  keeps the results and drops the assistant message that issued the calls
  (``...must be a response to a preceeding message with 'tool_calls'``).

Logfire, MLflow and Phoenix (OpenInference's Anthropic instrumentation), whose
instrumentation covers the ``anthropic`` client too,
also record the same turns on Anthropic's Messages API: ``anthropic_clean``
(``drop_oldest_unit``) and ``anthropic_cut`` (``drop_largest_block``: Anthropic's
``tool_use ids were found without tool_result blocks`` 400) and
``anthropic_rejected`` (``keep_last_three``: ``unexpected tool_use_id found in
tool_result blocks``).

Each stack writes what a user of it gets on disk, without its cloud service:

* ``openllmetry``: ``opentelemetry-instrumentation-openai`` (Traceloop's
  OpenLLMetry) on the OpenTelemetry SDK, OTLP JSON as the Collector's file
  exporter writes it;
* ``logfire``: ``logfire.configure(send_to_logfire=False)`` with
  ``logfire.instrument_openai``, its spans through an extra span processor,
  OTLP JSON;
* ``langfuse``: the Langfuse SDK (v3+, OpenTelemetry-based) with its
  ``langfuse.openai`` drop-in client, the spans it would send to the
  Langfuse server (``span_exporter``), OTLP JSON;
* ``phoenix``: ``phoenix.otel.register`` with OpenInference's OpenAI (and
  Anthropic) instrumentation sending to a local Phoenix server, the spans exported back
  with the Phoenix client (``Client().spans.get_spans``, Phoenix's REST API
  ``/v1/projects/{project}/spans``), written as the JSON list it returns.
  Start the server by hand first: ``arize-phoenix`` pins ``anthropic<2``, so
  in a venv of its own (``python -m venv .venv-phoenix && .venv-phoenix/bin/pip
  install arize-phoenix==20.26.1``; ``PHOENIX_PORT=6106 .venv-phoenix/bin/phoenix
  serve``, SQLite in ``PHOENIX_WORKING_DIR``) and give ``PHOENIX_URL``.  The
  committed phoenix/ logs were recorded from inside that venv (it holds
  arize-phoenix-otel, arize-phoenix-client, openinference-instrumentation-openai
  and openai at the ``record`` extra's pins; add
  ``openinference-instrumentation-anthropic==3.1.0`` and ``pip install --no-deps
  -e .``; its anthropic is 1.17.0): ``.venv-phoenix/bin/python
  tests/data/telemetry/record_observability.py phoenix``;
* ``mlflow``: ``mlflow.openai.autolog()`` with a local tracking store, the
  traces read back with ``mlflow.search_traces`` and written as
  ``Trace.to_json()``, one trace a line;
* ``agents_tracing``: an ``agents.Agent`` whose ``RunConfig`` trims the
  model input (``call_model_input_filter``), its own tracing through a
  processor (``set_trace_processors``) writing each span's ``export()``
  as a JSON line; on ``OpenAIChatCompletionsModel`` (``generation`` spans
  hold the messages), and ``responses_cut`` on the SDK's default
  ``OpenAIResponsesModel`` (``response`` spans hold only the response id);
  ``responses_cut_inputs`` and ``responses_clean_inputs`` the same with the
  processor docs/on-call.md shows, which writes the input and response the
  SDK keeps on the span.

Run ``python tests/data/telemetry/record_observability.py [OUT]`` with the
``record`` extra installed (default: this folder).
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _generate() -> Any:
    """generate.py (the stub, the agent loop and the trimmers), loaded from its
    file: this folder is kept off ``sys.path`` (``main`` takes it off, where
    Python puts a script's folder), where its stack folders (logfire/,
    phoenix/, mlflow/, langfuse/) would shadow, as namespace packages, a stack
    that the venv does not have (logfire_api imports ``logfire`` if it can:
    pydantic-ai, which Phoenix imports, failed in Phoenix's own venv)."""
    spec = importlib.util.spec_from_file_location("telemetry_generate", HERE / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


generate = _generate()

__all__ = ["record"]

Message = dict[str, Any]
Trim = Callable[[list[Message]], list[Message]]


def drop_largest_result(messages: list[Message], most: int = 7) -> list[Message]:
    """Over ``most`` messages, drop the largest tool result (the bug: its call stays)."""
    if len(messages) <= most:
        return messages
    tools = [m for m in messages if m.get("role") == "tool"]
    if not tools:
        return messages
    largest = max(tools, key=lambda m: len(str(m.get("content"))))
    return [m for m in messages if m is not largest]


TRIMS: dict[str, Trim] = {
    "clean": generate.keep_last_units,
    "cut": drop_largest_result,
    "rejected": generate.keep_last,
}


TOOLS = [{"type": "function", "function": {
    "name": "read_file", "description": "Read a file of the repository.",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}},
                   "required": ["path"]}}}]  # fmt: skip


def chat_agent(client: Any, trim: Trim, conversation: str) -> None:
    """The loop: trim, call the model, run its calls, until each turn is answered."""
    import openai

    history: list[Message] = [{"role": "system", "content": generate.SYSTEM}]
    for user, _ in generate.TURNS:
        history.append({"role": "user", "content": user})
        for _ in range(4):
            try:
                reply = client.chat.completions.create(
                    model="gpt-4.1", messages=trim(history), tools=TOOLS,
                    metadata={"conversation_id": conversation},
                )  # fmt: skip
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
                history.append(
                    {"role": "tool", "tool_call_id": c.id, "content": generate.FILES[path]}
                )


def anthropic_agent(client: Any, trim: Trim, conversation: str) -> None:
    """The same two turns on Anthropic's Messages API (tool results in one user message)."""
    import anthropic

    tools = [{"name": "read_file", "description": "Read a file of the repository.",
              "input_schema": TOOLS[0]["function"]["parameters"]}]  # fmt: skip
    history: list[Message] = []
    for user, _ in generate.TURNS:
        history.append({"role": "user", "content": user})
        for _ in range(4):
            try:
                reply = client.messages.create(
                    model="claude-sonnet-4-5", max_tokens=512, system=generate.SYSTEM,
                    messages=trim(history), tools=tools, metadata={"user_id": conversation},
                )  # fmt: skip
            except anthropic.BadRequestError:
                return
            blocks = [b.model_dump(exclude_none=True) for b in reply.content]
            history.append({"role": "assistant", "content": blocks})
            uses = [b for b in blocks if b["type"] == "tool_use"]
            if not uses:
                break
            history.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": b["id"],
                 "content": generate.FILES[b["input"]["path"]]} for b in uses]})  # fmt: skip


def drop_largest_block(messages: list[Message], most: int = 4) -> list[Message]:
    """Over ``most`` messages, drop the largest tool_result block (its tool_use stays)."""
    blocks = [b for m in messages if isinstance(m["content"], list) for b in m["content"]
              if b.get("type") == "tool_result"]  # fmt: skip
    if len(messages) <= most or not blocks:
        return messages
    largest = max(blocks, key=lambda b: len(str(b.get("content"))))
    return [{**m, "content": [b for b in m["content"] if b is not largest]}
            if isinstance(m["content"], list) else m for m in messages]  # fmt: skip


def drop_oldest_unit(messages: list[Message], most: int = 4) -> list[Message]:
    """Over ``most`` messages, drop the oldest tool round whole: the assistant
    message holding the tool_use blocks and the user message of their results."""
    if len(messages) <= most:
        return messages
    for i, m in enumerate(messages[:-1]):
        blocks = m["content"] if isinstance(m["content"], list) else []
        if m["role"] == "assistant" and any(b.get("type") == "tool_use" for b in blocks):
            return messages[:i] + messages[i + 2 :]
    return messages


def keep_last_three(messages: list[Message], most: int = 4) -> list[Message]:
    """Over ``most`` messages, the last three: a window that can start on the
    user message of tool results, whose tool_use blocks it dropped."""
    return messages if len(messages) <= most else messages[-3:]


#: Anthropic conversations, recorded by the stacks whose instrumentation covers
#: the anthropic client (Logfire, MLflow, Phoenix): a second provider's 400 texts.
ANTHROPIC_TRIMS: dict[str, Trim] = {
    "anthropic_clean": drop_oldest_unit,
    "anthropic_cut": drop_largest_block,
    "anthropic_rejected": keep_last_three,
}


def _agent(conversation: str) -> Callable[[Any, Trim, str], None]:
    return anthropic_agent if "anthropic" in conversation else chat_agent


def _anthropic_client(stub: generate.Stub) -> Any:
    import anthropic

    return anthropic.Anthropic(base_url=stub.url, api_key="test", max_retries=0)


def _client(stub: generate.Stub) -> Any:
    import openai

    return openai.OpenAI(base_url=f"{stub.url}/v1", api_key="test", max_retries=0)


def _memory(seed: int) -> tuple[Any, Any]:
    return generate._provider(seed)


# ------------------------------------------------------------------ stacks
def openllmetry(stub: generate.Stub, trim: Trim, conversation: str, seed: int) -> str:
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    provider, memory = _memory(seed)
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        tracer = provider.get_tracer("coding-agent")
        with tracer.start_as_current_span("coding-agent.workflow"):
            chat_agent(_client(stub), trim, conversation)
    finally:
        instrumentor.uninstrument()
    return generate._otlp_json(memory.get_finished_spans())


def logfire_(stub: generate.Stub, trim: Trim, conversation: str, seed: int) -> str:
    import logfire
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    memory = InMemorySpanExporter()
    instance = logfire.configure(
        send_to_logfire=False, console=False, service_name="coding-agent",
        additional_span_processors=[SimpleSpanProcessor(memory)], metrics=False,
        inspect_arguments=False,
    )  # fmt: skip
    if "anthropic" in conversation:
        client = _anthropic_client(stub)
        instance.instrument_anthropic(client)
    else:
        client = _client(stub)
        instance.instrument_openai(client)
    with logfire.span("coding-agent {conversation}", conversation=conversation):
        _agent(conversation)(client, trim, conversation)
    logfire.force_flush()
    return generate._otlp_json(memory.get_finished_spans())


_LANGFUSE: dict[str, Any] = {}


def langfuse_(stub: generate.Stub, trim: Trim, conversation: str, seed: int) -> str:
    from langfuse import Langfuse, propagate_attributes
    from langfuse.openai import openai as lf_openai
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    if not _LANGFUSE:  # the SDK keeps one client (and its exporter) per process
        _LANGFUSE["memory"] = memory = InMemorySpanExporter()
        _LANGFUSE["client"] = Langfuse(
            public_key="pk-lf-test", secret_key="sk-lf-test", base_url=stub.url,
            span_exporter=memory, id_generator=generate._Ids(seed),  # type: ignore[arg-type]
        )  # fmt: skip
    memory, lf = _LANGFUSE["memory"], _LANGFUSE["client"]
    memory.clear()
    client = lf_openai.OpenAI(base_url=f"{stub.url}/v1", api_key="test", max_retries=0)
    with (
        lf.start_as_current_observation(name="coding-agent", as_type="agent"),
        propagate_attributes(session_id=conversation),
    ):
        chat_agent(client, trim, conversation)
    lf.flush()
    return generate._otlp_json(memory.get_finished_spans())


def phoenix(stub: generate.Stub, trim: Trim, conversation: str, seed: int) -> str:
    """Spans sent to a local Phoenix server (``PHOENIX_URL``, started by hand:
    ``phoenix serve``, its SQLite store), exported back with the Phoenix
    client's ``spans.get_spans``: the JSON list a user saves."""
    import contextlib
    import time

    import httpx
    from openinference.instrumentation import using_session
    from openinference.instrumentation.anthropic import AnthropicInstrumentor
    from openinference.instrumentation.openai import OpenAIInstrumentor
    from phoenix.client import Client
    from phoenix.otel import register

    url = os.environ.get("PHOENIX_URL", "http://127.0.0.1:6006")
    project = f"coding-agent-{conversation}-{int(time.time())}"
    provider = register(
        project_name=project, endpoint=f"{url}/v1/traces", batch=False,
        set_global_tracer_provider=False, verbose=False,
    )  # fmt: skip
    anthropic = "anthropic" in conversation
    instrumentor = AnthropicInstrumentor() if anthropic else OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        with using_session(conversation):
            client = _anthropic_client(stub) if anthropic else _client(stub)
            _agent(conversation)(client, trim, conversation)
    finally:
        instrumentor.uninstrument()
    provider.force_flush()
    client = Client(base_url=url)
    spans: list[Any] = []
    for _ in range(40):  # Phoenix writes what it received in the background
        time.sleep(0.25)
        with contextlib.suppress(httpx.HTTPStatusError):  # no such project yet
            spans = list(client.spans.get_spans(project_identifier=project, limit=1000))
        if len(spans) >= 3:
            break
    spans = sorted(spans, key=lambda s: (s["start_time"], s["context"]["span_id"]))
    return json.dumps(spans, sort_keys=True) + "\n"


def mlflow_(stub: generate.Stub, trim: Trim, conversation: str, seed: int) -> str:
    os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"  # a local store, no server
    os.environ["MLFLOW_ENABLE_ASYNC_TRACE_LOGGING"] = "false"
    import mlflow

    with tempfile.TemporaryDirectory() as store:
        mlflow.set_tracking_uri(f"file:{store}")
        experiment = mlflow.set_experiment("coding-agent").experiment_id
        anthropic = "anthropic" in conversation
        flavor = mlflow.anthropic if anthropic else mlflow.openai
        flavor.autolog()

        @mlflow.trace(name="coding-agent")
        def run() -> None:
            mlflow.update_current_trace(metadata={"mlflow.trace.session": conversation})
            client = _anthropic_client(stub) if anthropic else _client(stub)
            _agent(conversation)(client, trim, conversation)

        run()
        flavor.autolog(disable=True)
        traces = mlflow.search_traces(locations=[experiment], return_type="list")
    return "".join(json.dumps(json.loads(t.to_json()), sort_keys=True) + "\n" for t in traces)


def _item_window(items: list[Any], window: int = 5, whole: bool = False) -> list[Any]:
    """The Agents SDK's input items cut to the last ``window`` (``whole``: never
    starting on a function_call_output or inside a run of function_call items)."""
    start = max(0, len(items) - window)
    while whole and start > 0 and items[start].get("type") in (
        "function_call_output", "function_call"):  # fmt: skip
        start -= 1
    return items[start:]


def _drop_largest_output(items: list[Any], most: int = 7) -> list[Any]:
    outputs = [i for i in items if i.get("type") == "function_call_output"]
    if len(items) <= most or not outputs:
        return items
    largest = max(outputs, key=lambda i: len(str(i.get("output"))))
    return [i for i in items if i is not largest]


ITEM_TRIMS: dict[str, Callable[[list[Any]], list[Any]]] = {
    "clean": lambda items: _item_window(items, whole=True),
    "cut": _drop_largest_output,
    "rejected": _item_window,
}


def agents_tracing(stub: generate.Stub, trim: Trim, conversation: str, seed: int) -> str:
    import asyncio

    import openai
    from agents import (
        Agent,
        OpenAIChatCompletionsModel,
        OpenAIResponsesModel,
        RunConfig,
        Runner,
        function_tool,
        set_trace_processors,
    )
    from agents.run import CallModelData, ModelInputData
    from agents.tracing import TracingProcessor

    case = conversation.rpartition("-")[2]
    inputs = case.endswith("_inputs")  # the processor docs/on-call.md shows
    cut = ITEM_TRIMS[case.removeprefix("responses_").removesuffix("_inputs")]

    def plain(value: Any) -> Any:
        dump = getattr(value, "model_dump", None)
        return dump(mode="json") if callable(dump) else str(value)

    class JsonLines(TracingProcessor):
        """A trace processor writing each trace and span as its export() JSON
        (with ``inputs``: a response span with the input and the response the
        SDK keeps on it, which its export() leaves out)."""

        def __init__(self) -> None:
            self.lines: list[str] = []

        def on_trace_start(self, trace: Any) -> None:
            self.lines.append(json.dumps(trace.export(), sort_keys=True, default=str))

        def on_trace_end(self, trace: Any) -> None:
            pass

        def on_span_start(self, span: Any) -> None:
            pass

        def on_span_end(self, span: Any) -> None:
            record = span.export()
            data = span.span_data
            if inputs and data.type == "response" and data.input is not None:
                record["span_data"]["input"] = data.input
                record["span_data"]["response"] = data.response
            self.lines.append(json.dumps(record, sort_keys=True, default=plain))

        def shutdown(self) -> None:
            pass

        def force_flush(self) -> None:
            pass

    processor = JsonLines()
    set_trace_processors([processor])

    @function_tool
    def read_file(path: str) -> str:
        """Read a file of the repository."""
        return generate.FILES[path]

    def trim_input(data: CallModelData[Any]) -> ModelInputData:
        return ModelInputData(input=cut(list(data.model_data.input)),
                              instructions=data.model_data.instructions)  # fmt: skip

    client = openai.AsyncOpenAI(base_url=f"{stub.url}/v1", api_key="test", max_retries=0)
    agent = Agent(
        name="coding-agent", instructions=generate.SYSTEM, tools=[read_file],
        model=OpenAIResponsesModel(model="gpt-4.1", openai_client=client)
        if case.startswith("responses_")  # the SDK's default model: response spans
        else OpenAIChatCompletionsModel(model="gpt-4.1", openai_client=client),
    )  # fmt: skip
    config = RunConfig(group_id=conversation, call_model_input_filter=trim_input,
                       workflow_name="coding-agent")  # fmt: skip

    async def run() -> None:
        items: list[Any] = []
        for user, _ in generate.TURNS:
            try:
                result = await Runner.run(agent, [*items, {"role": "user", "content": user}],
                                          run_config=config)  # fmt: skip
            except openai.BadRequestError:
                return
            items = result.to_input_list()

    asyncio.run(run())
    set_trace_processors([])
    return "".join(line + "\n" for line in processor.lines)


STACKS = {
    "openllmetry": openllmetry,
    "logfire": logfire_,
    "langfuse": langfuse_,
    "phoenix": phoenix,
    "mlflow": mlflow_,
    "agents_tracing": agents_tracing,
}


def record(out: Path, only: tuple[str, ...] = ()) -> list[Path]:
    """Record every stack's three conversations into ``out/<stack>/``."""
    written = []
    with generate.Stub().running() as stub:
        for n, (stack, run) in enumerate(STACKS.items()):
            if only and stack not in only:
                continue
            folder = out / stack
            folder.mkdir(parents=True, exist_ok=True)
            cases = {
                **TRIMS,
                **(ANTHROPIC_TRIMS if stack in ("logfire", "mlflow", "phoenix") else {}),
                **(
                    {
                        "responses_cut": TRIMS["cut"],
                        "responses_cut_inputs": TRIMS["cut"],
                        "responses_clean_inputs": TRIMS["clean"],
                    }
                    if stack == "agents_tracing"
                    else {}
                ),
            }
            for k, (case, trim) in enumerate(cases.items()):
                stub.log.clear()
                text = run(stub, trim, f"{stack}-{case}", 10 * n + k)
                path = folder / f"{case}{_suffix(stack)}"
                path.write_text(text, encoding="utf-8")
                written.append(path)
    return written


def _suffix(stack: str) -> str:
    return {"mlflow": ".traces.jsonl", "agents_tracing": ".spans.jsonl",
            "phoenix": ".spans.json"}.get(stack, ".otlp.jsonl")  # fmt: skip


def main() -> None:
    signal.alarm(300)  # stops by itself, whatever happens
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]  # see _generate
    os.environ.setdefault("OTEL_SDK_DISABLED", "false")
    args = sys.argv[1:]
    out = Path(args[0]) if args and args[0] not in STACKS else HERE
    only = tuple(a for a in args if a in STACKS)
    for path in record(out, only):
        print(path)


if __name__ == "__main__":
    main()

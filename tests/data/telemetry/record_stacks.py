"""Record the instrumentation stacks people run, each for real, into tests/data/telemetry/<stack>/.

Each stack is the real framework and its real instrumentation, driven against
the loopback stub of ``generate.py`` (127.0.0.1 only; it plays a scripted
model and answers a request whose tool pairing is broken with the provider's
HTTP 400 text).  For each stack, a clean conversation (no trimming, or a
trimmer that removes whole turns) and one whose trimmer cuts a parallel
batch:

* ``openai_agents_openinference/``: the OpenAI Agents SDK (Responses API)
  under ``openinference-instrumentation-openai-agents``; the cut is a
  ``call_model_input_filter`` keeping the last five input items;
* ``langchain_openinference/``: LangChain's ``create_agent`` with
  ``ChatOpenAI`` under ``openinference-instrumentation-langchain``; the cut
  is ``trim_messages`` (strategy last, no tool awareness) in a
  ``wrap_model_call`` middleware; also two conversations run under one
  parent span with no thread id (``two_threads_one_parent``);
* ``langsmith_list_runs/``: ``langsmith``'s ``wrap_openai`` runs as
  ``Client.list_runs`` returns them (the stub stores the posted runs as the
  LangSmith API does: ``session_id`` is the project's id), two threads of one
  project in each file;
* ``openllmetry_anthropic/``: the Anthropic SDK under traceloop's
  ``opentelemetry-instrumentation-anthropic``; the cut drops the largest
  ``tool_result`` block;
* ``pydantic_ai_otel/``: pydantic-ai's own instrumentation
  (``InstrumentationSettings(version=N)``: N = 1 and 2 on pydantic-ai 1.x,
  5 on 2.9.1, 5 and 6 on 2.68) with ``OpenAIChatModel``; the cut is a history
  processor keeping the last message (from 2.10.0 on, pydantic-ai repairs what
  it breaks before sending; 1.x and 2.0 to 2.9 send it, and get the 400).

Run ``python tests/data/telemetry/record_stacks.py [OUT]`` with the ``record``
extra installed (default OUT: this folder).  The script stops itself after
three minutes.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _generate() -> Any:
    spec = importlib.util.spec_from_file_location("telemetry_generate", HERE / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


G = _generate()
FILES, SYSTEM, TURNS = G.FILES, G.SYSTEM, G.TURNS
PROJECT_ID = "5f0c2a51-7c3e-4d7a-9a43-0d1c6c1e2b11"  # the LangSmith project's id

__all__ = ["record"]


class Stub(G.Stub):  # type: ignore[misc,name-defined]
    """generate.py's stub, echoing the Responses API's ``instructions`` as
    OpenAI does, and serving LangSmith's ``/runs/query`` from the posted runs."""

    def responses(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        status, answer = super().responses(body)
        if status == 200:
            answer["instructions"] = body.get("instructions")
        return status, answer

    def handle(self, handler: Any, method: str) -> None:
        if handler.path.split("?")[0].endswith("/runs/query"):
            handler.rfile.read(int(handler.headers.get("content-length") or 0))
            runs = [
                {
                    **{k: v for k, v in r.items() if k != "attachments"},
                    "session_id": PROJECT_ID,
                    "status": "error" if r.get("error") else "success",
                }
                for r in sorted(self.runs.values(), key=lambda r: str(r.get("start_time")))
            ]
            self.reply(handler, 200, {"runs": runs, "cursors": {"next": None}})
            return
        super().handle(handler, method)


def _otlp(memory: Any) -> str:
    return str(G._otlp_json(memory.get_finished_spans()))


def _sdk(memory: Any) -> str:
    return "".join(s.to_json() + "\n" for s in memory.get_finished_spans())


# ------------------------------------------------------ OpenAI Agents SDK
def record_openai_agents(stub: Stub, cut: bool, seed: int, instructions: bool = True) -> str:
    """Two turns of an Agents SDK agent (Responses API) under OpenInference
    (without ``instructions``: an agent with none, whose spans number the
    input items from 1)."""
    import openai
    from agents import Agent, OpenAIResponsesModel, RunConfig, Runner, function_tool, trace
    from agents.run_config import CallModelData, ModelInputData
    from openinference.instrumentation import using_session
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    @function_tool
    def read_file(path: str) -> str:
        """Read a file of the repository."""
        return str(FILES[path])

    def last_five_items(data: CallModelData[Any]) -> ModelInputData:
        """The cut: a window over input items (it splits a batch's items)."""
        return ModelInputData(data.model_data.input[-5:], data.model_data.instructions)

    def from_last_user(data: CallModelData[Any]) -> ModelInputData:
        """Clean: drop the earlier turns whole (from the last user message on)."""
        items = data.model_data.input
        last = max(i for i, item in enumerate(items) if item.get("role") == "user")
        return ModelInputData(items[last:], data.model_data.instructions)

    provider, memory = G._provider(seed)
    instrumentor = OpenAIAgentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    conversation = "conv-agents-cut" if cut else "conv-agents-clean"
    client = openai.AsyncOpenAI(base_url=f"{stub.url}/v1", api_key="test", max_retries=0)
    agent = Agent(name="coding-agent", instructions=SYSTEM if instructions else None,
                  tools=[read_file],
                  model=OpenAIResponsesModel("gpt-4.1", client))  # fmt: skip
    config = RunConfig(call_model_input_filter=last_five_items if cut else from_last_user)

    async def run() -> None:
        items: list[Any] = []
        with using_session(conversation), trace("coding-agent", group_id=conversation):
            for user, _ in TURNS:
                items.append({"role": "user", "content": user})
                try:
                    result = await Runner.run(agent, items, run_config=config)
                except openai.BadRequestError:
                    return  # the incident
                items = result.to_input_list()

    try:
        asyncio.run(run())
    finally:
        instrumentor.uninstrument()
    return _otlp(memory)


# -------------------------------------------------------------- LangChain
def _langchain_agent(stub: Stub, cut: bool) -> Any:
    from langchain.agents import create_agent
    from langchain.agents.middleware import wrap_model_call
    from langchain_core.messages import trim_messages
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from pydantic import SecretStr

    @tool
    def read_file(path: str) -> str:
        """Read a file of the repository."""
        return str(FILES[path])

    @wrap_model_call
    def trim(request: Any, handler: Callable[[Any], Any]) -> Any:
        """The cut: trim_messages keeping the last five messages, no tool awareness."""
        kept = trim_messages(request.messages, max_tokens=5, token_counter=len, strategy="last")
        return handler(request.override(messages=kept))

    model = ChatOpenAI(model="gpt-4.1", base_url=f"{stub.url}/v1", api_key=SecretStr("test"),
                       max_retries=0)  # fmt: skip
    return create_agent(model, [read_file], system_prompt=SYSTEM, middleware=[trim] if cut else [])


def record_langchain(stub: Stub, runs: list[tuple[str, bool]], seed: int, parent: bool) -> str:
    """Each (thread, cut) conversation of a LangChain agent under OpenInference;
    with ``parent``, all under one span and with no thread id (threads of one trace)."""
    import openai
    from openinference.instrumentation.langchain import LangChainInstrumentor

    provider, memory = G._provider(seed)
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        tracer = provider.get_tracer("batch-job")
        with tracer.start_as_current_span("review-batch") if parent else _nothing():
            for thread, cut in runs:
                agent = _langchain_agent(stub, cut)
                config = {} if parent else {"metadata": {"thread_id": thread}}
                messages: list[Any] = []
                for user, _ in TURNS:
                    messages.append({"role": "user", "content": user})
                    try:
                        state = agent.invoke({"messages": messages}, config=config)
                    except openai.BadRequestError:
                        break
                    messages = state["messages"]
    finally:
        instrumentor.uninstrument()
    return _sdk(memory)


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *args: object) -> None:
        return None


# -------------------------------------------------------------- LangSmith
def record_langsmith_runs(stub: Stub, threads: list[tuple[str, bool]]) -> str:
    """wrap_openai runs of each (thread, cut) chat agent, in one project, as
    Client.list_runs returns them."""
    import warnings

    import langsmith
    import openai
    from langsmith.wrappers import wrap_openai

    stub.runs.clear()
    ls = langsmith.Client(api_url=f"{stub.url}/langsmith", api_key="test",
                          auto_batch_tracing=False)  # fmt: skip
    client = wrap_openai(openai.OpenAI(base_url=f"{stub.url}/v1", api_key="test", max_retries=0))
    for thread, cut in threads:
        trim = G.keep_last if cut else G.keep_last_units
        with langsmith.tracing_context(
            enabled=True, client=ls, project_name="coding-agent",
            metadata={"thread_id": thread},
        ):  # fmt: skip
            G.chat_agent(client, trim, thread)
    ls.flush()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # list_runs is deprecated in favour of runs.query
        runs = list(ls.list_runs(project_id=PROJECT_ID))
    return "".join(json.dumps(r.model_dump(mode="json"), sort_keys=True) + "\n" for r in runs)


# ------------------------------------------------------------- OpenLLMetry
def record_openllmetry_anthropic(stub: Stub, cut: bool, seed: int) -> str:
    """The Anthropic agent of generate.py under traceloop's instrumentation."""
    import anthropic
    from opentelemetry.instrumentation.anthropic import AnthropicInstrumentor

    provider, memory = G._provider(seed)
    instrumentor = AnthropicInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    conversation = "conv-openllmetry-cut" if cut else "conv-openllmetry-clean"
    try:
        client = anthropic.Anthropic(base_url=stub.url, api_key="test", max_retries=0)
        tracer = provider.get_tracer("coding-agent")
        with tracer.start_as_current_span(
            "invoke_agent coding-agent",
            attributes={"gen_ai.operation.name": "invoke_agent",
                        "gen_ai.conversation.id": conversation},
        ):  # fmt: skip
            G.anthropic_agent(client, cut, conversation)
    finally:
        instrumentor.uninstrument()
    return _otlp(memory)


# -------------------------------------------------------------- pydantic-ai
THIRD = "Which of them has no test?"


def record_pydantic_ai(
    stub: Stub,
    cut: bool,
    version: int,
    seed: int,
    window: int | None = None,
    trim: Callable[[list[Any]], list[Any]] | None = None,
) -> str:
    """Two turns of a pydantic-ai agent (OpenAIChatModel) under its own
    instrumentation; with ``window``, three turns and a history processor
    keeping the last ``window`` messages (the model answers each turn with
    the same words); with ``trim``, that history processor.  A run stops at
    the provider's 400 or at pydantic-ai's request limit (six requests a
    run: an agent whose history lost its tool results calls the tools again)."""
    import warnings

    from pydantic_ai import Agent
    from pydantic_ai.exceptions import UsageLimitExceeded
    from pydantic_ai.messages import ModelMessage, ModelRequest, UserPromptPart
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider
    from pydantic_ai.usage import UsageLimits

    def last_message(messages: list[Any]) -> list[Any]:
        """The cut: keep the last message (a tool return's call goes)."""
        return messages[-1:]

    def from_last_prompt(messages: list[Any]) -> list[Any]:
        """Clean: drop the earlier turns whole."""
        starts = [i for i, m in enumerate(messages) if isinstance(m, ModelRequest)
                  and any(isinstance(p, UserPromptPart) for p in m.parts)]  # fmt: skip
        return messages[starts[-1] :] if starts else messages

    provider, memory = G._provider(seed)
    model = OpenAIChatModel(
        "gpt-4.1", provider=OpenAIProvider(base_url=f"{stub.url}/v1", api_key="test")
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # versions 2-4 are deprecated formats
        settings = InstrumentationSettings(tracer_provider=provider, version=version)  # type: ignore[arg-type]

    def last_messages(messages: list[Any]) -> list[Any]:
        return messages[-(window or 1) :]

    processor = trim or (last_messages if window else last_message if cut else from_last_prompt)
    try:  # pydantic-ai 2.x: capabilities
        from pydantic_ai.capabilities.instrumentation import Instrumentation
        from pydantic_ai.capabilities.process_history import ProcessHistory

        agent = Agent(
            model,
            instructions=SYSTEM,
            capabilities=[Instrumentation(settings=settings), ProcessHistory(processor)],
        )
    except ImportError:  # pydantic-ai 1.x
        agent = Agent(model, instructions=SYSTEM, instrument=settings,  # type: ignore[call-overload]
                      history_processors=[processor])  # fmt: skip

    @agent.tool_plain
    def read_file(path: str) -> str:
        """Read a file of the repository."""
        return str(FILES[path])

    conversation = f"conv-pydantic-ai-v{version}-{'cut' if cut else 'clean'}"
    if window:
        conversation = f"conv-pydantic-ai-v{version}-last-{window}"
    tracer = provider.get_tracer("coding-agent")
    history: list[ModelMessage] = []
    with tracer.start_as_current_span(
        "conversation", attributes={"gen_ai.conversation.id": conversation}
    ):
        for user in [u for u, _ in TURNS] + ([THIRD] if window else []):
            try:
                result = agent.run_sync(
                    user, message_history=history, usage_limits=UsageLimits(request_limit=6)
                )
            except UsageLimitExceeded:
                break
            except Exception as exc:  # the provider's 400, as pydantic-ai raises it
                if "400" not in str(exc):
                    raise
                break
            history = result.all_messages()
    return _otlp(memory)


# ------------------------------------------------------------------ record
def _pydantic_ai(stub: Stub) -> dict[str, str]:
    """pydantic-ai 1.x (formats 1 and 2), 2.0 to 2.9 (format 5, the only
    current one there: written ``2.9_v5_*`` from 2.9.1) and 2.10 on (formats
    5, the default, and 6: ``2.x_v*``): clean and cut.  From 2.10.0 on,
    pydantic-ai drops orphaned tool results and synthesizes missing ones
    before each request, so its cut never reaches the provider: the results
    of the batch the window split are dropped before the model sees them, and
    the agent calls the tools again until its request limit.  2.0 to 2.9 only
    merge consecutive messages: their cut reaches the provider, which answers
    400, as on 1.x."""
    from importlib.metadata import version as installed

    major, minor = (int(n) for n in installed("pydantic-ai-slim").split(".")[:2])
    repairs = (major, minor) >= (2, 10)
    tag = f"{major}.x" if major == 1 or repairs else f"{major}.{minor}"
    out = {}
    for version in (1, 2) if major == 1 else (5, 6) if repairs else (5,):
        for cut in (False, True):
            kind = "cut" if cut else "clean"
            out[f"pydantic_ai_otel/{tag}_v{version}_{kind}.otlp.jsonl"] = record_pydantic_ai(
                stub, cut, version, 50 + 2 * version + cut
            )
    if repairs:  # it repairs the pairing the window breaks; the model says the same twice
        out["pydantic_ai_otel/2.x_v5_last_3.otlp.jsonl"] = record_pydantic_ai(
            stub, False, 5, 60, window=3
        )
    return out


def _others(stub: Stub) -> dict[str, str]:
    written: dict[str, str] = {}
    for cut in (False, True):
        kind = "cut" if cut else "clean"
        written[f"openai_agents_openinference/{kind}.otlp.jsonl"] = record_openai_agents(
            stub, cut, 20 + cut
        )
        written[f"langchain_openinference/{kind}.sdk.json"] = record_langchain(
            stub, [(f"thread-langchain-{kind}", cut)], 30 + cut, parent=False
        )
        written[f"openllmetry_anthropic/{kind}.otlp.jsonl"] = record_openllmetry_anthropic(
            stub, cut, 40 + cut
        )
    written["openai_agents_openinference/clean_no_instructions.otlp.jsonl"] = record_openai_agents(
        stub, False, 22, instructions=False
    )
    written["langchain_openinference/two_threads_one_parent.sdk.json"] = record_langchain(
        stub, [("a", False), ("b", True)], 35, parent=True
    )
    written["langsmith_list_runs/clean.jsonl"] = record_langsmith_runs(
        stub, [("thread-clean-1", False), ("thread-clean-2", False)]
    )
    written["langsmith_list_runs/cut.jsonl"] = record_langsmith_runs(
        stub, [("thread-clean", False), ("thread-cut", True)]
    )
    return written


def record(out: Path, stacks: tuple[str, ...] = ("pydantic-ai", "others")) -> list[Path]:
    """Write the logs of ``stacks`` under ``out``; return the files written."""
    written: dict[str, str] = {}
    with Stub().running() as stub:
        if "pydantic-ai" in stacks:
            written.update(_pydantic_ai(stub))
        if "others" in stacks:
            written.update(_others(stub))
    paths = []
    for name, text in written.items():
        path = out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def main() -> None:
    """``record_stacks.py [OUT] [pydantic-ai|others ...]``."""
    signal.alarm(180)  # stops by itself, whatever happens
    # Python puts this folder first on sys.path: its stack folders would shadow, as
    # namespace packages, one the venv lacks (logfire_api, which pydantic-ai imports,
    # imports ``logfire`` if it can: it found logfire/ in a venv without Logfire)
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE
    stacks = tuple(sys.argv[2:]) or ("pydantic-ai", "others")
    for path in record(out, stacks):
        print(path)


if __name__ == "__main__":
    main()

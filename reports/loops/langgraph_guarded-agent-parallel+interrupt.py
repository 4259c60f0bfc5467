"""LangChain v1 / LangGraph: a request OpenAI rejects, replayed with the framework alone.
`agent` of ../../examples/loops/langgraph_guarded.py as written, on LangChain's fake chat model and fake tools
of the same names, LangGraph's SQLite checkpointer (a temporary file).  Scenario classes parallel, interrupt,
violations provider_rejection, unanswered_call, found by prunecheck 0.2.0, seed 1.  Run from any directory:
python <this file>.  Exit 0 = not reproduced, 1 = reproduced, 2 = could not run."""
import asyncio, importlib.metadata, itertools, json, os, runpy, sys, contextlib, tempfile
from pathlib import Path
FOUND_ON = {"langchain": "1.5.2", "langgraph": "1.2.24", "langchain-core": "1.8.3", "langgraph-checkpoint-sqlite": "3.1.2"}
for dist, version in FOUND_ON.items():  # checked before LangChain is imported
    if (have := next((d.version for d in importlib.metadata.distributions(name=dist)), None)) != version:
        sys.exit(print(f"could not run: {dist} is not installed (found on {dist} {version})" if have is None else f"could not run: found on {dist} {version}, installed {dist} {have}") or 2)
sys.excepthook = lambda kind, error, _: (print(f"could not run: {kind.__name__}: {error}", flush=True), os._exit(2))  # any error: could not run (exit 2), never 1
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage, convert_to_openai_messages
from langchain_core.tools import StructuredTool
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
CONFIG = {"configurable": {"thread_id": "1"}}
requests, found, asked, done, results, ran = [], [], [], {}, {}, []
class Model(GenericFakeChatModel):  # LangChain's fake, in OpenAI's place: checks each request, then answers
    bind_tools = lambda self, tools, **kwargs: self  # create_agent binds the tools; the fake needs none
    async def _agenerate(self, messages, *args, **kwargs):
        requests.append(sent := convert_to_openai_messages(messages))
        n = len(requests)
        for i, m in enumerate(sent):
            after = {t["tool_call_id"] for t in itertools.takewhile(lambda t: t["role"] == "tool", sent[i + 1:])}
            if missing := ", ".join(c["id"] for c in m.get("tool_calls", []) if c["id"] not in after):
                found.append([f"request #{n}: {json.dumps(sent)}", "openai says: An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_1",
                              f"reproduced: provider_rejection: request #{n} sends {missing} without a result"])
        asked.append(answer := asyncio.get_running_loop().create_future())
        self.messages = iter([await answer])
        return self._generate(messages)
class FakeTool(StructuredTool):  # the user's tool's name and schema: a call waits for done[its id]
    async def ainvoke(self, call, config=None, **kwargs):
        await done.setdefault(call["id"], asyncio.Event()).wait()
        if isinstance(result := results[call["id"]], Exception): raise result
        return ToolMessage(result, tool_call_id=call["id"], name=self.name)
def agent(checkpointer):  # the user's agent: fake model, fake tools
    graph = runpy.run_path(str(Path(__file__).resolve().parent / '../../examples/loops/langgraph_guarded.py'))['agent'](model=Model(messages=iter([])), checkpointer=checkpointer)
    tools = graph.nodes["tools"].bound.tools_by_name
    tools.update({n: FakeTool(name=n, description=t.description, args_schema=t.args_schema) for n, t in tools.items()})
    return graph
async def settle(turn, seconds=10):  # until the turn has returned or waits on the model or a tool
    async with asyncio.timeout(seconds):
        while not (turn.done() or any(not a.done() for a in asked) or any(not e.is_set() for e in done.values())):
            await asyncio.sleep(0.001)
async def main():
    asyncio.get_running_loop().set_exception_handler(lambda loop, context: None)  # a turn's end is no finding
    async with contextlib.AsyncExitStack() as stack:
        db = Path(stack.enter_context(tempfile.TemporaryDirectory())) / "checkpoints.sqlite"
        saver = lambda: stack.enter_async_context(AsyncSqliteSaver.from_conn_string(str(db)))
        graph = agent(await saver())
        turn = asyncio.create_task(graph.ainvoke({"messages": [HumanMessage('user message 1')]}, CONFIG, durability="sync")); await settle(turn)
        asked.pop(0).set_result(AIMessage('', tool_calls=[{'name': 'search', 'args': {'query': 'query-1'}, 'id': 'call_1'}])); await settle(turn)
        results['call_1'] = RuntimeError('search failed for call_1'); done['call_1'].set(); await settle(turn)
        turn = asyncio.create_task(graph.ainvoke({"messages": [HumanMessage('user message 4')]}, CONFIG, durability="sync")); await settle(turn)
    return print(*(found[0] if found else ["not reproduced"]), sep="\n") or (1 if found else 0)
sys.exit(asyncio.run(main()))  # an error escaping is "could not run" (the excepthook), exit 2

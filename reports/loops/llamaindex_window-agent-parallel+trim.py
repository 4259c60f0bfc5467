"""LlamaIndex: agent of ../../examples/loops/llamaindex_window.py, scenario classes parallel, trim, violations orphaned_result, provider_rejection;
found by prunecheck 0.2.0, seed 1. Run from any directory: python <this file>; exit 0 = not reproduced, 1 = reproduced, 2 = could not run."""
import asyncio, collections, concurrent.futures, importlib, importlib.metadata, json, os, pathlib, sys, tempfile
FOUND_ON = {"llama-index-core": "0.14.25"}
for dist, found in FOUND_ON.items(): (HAVE := {d.metadata["Name"]: d.version for d in importlib.metadata.distributions()}).get(dist) == found or sys.exit(print(f"could not run: found on {dist} {found}, installed {dist} {HAVE[dist]}" if dist in HAVE else f"could not run: {dist} is not installed (found on {dist} {found})") or 2)  # exit 2 unless installed as found
sys.excepthook = lambda kind, error, _: (print(f"could not run: {kind.__name__}: {error}", flush=True), os._exit(2))  # any error: could not run (exit 2), never 1
from llama_index.core.base.llms.types import ChatMessage, ChatResponse, TextBlock, ToolCallBlock
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.tools import FunctionTool
requests, asked, issued, started, done, outcome, ran, runs = [], [], [], set(), collections.defaultdict(asyncio.Event), {}, {}, collections.Counter()
def chat(messages):  # LlamaIndex's messages in OpenAI Chat Completions form (as prunecheck shows them)
    calls = lambda m: [{"id": b.tool_call_id, "type": "function", "function": {"name": b.tool_name, "arguments": b.tool_kwargs}} for b in m.blocks if isinstance(b, ToolCallBlock)]
    return [{"role": "tool", "tool_call_id": m.additional_kwargs.get("tool_call_id"), "content": m.content or ""} if m.role.value == "tool"
            else {"role": m.role.value, "content": m.content or (None if calls(m) else ""), **({"tool_calls": calls(m)} if calls(m) else {})} for m in messages]
async def one(response): yield response  # a stream of one chunk
class Scripted(MockFunctionCallingLLM):  # LlamaIndex's test model: each request recorded, answered at the schedule's reply
    async def achat(self, messages, **kwargs):
        requests.append(chat(messages)); asked.append(asyncio.get_running_loop().create_future())
        text, calls = await asked[-1]; issued.extend(calls)
        blocks = ([TextBlock(text=text)] if text else []) + [ToolCallBlock(tool_call_id=i, tool_name=n, tool_kwargs=a) for i, n, a in calls]
        return ChatResponse(message=ChatMessage(role="assistant", blocks=blocks))
    async def astream_chat(self, messages, **kwargs): return one(await self.achat(messages, **kwargs))  # the agent streams (its default)
def fake(tool):  # the tool keeps its metadata (name, description, schema); its body waits for the schedule
    async def body(**kwargs):  # handed its arguments, not its call id: the first call issued of that name and arguments not yet run
        call_id = next(i for i, n, a in issued if n == tool.metadata.name and json.loads(a) == kwargs and i not in started); started.add(call_id)
        await done[call_id].wait(); ran[call_id] = tool.metadata.name; runs[call_id] += not isinstance(outcome[call_id], Exception)
        if isinstance(outcome[call_id], Exception): raise outcome[call_id]
        return outcome[call_id]
    return FunctionTool.from_defaults(async_fn=body, tool_metadata=tool.metadata)
def build(user):  # the user's agent as configured (its class and fields) on the scripted model
    return type(user)(**{**{k: getattr(user, k) for k in type(user).model_fields}, "llm": Scripted(), "tools": [fake(t) for t in user.tools or []], "tool_retriever": None})
class Inline(concurrent.futures.ThreadPoolExecutor):  # blocking work (memory.aget) runs at once, in order (as prunecheck runs it)
    def submit(self, fn, /, *args, **kwargs): (future := concurrent.futures.Future()).set_result(fn(*args, **kwargs)); return future
async def step(*_):  # after each step: let LlamaIndex run until it waits on the model or a tool (a SQL memory: on its own threads)
    for n in range(500): await asyncio.sleep(0.001 if n % 10 == 0 else 0)
answer = lambda text, *calls: next(f for f in asked if not f.done()).set_result((text, calls))  # the model answers the oldest open request
finish = lambda call_id, result: (outcome.__setitem__(call_id, result), done[call_id].set())  # the tool of call_id returns result (or raises it)
def start(agent, memory, prompt):  # a turn of the app: agent.run(prompt, memory=memory)
    global handler; handler = agent.run(user_msg=prompt, memory=memory)
    asyncio.ensure_future(handler).add_done_callback(lambda t: t.cancelled() or t.exception() is None or print(f"(the turn raised {type(t.exception()).__name__}: {t.exception()})"))
async def main():
    asyncio.get_running_loop().set_default_executor(Inline(max_workers=1))
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / '../../examples/loops'))  # the user's module
    app = importlib.import_module('llamaindex_window')
    user = app.agent  # the user's agent
    memory = app.memory  # the memory the app runs it with
    agent = build(user)
    await step(start(agent, memory, 'user message 1'))
    await step(answer('', ('call_1', 'search', '{"query": "query-1"}'), ('call_2', 'search', '{"query": "query-2"}')))
    await step(finish('call_1', 'search result for call_1 lorem ipsum'))
    await step(finish('call_2', 'search result for call_2 lorem ipsum'))
    await step(answer('answer 5'))
    await step(start(agent, memory, 'user message 6'))
    await step(answer('answer 7'))
    await step(start(agent, memory, 'user message 8'))
    await step(answer('answer 9'))
    await step(start(agent, memory, 'user message 10'))
    for n, body in enumerate(requests, 1):  # OpenAI: a tool message answers the assistant message before it
        for i, m in enumerate(body):
            calls = next((p.get("tool_calls") or [] for p in body[i::-1] if p["role"] != "tool"), [])  # of the message before
            if m["role"] == "tool" and m["tool_call_id"] not in [c["id"] for c in calls]:
                print(f"request #{n}: {json.dumps(body)}\nanthropic says: " + 'messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: call_1. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.')
                return print(f"reproduced: orphaned_result: the result of {m['tool_call_id']} is sent without its call") or 1
    for n, body in enumerate(requests, 1):  # OpenAI: the tool messages after a call answer each of its calls
        for i, m in enumerate(body):
            after = [p.get("tool_call_id") for p in body[i + 1:]] + [None]
            if missing := [c["id"] for c in m.get("tool_calls") or [] if c["id"] not in after[:after.index(None)]]:
                print(f"request #{n}: {json.dumps(body)}\nopenai says: " + "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: " + ", ".join(missing))
                return print(f"reproduced: unanswered_call: {', '.join(missing)} is sent without its result") or 1
    return print("not reproduced") or 0
if __name__ == "__main__": sys.exit(asyncio.run(main()))  # an error escaping is "could not run" (the excepthook), exit 2

"""Microsoft Agent Framework: agent() of ../../examples/loops/maf_durable.py, scenario class cancel, violations provider_rejection, unanswered_call;
found by prunecheck 0.2.0, seed 1. Run from any directory: python <this file>; exit 0 = not reproduced, 1 = reproduced, 2 = could not run."""
import asyncio, collections, contextvars, copy, importlib, importlib.metadata, json, os, pathlib, sys, tempfile
FOUND_ON = {"agent-framework-core": "1.23.0"}
for dist, found in FOUND_ON.items(): (HAVE := {d.metadata["Name"]: d.version for d in importlib.metadata.distributions()}).get(dist) == found or sys.exit(print(f"could not run: found on {dist} {found}, installed {dist} {HAVE[dist]}" if dist in HAVE else f"could not run: {dist} is not installed (found on {dist} {found})") or 2)  # exit 2 unless installed as found
sys.excepthook = lambda kind, error, _: (print(f"could not run: {kind.__name__}: {error}", flush=True), os._exit(2))  # any error: could not run (exit 2), never 1
os.environ.setdefault("OPENAI_API_KEY", "sk-placeholder")  # the user's client is built, never called
from agent_framework import Agent, BaseChatClient, ChatMiddlewareLayer, ChatResponse, Content, FileHistoryProvider, FunctionInvocationLayer, Message
requests, asked, done, outcome, ran, runs, results, CALL, STORE = [], [], collections.defaultdict(asyncio.Event), {}, {}, collections.Counter(), [], contextvars.ContextVar("call"), tempfile.mkdtemp(prefix="maf-repro-")
def chat(messages, instructions):  # the framework's messages in OpenAI Chat Completions form (as prunecheck shows them)
    out = [{"role": "system", "content": instructions}] if instructions else []
    for m in messages:
        text, results = "".join(c.text for c in m.contents if c.type == "text" and c.text), [c for c in m.contents if c.type == "function_result"]
        calls = [{"id": c.call_id, "type": "function", "function": {"name": c.name, "arguments": c.arguments if isinstance(c.arguments, str) else json.dumps(c.arguments or {}, sort_keys=True)}} for c in m.contents if c.type == "function_call"]
        if m.role == "assistant" and (text or calls): out.append({"role": "assistant", "content": text or None, **({"tool_calls": calls} if calls else {})})
        out += [{"role": "tool", "tool_call_id": c.call_id, "content": str(c.result if c.result is not None else c.exception)} for c in results]
        if m.role in ("user", "system") and (text or not results): out.append({"role": m.role, "content": text})
    return out
class Scripted(FunctionInvocationLayer, ChatMiddlewareLayer, BaseChatClient):  # the framework's chat client layers: each request recorded, answered at the schedule's reply
    async def _inner_get_response(self, *, messages, stream, options, **kwargs):
        requests.append(chat(messages, options.get("instructions"))); asked.append(asyncio.get_running_loop().create_future())
        text, calls = await asked[-1]
        contents = ([Content.from_text(text)] if text else []) + [Content.from_function_call(i, name, arguments=arguments) for i, name, arguments in calls]
        return ChatResponse(messages=[Message(role="assistant", contents=contents)], finish_reason="tool_calls" if calls else "stop")
def fake(tool):  # the tool keeps its name, schema and the framework's error results; its function waits for the schedule
    fake = copy.copy(tool); inner = fake.invoke
    async def body(**_):
        call_id = CALL.get(); await done[call_id].wait(); ran[call_id] = tool.name
        if isinstance(outcome[call_id], Exception): raise outcome[call_id]
        runs[call_id] += 1; return outcome[call_id]
    async def invoke(*args, tool_call_id=None, **kwargs):
        CALL.set(tool_call_id); return await inner(*args, tool_call_id=tool_call_id, **kwargs)
    fake.func, fake.invoke = body, invoke
    return fake
def build(user):  # a new process: the user's agent as configured, on the scripted client, and its session
    providers = [FileHistoryProvider(STORE, source_id=p.source_id, load_messages=p.load_messages, store_inputs=p.store_inputs, store_outputs=p.store_outputs, skip_excluded=p.skip_excluded) if isinstance(p, FileHistoryProvider) else copy.copy(p) for p in user.context_providers]
    client = Scripted(compaction_strategy=user.client.compaction_strategy, tokenizer=user.client.tokenizer, function_invocation_configuration=dict(user.client.function_invocation_configuration), middleware=[*user.client.chat_middleware, *user.client.function_middleware])
    agent = Agent(client, user.default_options.get("instructions"), tools=[fake(t) for t in user.default_options["tools"]], default_options={k: v for k, v in user.default_options.items() if k not in ("tools", "instructions")},
                  context_providers=providers, middleware=user.middleware, require_per_service_call_history_persistence=user.require_per_service_call_history_persistence, compaction_strategy=user.compaction_strategy, tokenizer=user.tokenizer)
    return agent, agent.create_session(session_id="prunecheck")  # the same session id in every process
asyncio.to_thread = lambda fn, /, *args, **kwargs: asyncio.sleep(0, fn(*args, **kwargs))  # blocking work (the history file) runs at once, in order (as prunecheck runs it)
async def step(*_):  # after each step: let the framework run until it waits on the model or a tool
    for _ in range(500): await asyncio.sleep(0)
def answer(text, *calls): next(f for f in asked if not f.done()).set_result((text, calls))  # the model answers the oldest open request
def finish(call_id, result): outcome[call_id] = result; done[call_id].set()  # the tool of call_id returns result (or raises it)
def start(agent, session, prompt):  # a turn of the app
    async def turn():
        try: results.append(await agent.run(prompt, session=session))
        except Exception as exc: print(f"(the turn raised {type(exc).__name__}: {exc})")
    global running; running = asyncio.create_task(turn())
async def main():
    module, name = (sys.argv[1:] or ['maf_durable:agent'])[0].split(':')  # the user's agent; another: its MODULE:NAME as argument
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / '../../examples/loops'))  # the user's module
    user = getattr(importlib.import_module(module), name)()  # the user's factory, called
    agent, session = build(user)
    await step(start(agent, session, 'user message 1'))
    await step(answer('', ('call_1', 'search', '{"query": "query-1"}'), ('call_2', 'search', '{"query": "query-2"}')))
    await step(running.cancel())  # the framework's cancel: the run's task
    await step(start(agent, session, 'user message 5'))
    for n, body in enumerate(requests, 1):  # OpenAI: the tool messages after a call answer each of its calls
        for i, m in enumerate(body):
            after = [p.get("tool_call_id") for p in body[i + 1:]] + [None]
            if missing := [c["id"] for c in m.get("tool_calls") or [] if c["id"] not in after[:after.index(None)]]:
                print(f"request #{n}: {json.dumps(body)}\nopenai says: " + "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_1, call_2")
                return print(f"reproduced: unanswered_call: {', '.join(missing)} is sent without its result") or 1
    return print("not reproduced") or 0
if __name__ == "__main__": sys.exit(asyncio.run(main()))  # an error escaping is "could not run" (the excepthook), exit 2

"""OpenAI Agents SDK (openai-agents 0.24.0): silent_loss, scenario class crash_new_message, in the agent
`app` of ../../examples/loops/openai_agents_turns.py (imported as written); found by prunecheck 0.2.0, seed 1. main() plays the schedule,
one line a step. Run from any directory: python <this file>; exit 0 = not reproduced, 1 = reproduced, 2 = could not run."""
import asyncio, collections, concurrent.futures, dataclasses, importlib.metadata, json, os, pathlib, sys, tempfile
FOUND_ON = {"openai-agents": "0.24.0"}
for dist, found in FOUND_ON.items(): (HAVE := {d.metadata["Name"]: d.version for d in importlib.metadata.distributions()}).get(dist) == found or sys.exit(print(f"could not run: found on {dist} {found}, installed {dist} {HAVE[dist]}" if dist in HAVE else f"could not run: {dist} is not installed (found on {dist} {found})") or 2)  # exit 2 unless installed as found
sys.excepthook = lambda kind, error, _: (print(f"could not run: {kind.__name__}: {error}", flush=True), os._exit(2))  # any error: could not run (exit 2), never 1
from agents import FunctionTool, RunConfig, Runner, SQLiteSession
from agents.models.chatcmpl_converter import Converter
from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "../../examples/loops"))
import openai_agents_turns as user  # the user's agent, as written
STORE, requests, ran, outputs, done, turns, results, findings = tempfile.TemporaryDirectory(), [], {}, {}, collections.defaultdict(asyncio.Event), [], [], []
class Inline(concurrent.futures.ThreadPoolExecutor):  # the session's to_thread work: at once, in order
    def submit(self, fn, /, *args, **kwargs):
        (future := concurrent.futures.Future()).set_result(fn(*args, **kwargs))
        return future
async def answer(call):  # the provider: each request in Chat Completions form, judged, then its reply
    system = [{"role": "system", "content": call.system_instructions}] if call.system_instructions else []
    requests.append(messages := system + Converter.items_to_messages(call.input))
    told = {item.get("call_id") for item in await session.get_items()} | {m.get("tool_call_id") for m in messages}
    told |= {c["id"] for m in messages for c in m.get("tool_calls") or ()}
    for call_id in [c for c in ran if c not in told]:  # it ran; neither request nor session holds it (no trim removed it)
        findings.append(f"request #{len(requests)}: {json.dumps(messages, default=str)}\n{ran[call_id]} ran for {call_id}; neither this request nor the session holds its call or result\n"
                        f"reproduced: silent_loss: {ran[call_id]} ran for {call_id} and the model is no longer told")
    return await replies.get()
def fake(tool):  # the user's tool, its body replaced: it returns when the schedule completes its call
    async def body(ctx, arguments):
        await done[ctx.tool_call_id].wait()
        ran[ctx.tool_call_id] = tool.name
        return outputs[ctx.tool_call_id]
    return dataclasses.replace(tool, on_invoke_tool=body)
def open_agent():  # a process: the user's agent and run config, the scripted model, a session on the store
    global agent, config, session, replies
    agent, config = user.app()  # the user's, with fake tools, the scripted model and a session
    agent = agent.clone(tools=[fake(t) if isinstance(t, FunctionTool) else t for t in agent.tools])
    config = dataclasses.replace(config, model=ScriptedModel(ModelStep.respond(answer) for _ in range(5)), tracing_disabled=True)
    session, replies = SQLiteSession("conversation", f"{STORE.name}/session.sqlite"), asyncio.Queue()
open_agent()
async def settle():  # every task runs until all of them wait on the schedule
    for _ in range(200): await asyncio.sleep(0)
async def turn(given):  # one streamed run of the agent on the session, as an application runs it
    results.append(Runner.run_streamed(agent, given, session=session, run_config=config))
    async for _event in results[-1].stream_events(): pass
async def say(text):  # the user sends a message
    turns.append(asyncio.create_task(turn(text))); await settle()
async def reply(*output):  # the model answers its pending request
    replies.put_nowait(list(output)); await settle()
async def complete(call_id, output):  # the tool body of call_id returns (or raises)
    outputs[call_id] = output; done[call_id].set(); await settle()
async def main():
    asyncio.get_running_loop().set_default_executor(Inline())
    await say("user message 1")
    await reply(function_call("run_tests", '{"target": "target-1"}', call_id="call_1"),
                function_call("read_file", '{"path": "path-2"}', call_id="call_2"))
    await complete("call_2", "read_file result for call_2 lorem ipsum")
    open_agent()  # the process dies; a new one opens the agent on the same store
    await say("user message 9 after the crash")
    [task.result() for task in turns if task.done() and not task.cancelled()]  # a run that raised: the replay went wrong
asyncio.run(main())  # an error escaping is "could not run" (the excepthook), exit 2
sys.exit(print(findings[0] if findings else "not reproduced") or (1 if findings else 0))

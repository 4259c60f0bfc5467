"""Strands Agents: agent of ../../examples/loops/strands_sliding.py, scenario class cancel, violations hang;
found by prunecheck 0.2.0, seed 1. Run from any directory: python <this file>; exit 0 = not reproduced, 1 = reproduced, 2 = could not run."""
import asyncio, collections,  contextvars, copy, importlib, importlib.metadata, json, os, pathlib, sys
FOUND_ON = {"strands-agents": "1.62.0"}
for dist, found in FOUND_ON.items(): (HAVE := {d.metadata["Name"]: d.version for d in importlib.metadata.distributions()}).get(dist) == found or sys.exit(print(f"could not run: found on {dist} {found}, installed {dist} {HAVE[dist]}" if dist in HAVE else f"could not run: {dist} is not installed (found on {dist} {found})") or 2)  # exit 2 unless installed as found
sys.excepthook = lambda kind, error, _: (print(f"could not run: {kind.__name__}: {error}", flush=True), os._exit(2))  # any error: could not run (exit 2), never 1
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")  # a Bedrock client is built, never called
from strands import Agent
from strands.models.model import Model
requests, asked, done, outcome, ran, runs, CALL = [], [], collections.defaultdict(asyncio.Event), {}, {}, collections.Counter(), contextvars.ContextVar("call")
def chat(messages, system):  # Strands' messages in OpenAI Chat Completions form (as prunecheck shows them)
    out = [{"role": "system", "content": system}] if system else []
    for m in messages:
        blocks = m["content"]; text = "".join(b["text"] for b in blocks if "text" in b); results = [b["toolResult"] for b in blocks if "toolResult" in b]
        calls = [{"id": b["toolUse"]["toolUseId"], "type": "function", "function": {"name": b["toolUse"]["name"], "arguments": json.dumps(b["toolUse"]["input"], sort_keys=True)}} for b in blocks if "toolUse" in b]
        if m["role"] == "assistant": out.append({"role": "assistant", "content": text or None, **({"tool_calls": calls} if calls else {})})
        out += [{"role": "tool", "tool_call_id": r["toolUseId"], "content": "".join(c["text"] if "text" in c else json.dumps(c.get("json"), sort_keys=True) for c in r["content"])} for r in results]
        if m["role"] == "user" and (text or not results): out.append({"role": "user", "content": text})
    return out
class Scripted(Model):  # Strands' model interface: each request recorded, answered at the schedule's reply
    def __init__(self, limit): self.limit = limit if isinstance(limit, int) else None  # proactive compression reads it
    def get_config(self): return {"context_window_limit": self.limit} if self.limit else {}
    update_config = structured_output = lambda self, *args, **kwargs: None  # not used by these runs
    async def stream(self, messages, tool_specs=None, system_prompt=None, **kwargs):
        requests.append(chat(messages, system_prompt)); asked.append(asyncio.get_running_loop().create_future())
        if (answered := await asked[-1]) is None:  # cancelled in flight: the first chunk comes, Strands' checkpoint stops
            yield {"messageStart": {"role": "assistant"}}; return
        text, calls = answered
        yield {"messageStart": {"role": "assistant"}}
        if text or not calls: yield {"contentBlockDelta": {"delta": {"text": text}}}; yield {"contentBlockStop": {}}
        for call_id, name, arguments in calls:
            yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": call_id, "name": name}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": arguments}}}}; yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "tool_use" if calls else "end_turn"}}
def fake(tool):  # the tool keeps its name, spec and Strands' own error results; its body waits for the schedule
    fake = copy.copy(tool); inner = fake.stream
    async def body(**_):
        call_id = CALL.get()["toolUseId"]; await done[call_id].wait(); ran[call_id] = tool.tool_name
        if isinstance(outcome[call_id], Exception): raise outcome[call_id]
        runs[call_id] += 1; return outcome[call_id]
    async def stream(tool_use, *args, **kwargs):
        CALL.set(tool_use)
        async for event in inner(tool_use, *args, **kwargs): yield event
    fake._tool_func, fake.stream = body, stream
    return fake
def build(user):  # a new process: the user's agent as configured, on the scripted model
    manager = copy.copy(user.conversation_manager)  # a fresh copy of the conversation manager, its state reset
    [setattr(manager, name, value) for name, value in (("removed_message_count", 0), ("_model_call_count", 0), ("_pin_first_applied", False), ("_summary_message", None)) if hasattr(manager, name)]
    return Agent(model=Scripted(getattr(user.model, "context_window_limit", None)), messages=copy.deepcopy(user.messages), tools=[fake(t) for t in user.tool_registry.registry.values()], system_prompt=user.system_prompt,
                 conversation_manager=manager, callback_handler=None, agent_id=user.agent_id, name=user.name, tool_executor=user.tool_executor)
async def step(*_): [await asyncio.sleep(0) for _ in range(500)]  # after each step: Strands runs until it waits on the model or a tool
def answer(text, *calls): next(f for f in asked if not f.done()).set_result((text, calls))  # the model answers the oldest open request
def finish(call_id, result): outcome[call_id] = result; done[call_id].set()  # the tool of call_id returns result (or raises it)
def start(agent, *prompt):  # a turn of the app (one that raises says so)
    global running; running = asyncio.create_task(agent.invoke_async(*prompt))
    running.add_done_callback(lambda t: t.cancelled() or not t.exception() or print(f"(the turn raised {type(t.exception()).__name__}: {t.exception()})"))
async def main():
    module, name = (sys.argv[1:] or ['strands_sliding:agent'])[0].split(':')  # the user's agent; another: its MODULE:NAME as argument
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / '../../examples/loops'))  # the user's module
    user = getattr(importlib.import_module(module), name)  # the user's agent
    agent = build(user)
    await step(start(agent, 'user message 1'))
    await step(answer('', ('call_1', 'send_email', '{"body": "body-1", "to": "to-1"}')))
    agent.cancel()  # Strands' cancel of the running turn
    [f.set_result(None) for f in asked if not f.done()]  # a model request in flight streams a chunk
    if not (await asyncio.wait([running], timeout=2))[0]:
        print("reproduced: hang: the turn did not return 2 s after agent.cancel()")
        return 1
    return print("not reproduced") or 0
if __name__ == "__main__": sys.exit(asyncio.run(main()))  # an error escaping is "could not run" (the excepthook), exit 2

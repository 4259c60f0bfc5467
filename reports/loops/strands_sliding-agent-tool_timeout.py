"""Strands Agents: agent of ../../examples/loops/strands_sliding.py, scenario class tool_timeout, violations provider_rejection;
found by prunecheck 0.2.0, seed 1. Run: python <this file>, from any directory.
Exit status 0 = not reproduced, 1 = reproduced, 2 = could not run (another version, ...)."""
import asyncio, collections, concurrent.futures, contextvars, copy, importlib, importlib.metadata, json, os, pathlib, sys, tempfile, threading

FOUND_ON = {"strands-agents": "1.62.0"}
HAVE = {d.metadata["Name"]: d.version for d in importlib.metadata.distributions()}
for dist, found in FOUND_ON.items():  # exit 2 unless installed as found
    if HAVE.get(dist) != found: sys.exit(print(f"could not run: found on {dist} {found}, installed {dist} {HAVE[dist]}" if dist in HAVE else f"could not run: {dist} is not installed (found on {dist} {found})") or 2)
sys.excepthook = lambda kind, error, _: (print(f"could not run: {kind.__name__}: {error}", flush=True), os._exit(2))  # any other error before the replay
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")  # a Bedrock client is built, never called
from strands import Agent
from strands.models.model import Model
from strands.session.file_session_manager import FileSessionManager
from strands.types.exceptions import ContextWindowOverflowException
requests, asked, done, outcome, ran, runs, CALL = [], [], collections.defaultdict(asyncio.Event), {}, {}, collections.Counter(), contextvars.ContextVar("call")
STORE = tempfile.mkdtemp(prefix="strands-repro-")
def chat(messages, system):  # Strands' messages in OpenAI Chat Completions form (as prunecheck shows them)
    out = [{"role": "system", "content": system}] if system else []
    for m in messages:
        blocks = m["content"]; text = "".join(b["text"] for b in blocks if "text" in b)
        if m["role"] == "assistant":
            calls = [{"id": b["toolUse"]["toolUseId"], "type": "function", "function": {"name": b["toolUse"]["name"], "arguments": json.dumps(b["toolUse"]["input"], sort_keys=True)}} for b in blocks if "toolUse" in b]
            out.append({"role": "assistant", "content": text or None, **({"tool_calls": calls} if calls else {})})
            continue
        out += [{"role": "tool", "tool_call_id": b["toolResult"]["toolUseId"], "content": "".join(c["text"] if "text" in c else json.dumps(c.get("json"), sort_keys=True) for c in b["toolResult"]["content"])} for b in blocks if "toolResult" in b]
        if text or not any("toolResult" in b for b in blocks): out.append({"role": "user", "content": text})
    return out
class Scripted(Model):  # Strands' model interface: each request recorded, answered at the schedule's reply
    def __init__(self, limit): self.limit = limit
    def update_config(self, **config): pass
    def get_config(self): return {"context_window_limit": self.limit} if self.limit else {}
    def structured_output(self, *args, **kwargs): raise NotImplementedError
    async def stream(self, messages, tool_specs=None, system_prompt=None, **kwargs):
        tools = [{"type": "function", "function": {"name": s["name"], "description": s.get("description") or "", "parameters": s["inputSchema"].get("json", s["inputSchema"])}} for s in tool_specs or []]
        if self.limit and len(json.dumps({"messages": chat(messages, system_prompt), "tools": tools})) // 4 > self.limit:
            raise ContextWindowOverflowException("Input is too long for requested model")  # as the provider refuses it
        if threading.current_thread() is not threading.main_thread():  # a summary, asked from Strands' own thread
            text, calls = "Summary: the conversation so far, its tool calls and their results.", ()
        else:
            requests.append(chat(messages, system_prompt))
            asked.append(asyncio.get_running_loop().create_future())
            answered = await asked[-1]
            if answered is None:  # cancelled in flight: the first chunk comes, Strands' checkpoint stops
                yield {"messageStart": {"role": "assistant"}}; return
            text, calls = answered
        yield {"messageStart": {"role": "assistant"}}
        if text or not calls: yield {"contentBlockDelta": {"delta": {"text": text}}}; yield {"contentBlockStop": {}}
        for call_id, name, arguments in calls:
            yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": call_id, "name": name}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": arguments}}}}; yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "tool_use" if calls else "end_turn"}}
def fake(tool):  # the tool keeps its name, spec and Strands' own error results; its body waits for the schedule
    fake = copy.copy(tool)
    inner = fake.stream
    async def body(**_):
        call_id = CALL.get()["toolUseId"]
        await done[call_id].wait()
        ran[call_id] = tool.tool_name; runs[call_id] += not isinstance(outcome[call_id], Exception)
        if isinstance(outcome[call_id], Exception): raise outcome[call_id]
        return outcome[call_id]
    async def stream(tool_use, invocation_state, **kwargs):
        CALL.set(tool_use)
        async for event in inner(tool_use, invocation_state, **kwargs): yield event
    fake._tool_func, fake.stream = body, stream
    return fake
def build(user):  # a new process: the user's agent as configured, on the scripted model
    manager = copy.copy(user.conversation_manager)  # a fresh copy of the conversation manager
    for name, value in (("removed_message_count", 0), ("_model_call_count", 0), ("_pin_first_applied", False), ("_summary_message", None)):
        if hasattr(manager, name): setattr(manager, name, value)
    session = getattr(user, "_session_manager", None)
    session = session and FileSessionManager(session_id=session.session_id, storage_dir=STORE)  # its session, in a temporary folder
    limit = getattr(user.model, "context_window_limit", None)
    return Agent(model=Scripted(limit if isinstance(limit, int) else None), messages=[] if session else copy.deepcopy(user.messages), tools=[fake(t) for t in user.tool_registry.registry.values()], system_prompt=user.system_prompt,
                 conversation_manager=manager, session_manager=session, callback_handler=None, agent_id=user.agent_id, name=user.name, tool_executor=user.tool_executor)
class Inline(concurrent.futures.ThreadPoolExecutor):  # blocking work runs at once, in order (as prunecheck runs it)
    def submit(self, fn, /, *args, **kwargs):
        future = concurrent.futures.Future()
        try: future.set_result(fn(*args, **kwargs))
        except BaseException as exc: future.set_exception(exc)
        return future
async def step(*_):  # after each step: let Strands run until it waits on the model or a tool
    for _ in range(500): await asyncio.sleep(0)
def answer(text, *calls):  # the model answers the oldest open request: text, or tool calls (id, name, arguments)
    next(f for f in asked if not f.done()).set_result((text, calls))
def finish(call_id, result):  # the tool of call_id returns result (or raises it)
    outcome[call_id] = result; done[call_id].set()
def start(agent, prompt=None):  # a turn of the app
    global running
    async def turn():
        try: await (agent.invoke_async(prompt) if prompt is not None else agent.invoke_async())
        except Exception as exc: print(f"(the turn raised {type(exc).__name__}: {exc})")
    running = asyncio.create_task(turn())
async def main():
    asyncio.get_running_loop().set_default_executor(Inline(max_workers=1))
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / '../../examples/loops'))  # the user's module
    user = importlib.import_module('strands_sliding').agent  # the user's agent
    agent = build(user)
    await step(start(agent, 'user message 1'))
    await step(answer('', ('call_1', 'send_email', '{"body": "body-1", "to": "to-1"}')))
    await step(finish('call_1', RuntimeError('send_email failed for call_1')))
    await step(answer('', ('call_2', 'send_email', '{"body": "body-2", "to": "to-2"}')))
    await step(finish('call_2', 'send_email result for call_2 lorem ipsum'))
    await step(answer('answer 6'))
    await step(start(agent, 'user message 7'))
    for n, body in enumerate(requests, 1):  # Bedrock Converse: the conversation starts with the user's message
        first = next((m for m in body if m["role"] != "system"), None)
        if first is not None and first["role"] != "user":
            print(f"request #{n}: {json.dumps(body)}\nbedrock says: " + 'A conversation must start with a user message. Try again with a conversation that starts with a user message.')
            return print(f"reproduced: provider_rejection: the conversation starts with the {first['role']}'s message") or 1
    for n, body in enumerate(requests, 1):  # OpenAI: a tool message answers the assistant message before it
        for i, m in enumerate(body):
            calls = next((p.get("tool_calls") or [] for p in body[i::-1] if p["role"] != "tool"), [])  # of the message before
            if m["role"] == "tool" and m["tool_call_id"] not in [c["id"] for c in calls]:
                print(f"request #{n}: {json.dumps(body)}\nopenai says: " + "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.")
                return print(f"reproduced: orphaned_result: the result of {m['tool_call_id']} is sent without its call") or 1
    for n, body in enumerate(requests, 1):  # OpenAI: the tool messages after a call answer each of its calls
        for i, m in enumerate(body):
            after = [p.get("tool_call_id") for p in body[i + 1:]] + [None]
            if missing := [c["id"] for c in m.get("tool_calls") or [] if c["id"] not in after[:after.index(None)]]:
                print(f"request #{n}: {json.dumps(body)}\nopenai says: " + "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: " + ", ".join(missing))
                return print(f"reproduced: unanswered_call: {', '.join(missing)} is sent without its result") or 1
    return print("not reproduced") or 0
if __name__ == "__main__":
    try: sys.exit(asyncio.run(main()))
    except Exception as exc: sys.exit(print(f"could not run: {type(exc).__name__}: {exc}") or 2)  # not the finding

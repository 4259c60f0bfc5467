"""AutoGen AgentChat: agent() of ../../examples/loops/autogen_token_limited.py, scenario class trim, violations orphaned_result, provider_rejection;
found by prunecheck 0.2.0, seed 1. Run from any directory: python <this file>; exit 0 = not reproduced, 1 = reproduced, 2 = could not run."""
import asyncio, collections, importlib.metadata, json, os, pathlib, sys
FOUND_ON = {"autogen-agentchat": "0.7.5", "autogen-core": "0.7.5", "autogen-ext": "0.7.5"}
for dist, found in FOUND_ON.items(): (HAVE := {d.metadata["Name"]: d.version for d in importlib.metadata.distributions()}).get(dist) == found or sys.exit(print(f"could not run: found on {dist} {found}, installed {dist} {HAVE[dist]}" if dist in HAVE else f"could not run: {dist} is not installed (found on {dist} {found})") or 2)  # exit 2 unless installed as found
sys.excepthook = lambda kind, error, _: (print(f"could not run: {kind.__name__}: {error}", flush=True), os._exit(2))  # any error: could not run (exit 2), never 1
from autogen_core import CancellationToken, FunctionCall, models, tools
from autogen_ext.models.replay import ReplayChatCompletionClient
requests, asked, done, outcome, ran, saved, dead = [], {}, collections.defaultdict(asyncio.Event), {}, {}, [], []
def chat(messages):  # AutoGen's messages in OpenAI Chat Completions form (as prunecheck shows them)
    out = []
    for m in messages:
        if m.type == "FunctionExecutionResultMessage":
            out += [{"role": "tool", "tool_call_id": r.call_id, "content": r.content} for r in m.content]
        elif m.type == "AssistantMessage" and isinstance(m.content, list):
            out.append({"role": "assistant", "content": m.thought, "tool_calls": [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}} for c in m.content]})
        else:
            out.append({"role": m.type.removesuffix("Message").lower(), "content": m.content})
    return out
class Model(ReplayChatCompletionClient):  # records each request; answers at the schedule's reply
    async def create(self, messages, *, cancellation_token=None, **kwargs):  # the agent's, or its context's (a summary)
        requests.append(chat(messages)); future = asked.setdefault(len(requests), asyncio.Future())
        await (cancellation_token.link_future(future) if cancellation_token else future)
        return await super().create(messages, **kwargs)
    async def create_stream(self, messages, **kwargs):  # a streaming agent (model_client_stream=True)
        yield await self.create(messages, **kwargs)
    def count_tokens(self, messages, *, tools=()):  # as prunecheck's model counts: 4 characters a token
        return len(json.dumps(chat(messages)) + json.dumps(list(tools))) // 4
model = Model([], model_info={"vision": False, "function_calling": True, "json_output": False, "family": "unknown", "structured_output": False})
async def step(*_):  # after each step: let AutoGen run until it waits on the model or a tool
    for _ in range(500): await asyncio.sleep(0)
def answer(text, *calls):  # the model answers the oldest open request: text, or tool calls
    model.chat_completions.append(models.CreateResult(finish_reason="function_calls", content=list(calls), thought=text or None, usage=models.RequestUsage(prompt_tokens=0, completion_tokens=0), cached=False) if calls else text)
    next(f for f in asked.values() if not f.done()).set_result(None)
async def tool_body(tool, args, cancellation_token, call_id=None):  # every tool waits for the schedule
    await done[call_id].wait()
    if isinstance(outcome[call_id], Exception): raise outcome[call_id]
    return outcome[call_id]
def finish(call_id, result):  # the tool of call_id returns result (or raises it)
    outcome[call_id] = result; done[call_id].set()
def start(agent, task=None):  # a turn of the app: agent.run, then it saves the agent's state
    global running, token
    async def turn():
        try: await agent.run(task=task, cancellation_token=token)
        except Exception as exc: return print(f"(the turn raised {type(exc).__name__}: {exc})")
        saved.append(json.dumps(await agent.save_state()))
    running, token = asyncio.create_task(turn()), CancellationToken()
async def main():
    module, name = (sys.argv[1:] or ['autogen_token_limited:agent'])[0].split(':')  # the user's agent; another: its MODULE:NAME as argument
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / '../../examples/loops'))  # the user's module
    agent = getattr(importlib.import_module(module), name)(model_client=model)  # its model context kept
    tools.BaseTool.run_json = tool_body  # the tools keep their names and schemas; their bodies are fakes
    await step(start(agent, 'user message 1'))
    await step(answer('answer 2'))
    await step(start(agent, 'user message 3'))
    await step(answer('', FunctionCall(id='call_1', name='send_email', arguments='{"body": "body-1", "to": "to-1"}'), FunctionCall(id='call_2', name='search', arguments='{"query": "query-2"}')))
    await step(finish('call_1', 'send_email result for call_1 lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum'))
    await step(finish('call_2', 'search result for call_2 lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum lorem ipsum'))
    await step(answer('', FunctionCall(id='call_3', name='search', arguments='{"query": "query-3"}')))
    await step(start(agent, 'user message 8'))
    for n, body in enumerate(requests, 1):  # OpenAI: a tool message answers the assistant message before it
        for i, m in enumerate(body):
            calls = next((p.get("tool_calls") or [] for p in body[i::-1] if p["role"] != "tool"), [])  # of the message before
            if m["role"] == "tool" and m["tool_call_id"] not in [c["id"] for c in calls]:
                print(f"request #{n}: {json.dumps(body)}\nopenai says: " + "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.")
                return print(f"reproduced: orphaned_result: the result of {m['tool_call_id']} is sent without its call") or 1
    return print("not reproduced") or 0
if __name__ == "__main__": sys.exit(asyncio.run(main()))  # an error escaping is "could not run" (the excepthook), exit 2

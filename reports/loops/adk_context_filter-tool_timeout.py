"""Google ADK: app of ../../examples/loops/adk_context_filter.py (or adk_context_filter:invocations, given as its argument), scenario class tool_timeout, violations silent_loss;
found by prunecheck 0.2.0, seed 1. Run from any directory: python <this file>; exit 0 = not reproduced, 1 = reproduced, 2 = could not run."""
import asyncio, collections, copy, importlib, importlib.metadata, json, os, pathlib, sys, tempfile, warnings
FOUND_ON = {"google-adk": "2.13.0"}
for dist, found in FOUND_ON.items(): (HAVE := {d.metadata["Name"]: d.version for d in importlib.metadata.distributions()}).get(dist) == found or sys.exit(print(f"could not run: found on {dist} {found}, installed {dist} {HAVE[dist]}" if dist in HAVE else f"could not run: {dist} is not installed (found on {dist} {found})") or 2)  # exit 2 unless installed as found
sys.excepthook = lambda kind, error, _: (print(f"could not run: {kind.__name__}: {error}", flush=True), os._exit(2))  # any error: could not run (exit 2), never 1
warnings.simplefilter("ignore"); from google.adk.apps.app import App; from google.adk.apps.llm_event_summarizer import LlmEventSummarizer; from google.adk.runners import Runner
from google.adk.models.base_llm import BaseLlm; from google.adk.models.llm_response import LlmResponse; from google.genai import types
from google.adk.sessions import DatabaseSessionService, InMemorySessionService; from google.adk.tools import BaseTool, FunctionTool
requests, asked, done, outcome, ran, runs = [], [], collections.defaultdict(asyncio.Event), {}, {}, collections.Counter()
def chat(contents, system):  # ADK's contents in OpenAI Chat Completions form (as prunecheck shows them)
    out = [{"role": "system", "content": system}] if system else []
    for c in contents:
        parts = c.parts or []; text = "".join(p.text for p in parts if p.text and not p.thought); results = [p.function_response for p in parts if p.function_response]
        calls = [{"id": p.function_call.id, "type": "function", "function": {"name": p.function_call.name, "arguments": json.dumps(p.function_call.args or {}, sort_keys=True)}} for p in parts if p.function_call]
        if c.role == "model": out.append({"role": "assistant", "content": text or None, **({"tool_calls": calls} if calls else {})}); continue
        out += [{"role": "tool", "tool_call_id": r.id, "content": r.response["result"] if set(r.response) == {"result"} and isinstance(r.response["result"], str) else json.dumps(r.response, sort_keys=True)} for r in results]
        if text or not results: out.append({"role": "user", "content": text})
    return out
class Scripted(BaseLlm):  # ADK's model interface: each request recorded, answered at the schedule's reply
    async def generate_content_async(self, llm_request, stream=False):
        body = {"messages": chat(llm_request.contents, llm_request.config.system_instruction), "tools": [{"type": "function", "function": {"name": d.name, "description": d.description or "", "parameters": d.parameters_json_schema}} for t in llm_request.config.tools or [] for d in t.function_declarations or []]}
        usage = types.GenerateContentResponseUsageMetadata(prompt_token_count=len(json.dumps(body)) // 4)  # as prunecheck counts
        if self.model == "summarizer": text, calls = "Summary: the conversation so far, its tool calls and their results.", ()  # the compaction's summary
        else: requests.append(body["messages"]); asked.append(asyncio.get_running_loop().create_future()); text, calls = await asked[-1]
        parts = ([types.Part(text=text)] if text or not calls else []) + [types.Part(function_call=types.FunctionCall(id=i, name=n, args=json.loads(a))) for i, n, a in calls]
        yield LlmResponse(content=types.Content(role="model", parts=parts), usage_metadata=usage)
class Fake(BaseTool):  # the user's tool keeps its name and declaration; its body waits for the schedule
    def __init__(self, tool): self.decl = (tool if isinstance(tool, BaseTool) else FunctionTool(tool))._get_declaration(); super().__init__(name=self.decl.name, description=self.decl.description or "")
    def _get_declaration(self): return self.decl
    async def run_async(self, *, args, tool_context):
        call_id = tool_context.function_call_id; await done[call_id].wait(); ran[call_id] = self.name; runs[call_id] += not isinstance(outcome[call_id], Exception)
        if isinstance(outcome[call_id], Exception): raise outcome[call_id]
        return outcome[call_id]
def build(user):  # a new process: the user's configuration on the scripted model and fake tools
    app = getattr(user, "app", None) or (user if isinstance(user, App) else None)
    agent, config = (app.root_agent if app else getattr(user, "agent", user)), app and app.events_compaction_config
    config = config.model_copy(update={"summarizer": LlmEventSummarizer(llm=Scripted(model="summarizer"), prompt_template=getattr(config.summarizer, "_prompt_template", None))}) if config and (config.summarizer is None or isinstance(config.summarizer, LlmEventSummarizer)) else config  # the default summarizer, on the double
    clone = agent.clone(update={"model": Scripted(model="scripted"), "tools": [Fake(t) for t in agent.tools]})
    app = App(name=app.name if app else agent.name, root_agent=clone, plugins=[copy.copy(p) for p in app.plugins] if app else [], events_compaction_config=config, resumability_config=app and app.resumability_config)
    return Runner(app=app, session_service=InMemorySessionService(), auto_create_session=True)
async def step(*_): [await asyncio.sleep(0) for _ in range(500)]  # after each step: let ADK run until it waits on the model or a tool
def answer(text, *calls): next(f for f in asked if not f.done()).set_result((text, calls))  # the model answers the oldest open request
def finish(call_id, result): outcome[call_id] = result; done[call_id].set()  # the tool of call_id returns result (or raises it)
def start(runner, text=None, invocation=None):  # a turn of the app: run_async on its one session
    global running, abort; abort, message = asyncio.Event(), text and types.Content(role="user", parts=[types.Part(text=text)])
    async def turn():
        try: [_ async for _ in runner.run_async(user_id="user", session_id="s", new_message=message, invocation_id=invocation, abort_signal=abort)]
        except Exception as exc: print(f"(the turn raised {type(exc).__name__}: {exc})")
    running = asyncio.create_task(turn())
async def main():
    module, name = (sys.argv[1:] or ['adk_context_filter:app'])[0].split(':')  # the user's agent; another: its MODULE:NAME as argument
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / '../../examples/loops'))  # the user's module
    user = getattr(importlib.import_module(module), name)  # the user's agent
    runner = build(user)
    await step(start(runner, 'user message 1'))
    await step(answer('', ('call_1', 'send_email', '{"body": "body-1", "to": "to-1"}')))
    await step(finish('call_1', RuntimeError('send_email failed for call_1')))
    await step(start(runner, 'user message 4'))
    for call_id, name in ran.items():  # a tool that ran, and what the last request tells the model
        if call_id not in {m.get("tool_call_id") for m in requests[-1]}:
            return print(f"request #{len(requests)}: {json.dumps(requests[-1])}\nreproduced: silent_loss: {name} ran for {call_id}; request #{len(requests)} does not say so") or 1
    return print("not reproduced") or 0
if __name__ == "__main__": sys.exit(asyncio.run(main()))  # an error escaping is "could not run" (the excepthook), exit 2

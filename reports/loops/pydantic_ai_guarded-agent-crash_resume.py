"""pydantic-ai: a tool call that already ran runs again (duplicated_side_effect).
Agent `agent` of ../../examples/loops/pydantic_ai_guarded.py (relative to this file), scenario
class crash_resume, found by prunecheck 0.2.0, seed 1. Run from any directory: python <this file>.
Exit status: 0 = not reproduced, 1 = reproduced, 2 = could not run."""
import asyncio, os, sys
from importlib.metadata import distributions
from pathlib import Path
FOUND_ON = {"pydantic-ai-slim": "2.68.0"}
HAVE = {d.metadata["Name"]: d.version for d in distributions()}
for dist, found in FOUND_ON.items():  # exit 2 unless installed as found
    HAVE.get(dist) == found or sys.exit(print(f"could not run: found on {dist} {found}, installed {dist} {HAVE[dist]}" if dist in HAVE else f"could not run: {dist} is not installed (found on {dist} {found})") or 2)
sys.excepthook = lambda kind, error, _: (print(f"could not run: {kind.__name__}: {error}", flush=True), os._exit(2))  # any error: could not run (exit 2), never 1
from pydantic_ai.messages import ModelMessagesTypeAdapter as Saved, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.toolsets import WrapperToolset
waiting, tasks, done, outputs, ran = [], [], {}, {}, []
saves = [b"[]"]  # the app's store: all_messages() as JSON after every node; a crash keeps the last
async def model(messages, info):  # pydantic-ai's test model: each request waits for the script's reply
    waiting.append(asyncio.Future())
    return await waiting[-1]
class FakeTools(WrapperToolset):  # the agent's tools, names and schemas kept
    async def call_tool(self, name, args, ctx, tool):  # its body waits for the script
        done[ctx.tool_call_id] = asyncio.Event()
        await done[ctx.tool_call_id].wait()
        ran.append(ctx.tool_call_id)  # its side effect happened
        return outputs[ctx.tool_call_id]
async def turn(agent, prompt):  # one run of the agent (prompt None: it continues)
    fakes = [FakeTools(t) for t in agent.toolsets]
    with agent.override(model=FunctionModel(model), tools=[], toolsets=fakes):
        try:
            async with agent.iter(prompt, message_history=Saved.validate_json(saves[-1]) or None) as run:
                async for _node in run:
                    saves.append(Saved.dump_json(run.all_messages()))
        except Exception as exc: print(f"the run raised {exc!r}")  # the turn's outcome
async def settle():  # after each step the agent runs until it waits for the model or a tool
    for _ in range(1000): await asyncio.sleep(0)  # (about 40 are enough today)
async def start(agent, prompt):  # a run of the agent, until it waits
    tasks.append(asyncio.create_task(turn(agent, prompt)))
    await settle()
async def main():
    sys.path.insert(0, str(Path(__file__).resolve().parent / "../../examples/loops"))
    from pydantic_ai_guarded import agent as build
    agent = build()
    await start(agent, "user message 1")  # 1. the user's message
    waiting.pop().set_result(ModelResponse([ToolCallPart("read_file", '{"path": "path-1"}', tool_call_id="call_1")])); await settle()  # 2.
    outputs["call_1"] = "read_file result for call_1 lorem ipsum"; done["call_1"].set(); await settle()  # 3.
    agent = build()  # 4. crash: the run is abandoned where it waits (never resumed); a new process starts from the last save
    await start(agent, None)  # 5. resume the saved run
    outputs["call_1"] = "read_file result for call_1 lorem ipsum"; done["call_1"].set(); await settle()  # 6.
    if ran.count("call_1") > 1:  # its body returned, and ran again
        return "duplicated_side_effect: the tool body of call_1 ran twice"
finding = asyncio.run(main())  # an error escaping is "could not run" (the excepthook), exit 2
sys.exit(print(f"reproduced: {finding}" if finding else "not reproduced") or (1 if finding else 0))

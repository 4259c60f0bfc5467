"""The Google ADK reproduction: a short standalone script of one schedule.

:func:`script_text` writes what a framework maintainer can paste into an
issue: a script on ADK's public API alone (``BaseLlm``, ``BaseTool``,
``FunctionTool``, ``App``, ``Runner``, the session services,
``LlmEventSummarizer``).  It checks the installed ``google-adk`` against the
release the failure was found on (exit 2 naming both), imports the user's
agent, App or Runner (or factory) by its path relative to the script (or by
module name), and builds the Runner as :class:`~.adk.AdkAdapter` does: the
root agent cloned onto a scripted ``BaseLlm`` whose replies are given at the
schedule's steps (each request recorded in OpenAI Chat Completions form,
its prompt token count counted as the harness counts), tools of the same
declarations whose bodies wait on an ``asyncio.Event`` per call, the App's
plugins, compaction (the default summarizer on a double answering a short
summary) and resumability, and its session service (a durable one:
``DatabaseSessionService`` on SQLite in a temporary folder, aiosqlite's calls
run at once as prunecheck runs them).  Then it plays the schedule as plain
code, one line a step: a turn is ``runner.run_async``; a cancel sets the
run's ``abort_signal``; a crash drops the runner and its pending work, and a
new runner reads the session back; a resume is ``run_async(invocation_id=...)``
of the session's last invocation.

It checks only what its schedule showed (the schedule's ``expect``; every
check when it has none), as the Strands script does.  Its last line is
``reproduced: KIND: detail`` (exit 1) or ``not reproduced`` (exit 0).
"""

# ruff: noqa: E501  (the templates are the script's own lines, long where a reader wants them whole)

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from string import Template
from typing import Any

from ._common import SCRIPT_EXCEPTHOOK, VERSION_GATE, also_shown
from .autogen_repro import said
from .strands_repro import HANG_SECONDS, _load

#: Gemini's answer to a function call turn after a model turn (the judge's rule
#: ``gemini.call_out_of_place``, :mod:`prunecheck.model.provider.gemini`).
_GEMINI_CALL_TURN = (
    "Please ensure that function call turn comes immediately after a user turn or after a "
    "function response turn."
)

__all__ = ["script_text", "step_lines"]

_HEAD = Template('''\
"""Google ADK: $agent, scenario class $scenario, violations $kinds;
found by prunecheck $version, seed $seed. Run from any directory: python <this file>; exit 0 = not reproduced, 1 = reproduced, 2 = could not run."""
import asyncio, collections, copy, importlib, importlib.metadata, json, os, pathlib, sys, tempfile, warnings
FOUND_ON = $found_on
$gate
$excepthook
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
        if self.model == "summarizer": text, calls = "$summary", ()  # the compaction's summary
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
    return Runner(app=app, session_service=$service, auto_create_session=True)
${inline}${resume}\
async def step(*_): [await asyncio.sleep(0) for _ in range(500)]  # after each step: let ADK run until it waits on the model or a tool
def answer(text, *calls): next(f for f in asked if not f.done()).set_result((text, calls))  # the model answers the oldest open request
def finish(call_id, result): outcome[call_id] = result; done[call_id].set()  # the tool of call_id returns result (or raises it)
def start(runner, text=None, invocation=None):  # a turn of the app: run_async on its one session
    global running, abort; abort, message = asyncio.Event(), text and types.Content(role="user", parts=[types.Part(text=text)])
    async def turn():
        try: [_ async for _ in runner.run_async(user_id="user", session_id="s", new_message=message, invocation_id=invocation, abort_signal=abort)]
        except Exception as exc: print(f"(the turn raised {type(exc).__name__}: {exc})")
    running = asyncio.create_task(turn())
''')

#: A durable session service's lines: a temporary database, aiosqlite run inline.
_INLINE = """\
import aiosqlite.core as aq; DB = "sqlite+aiosqlite:///" + os.path.join(tempfile.mkdtemp(prefix="adk-repro-"), "sessions.db")  # aiosqlite's calls run at once, in order (as prunecheck runs them)
async def _execute(self, fn, *args, **kwargs): return fn(*args, **kwargs)
async def _connect(self): self._connection = self._connection or self._connector(); return self
aq.Connection._execute, aq.Connection._connect, aq.Connection.__await__, aq.Connection.stop = _execute, _connect, lambda self: _connect(self).__await__(), lambda self: None
"""

#: A resume's helper: the session's last invocation.
_RESUME = """\
async def last_invocation(runner):  # the session's last invocation (what a resume continues)
    session = await runner.session_service.get_session(app_name=runner.app_name, user_id="user", session_id="s")
    return next(e.invocation_id for e in reversed(session.events) if e.invocation_id)
"""

_ORPHAN_CHECK = Template("""\
    for n, body in enumerate(requests, 1):  # OpenAI: a tool message answers the assistant message before it
        for i, m in enumerate(body):
            if m["role"] == "tool" and m["tool_call_id"] not in [c["id"] for c in next((p.get("tool_calls") or [] for p in body[i::-1] if p["role"] != "tool"), [])]:
                return print(f"request #{n}: {json.dumps(body)}\\n$who says: " + $text$tail + f"\\nreproduced: orphaned_result: the result of {m['tool_call_id']} is sent without its call") or 1
""")

_UNANSWERED_CHECK = Template("""\
    for n, body in enumerate(requests, 1):  # OpenAI: the tool messages after a call answer each of its calls
        for i, m in enumerate(body):
            after = [p.get("tool_call_id") for p in body[i + 1:]] + [None]
            if missing := [c["id"] for c in m.get("tool_calls") or [] if c["id"] not in after[:after.index(None)]]:
                return print(f"request #{n}: {json.dumps(body)}\\n$who says: " + $text$tail + f"\\nreproduced: unanswered_call: {', '.join(missing)} is sent without its result") or 1
""")

_GEMINI_CHECK = Template("""\
    for n, body in enumerate(requests, 1):  # Gemini: a function call turn comes right after a user turn or a function response turn
        if bad := [m for i, m in enumerate(body) if m.get("tool_calls") and [p["role"] for p in body[:i] if p["role"] != "system"][-1:] in ([], ["assistant"])]:
            return print(f"request #{n}: {json.dumps(body)}\\ngemini says: " + $text + f"\\nreproduced: provider_rejection: the function call turn of {bad[0]['tool_calls'][0]['id']} follows no user or function response turn") or 1
""")

_RESULT_CHECK = """\
    for n, body in enumerate(requests, 1):  # the result the model is shown, against what the tool returned
        for m in body:
            if m["role"] == "tool" and isinstance(result := outcome.get(m["tool_call_id"]), str) and result not in m["content"]:
                return print(f"request #{n}: {json.dumps(body)}\\nreproduced: {KIND}: the tool of {m['tool_call_id']} returned {result!r}; the model is shown {m['content']!r}") or 1
"""

_TWICE_CHECK = """\
    if twice := [call_id for call_id, n in runs.items() if n > 1]:  # a tool body that ran to its end twice
        return print(f"reproduced: duplicated_side_effect: the tool body of {twice[0]} ran twice") or 1
"""

_LOSS_CHECK = """\
    for call_id, name in ran.items():  # a tool that ran, and what the last request tells the model
        if call_id not in {m.get("tool_call_id") for m in requests[-1]}:
            return print(f"request #{len(requests)}: {json.dumps(requests[-1])}\\nreproduced: silent_loss: {name} ran for {call_id}; request #{len(requests)} does not say so") or 1
"""

_MAIN = Template("""\
async def main():
$load
$steps
$checks\
    return print("not reproduced") or 0
if __name__ == "__main__": sys.exit(asyncio.run(main()))  # an error escaping is "could not run" (the excepthook), exit 2
""")


def _found_on() -> str:
    try:
        return json.dumps({"google-adk": version("google-adk")})
    except PackageNotFoundError:
        return "{}"


def _call(call: Mapping[str, Any]) -> str:
    return repr((call["id"], call["name"], call["arguments"]))


def step_lines(step: Mapping[str, Any]) -> list[str]:
    """The script's lines (inside ``main``) playing one schedule step."""
    kind = step["kind"]
    if kind in ("user", "new_message"):
        return [f"    await step(start(runner, {step['text']!r}))"]
    if kind == "resume":
        return [
            "    await step(start(runner, None, await last_invocation(runner)))  # resume: run_async(invocation_id=...)"
        ]
    if kind == "reply":
        calls = "".join(f", {_call(c)}" for c in step.get("calls") or ())
        return [f"    await step(answer({step.get('text', '')!r}{calls}))"]
    if kind == "complete":
        return [f"    await step(finish({step['call']!r}, {step['output']!r}))"]
    if kind == "fail":
        error = step.get("error", "tool failed")
        return [f"    await step(finish({step['call']!r}, RuntimeError({error!r})))"]
    if kind == "timeout":
        text = f"the tool of {step['call']} timed out"
        return [f"    await step(finish({step['call']!r}, TimeoutError({text!r})))"]
    if kind == "advance":
        return [f"    await step(await asyncio.sleep({float(step['seconds'])!r}))"]
    if kind == "cancel":
        return [
            "    abort.set()  # ADK's cancel of the running turn: its abort_signal",
            f"    if not (await asyncio.wait([running], timeout={HANG_SECONDS}))[0]: "
            f'return print("reproduced: hang: the turn did not return {HANG_SECONDS} s after the abort") or 1',
        ]
    if kind == "crash":
        return [
            "    asked.clear(), done.clear()  # a crash: the process's model call and tools never return",
            "    runner = build(user)  # a new process builds the runner: ADK reads the session back",
        ]
    raise ValueError(f"the ADK adapter drives no {kind!r} step")


def script_text(
    target_spec: str,
    schedule_json: str,
    *,
    folder: Path | None = None,
    factory: bool = False,
    durable: bool = False,
    gemini: bool = False,
    says: Mapping[str, tuple[str, str]] | None = None,
) -> str:
    """The standalone script replaying ``schedule_json`` on ``target_spec``.

    Parameters
    ----------
    target_spec : str
        ``path/to/file.py:attr`` or ``package.module:attr`` (an ADK agent, App or
        Runner, or a function of no argument building one).
    schedule_json : str
        The schedule (:func:`prunecheck.sim.subjects.loops.steps.schedule_to_json`); its
        ``expect`` (the violation kinds) chooses the script's checks.
    folder : Path or None
        Where the script will be written: it imports the user's file by its
        path relative to there (None: by its absolute path).
    factory : bool
        Whether ``attr`` is a factory (called) rather than the agent.
    durable : bool
        Whether the session service is durable (a database in a temporary folder).
    gemini : bool
        Whether the agent's model is a Gemini model: a provider rejection is
        then checked by Gemini's function-turn rule too, with its text.
    says : Mapping or None
        What the provider that judged the schedule answered
        (:func:`._common.provider_says`): the script prints its text; None:
        OpenAI Chat Completions'.
    """
    from .adk_doubles import SUMMARY

    schedule = json.loads(schedule_json)
    steps: Sequence[Mapping[str, Any]] = schedule["steps"]
    expect = set(schedule.get("expect") or ())
    load, agent = _load(target_spec, folder, factory=factory)
    load = load.replace("    agent = build(user)", "    runner = build(user)")
    head = _HEAD.substitute(
        gate=VERSION_GATE,
        excepthook=SCRIPT_EXCEPTHOOK,
        agent=agent + also_shown(schedule),
        scenario=schedule.get("scenario", "(none)"),
        kinds=", ".join(sorted(expect)) or "(not given)",
        version=version("prunecheck"),
        seed=schedule.get("seed", 0),
        found_on=_found_on(),
        summary=SUMMARY,
        service="DatabaseSessionService(db_url=DB)" if durable else "InMemorySessionService()",
        inline=_INLINE if durable else "",
        resume=_RESUME if any(s["kind"] == "resume" for s in steps) else "",
    )
    every = not expect
    checks: list[str] = []
    # a provider rejection is checked by the pairing rule its kinds name (both if none)
    pairing = expect & {"orphaned_result", "unanswered_call"}
    if not pairing and (every or "provider_rejection" in expect):
        # a rejection of no pairing kind: for a Gemini agent, Gemini's turn rule
        # and OpenAI's (a tool message after the assistant message it answers)
        pairing = {"orphaned_result"} if gemini else {"orphaned_result", "unanswered_call"}
    if gemini and (every or "provider_rejection" in expect):
        checks.append(_GEMINI_CHECK.substitute(text=repr(_GEMINI_CALL_TURN)))
    if "orphaned_result" in pairing:
        checks.append(_ORPHAN_CHECK.substitute(said(says, "result_without_call")))
    if "unanswered_call" in pairing:
        checks.append(_UNANSWERED_CHECK.substitute(said(says, "call_without_result")))
    for kind in ("synthesized_result", "truncated_payload"):
        if every or kind in expect:
            checks.append(_RESULT_CHECK.replace("{KIND}", kind))
    if every or "duplicated_side_effect" in expect:
        checks.append(_TWICE_CHECK)
    if every or "silent_loss" in expect:
        checks.append(_LOSS_CHECK)
    body = "\n".join(line for step in steps for line in step_lines(step))
    return head + _MAIN.substitute(load=load, steps=body, checks="".join(checks))

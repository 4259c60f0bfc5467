"""The Microsoft Agent Framework reproduction: a short standalone script of one schedule.

:func:`script_text` writes what a framework maintainer can paste into an
issue: a script on the framework's public API alone.  It checks the
installed ``agent-framework-core`` against the release the failure was found
on (exit 2 naming both), imports the user's agent (or factory) by its path
relative to the script (or by module name), and builds the agent as
:class:`~.maf.MAFAdapter` does: its instructions, options, tools, context
providers (a ``FileHistoryProvider`` of the same options in a temporary
folder), middleware, compaction strategies and tokenizer, on a scripted chat
client of the framework's own layers (``FunctionInvocationLayer``,
``ChatMiddlewareLayer`` over ``BaseChatClient``) whose replies are given at
the schedule's steps, each request recorded in OpenAI Chat Completions form;
every tool's function waits on an ``asyncio.Event`` per call.  Then it plays
the schedule as plain code, one line a step: a turn is ``agent.run(text,
session=session)``; a cancel is the turn's ``task.cancel()``; a crash drops
the agent and its pending work, and a new agent opens a session of the same
id (its history file is what survived).

It checks only what its schedule showed (the schedule's ``expect``; every
check when it has none): OpenAI's pairing rules with their exact texts, a
result that is not what its tool returned, a tool that ran twice, a tool
that ran and that the last request no longer shows.  Its last line is
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
from .autogen_repro import orphan_check, unanswered_check
from .strands_repro import _LOSS_CHECK, _RESULT_CHECK, _TWICE_CHECK, _load

__all__ = ["script_text", "step_lines"]

_HEAD = Template('''\
"""Microsoft Agent Framework: $agent, scenario class $scenario, violations $kinds;
found by prunecheck $version, seed $seed. Run from any directory: python <this file>; exit 0 = not reproduced, 1 = reproduced, 2 = could not run."""
import asyncio, collections, contextvars, copy, importlib, importlib.metadata, json, os, pathlib, sys, tempfile
FOUND_ON = $found_on
$gate
$excepthook
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
''')

_SUMMARY = Template("""\
class Summary(BaseChatClient):  # the summarizer's own client: a fixed summary (as prunecheck answers it)
    async def _inner_get_response(self, **_): return ChatResponse(messages=[Message(role="assistant", contents=[$summary])])
def summarize(user):  # the user's summarization strategies ask Summary
    for s in [user.compaction_strategy, user.client.compaction_strategy, *(getattr(p, n, None) for p in user.context_providers for n in ("before_strategy", "after_strategy"))]:
        for s in [s, *getattr(s, "strategies", [])]:
            if hasattr(s, "client"): s.client = Summary()
""")

_APPROVE = """\
decided = {}
def approve(agent, session, call_id, ok):  # the app answers the run's approval requests once each is decided
    decided[call_id] = ok; pending = [r for r in results[-1].user_input_requests if r.type == "function_approval_request"]
    if all(r.function_call.call_id in decided for r in pending): start(agent, session, Message(role="user", contents=[r.to_function_approval_response(decided.pop(r.function_call.call_id)) for r in pending]))
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
        return json.dumps({"agent-framework-core": version("agent-framework-core")})
    except PackageNotFoundError:
        return "{}"


def _call(call: Mapping[str, Any]) -> str:
    return repr((call["id"], call["name"], call["arguments"]))


def step_lines(step: Mapping[str, Any]) -> list[str]:
    """The script's lines (inside ``main``) playing one schedule step."""
    kind = step["kind"]
    if kind in ("user", "new_message"):
        return [f"    await step(start(agent, session, {step['text']!r}))"]
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
    if kind == "approve":
        return [
            f"    await step(approve(agent, session, {step['call']!r}, {bool(step.get('approved', True))!r}))"
        ]
    if kind == "cancel":
        return ["    await step(running.cancel())  # the framework's cancel: the run's task"]
    if kind == "crash":
        return [
            "    asked.clear(); done.clear(); agent, session = build(user)  # a crash: the model call and tools "
            "never return; a new process opens the same session id (its history file)"
        ]
    raise ValueError(f"the Agent Framework adapter drives no {kind!r} step")


def script_text(
    target_spec: str,
    schedule_json: str,
    *,
    folder: Path | None = None,
    factory: bool = False,
    summarizer: bool = False,
    says: Mapping[str, tuple[str, str]] | None = None,
) -> str:
    """The standalone script replaying ``schedule_json`` on ``target_spec``.

    Parameters
    ----------
    target_spec : str
        ``path/to/file.py:attr`` or ``package.module:attr`` (an Agent
        Framework ``Agent`` or a function of no argument building one).
    schedule_json : str
        The schedule (:func:`prunecheck.sim.subjects.loops.steps.schedule_to_json`); its
        ``expect`` (the violation kinds) chooses the script's checks.
    folder : Path or None
        Where the script will be written: it imports the user's file by its
        path relative to there (None: by its absolute path).
    factory : bool
        Whether ``attr`` is a factory (called) rather than the agent.
    summarizer : bool
        Whether the agent summarizes (a ``SummarizationStrategy``): its client
        answers a fixed summary, as the harness's does.
    says : Mapping or None
        What the provider that judged the schedule answered
        (:func:`._common.provider_says`): the script prints its text; None:
        OpenAI Chat Completions'.
    """
    from .maf_doubles import SUMMARY

    schedule = json.loads(schedule_json)
    steps: Sequence[Mapping[str, Any]] = schedule["steps"]
    expect = set(schedule.get("expect") or ())
    load, agent = _load(target_spec, folder, factory=factory)
    build = "    summarize(user)\n    agent, session = build(user)" if summarizer else (
        "    agent, session = build(user)")  # fmt: skip
    load = load.replace("    agent = build(user)", build)
    head = _HEAD.substitute(
        gate=VERSION_GATE,
        excepthook=SCRIPT_EXCEPTHOOK,
        agent=agent + also_shown(schedule),
        scenario=schedule.get("scenario", "(none)"),
        kinds=", ".join(sorted(expect)) or "(not given)",
        version=version("prunecheck"),
        seed=schedule.get("seed", 0),
        found_on=_found_on(),
    ) + (_SUMMARY.substitute(summary=repr(SUMMARY)) if summarizer else "")
    if any(step["kind"] == "approve" for step in steps):
        head += _APPROVE
    every = not expect
    checks: list[str] = []
    pairing = every or not expect & {"orphaned_result", "unanswered_call"}  # a rejection alone
    if "orphaned_result" in expect or (pairing and "provider_rejection" in expect) or every:
        checks.append(orphan_check(says))
    if "unanswered_call" in expect or (pairing and "provider_rejection" in expect) or every:
        checks.append(unanswered_check(says))
    for kind in ("synthesized_result", "truncated_payload"):
        if every or kind in expect:
            checks.append(_RESULT_CHECK.replace("{KIND}", kind))
    if every or "duplicated_side_effect" in expect:
        checks.append(_TWICE_CHECK)
    if every or "silent_loss" in expect:
        checks.append(_LOSS_CHECK)
    body = "\n".join(line for step in steps for line in step_lines(step))
    return head + _MAIN.substitute(load=load, steps=body, checks="".join(checks))

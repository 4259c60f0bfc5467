"""The OpenAI Agents SDK's short standalone reproductions (issue 30).

:func:`script_text` turns a schedule (:mod:`prunecheck.sim.subjects.loops.steps`) into
a script a maintainer of the SDK can paste into an issue: at most 80 lines, on
the SDK's public API alone (``Runner.run_streamed``, ``SQLiteSession``, the
``agents.testing.ScriptedModel``, the Chat Completions ``Converter``), the
user's module imported by its path relative to the script, the schedule as one
line per step.  What it keeps of the adapter
(:mod:`~prunecheck.sim.subjects.loops.frameworks.openai_agents`):

- the user's ``Agent`` and ``RunConfig`` (its input filter, session settings,
  the tools' names, schemas, approvals and timeouts), with ``RunConfig.model``
  a ``ScriptedModel`` whose every step awaits the schedule's next reply, and
  each ``FunctionTool``'s body a fake that waits on an ``asyncio.Event`` of its
  call and records that it ran;
- a ``SQLiteSession`` in a temporary folder, its ``to_thread`` work run at once
  on the loop (the adapter's inline executor), every step followed by a settle
  (``await asyncio.sleep(0)`` turns) so the SDK's tasks run as far as they can;
- cancel as ``RunResultStreaming.cancel(mode)``, a crash as a new agent, model
  and session on the same store (the old run is never woken again), a timeout
  as the loop's clock moved on, approvals through ``RunState``.

The script judges each request the model receives: OpenAI's pairing rules
(printing the request and OpenAI's 400 text) for a provider rejection; for a
silent loss, a call that ran and that neither the request nor the session
holds.  Only the judges of the bundle's violation kinds are written (both when
the schedule names none).
"""

from __future__ import annotations

import importlib.metadata
import json
import keyword
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from prunecheck.model.provider.openai_chat import CALL_UNANSWERED, RESULT_ORPHANED
from prunecheck.sim.subjects.policy_spec import split_reference

from ._common import SCRIPT_EXCEPTHOOK, VERSION_GATE, compact

__all__ = ["script_text"]

# ruff: noqa: E501 -- the templates are the script's own lines, whole as a maintainer reads them

#: What the script prints as OpenAI's 400 texts (DESIGN.md, "Facts").
TEXT_ORPHAN = RESULT_ORPHANED.template  # the rule (prunecheck.model.provider)
TEXT_UNANSWERED = CALL_UNANSWERED.template.removesuffix("{ids}")

_PROVIDER_KINDS = {"provider_rejection", "orphaned_result", "unanswered_call"}

_HEAD = """\
\"\"\"OpenAI Agents SDK (openai-agents {dist_version}): {kinds}, scenario class {scenario}, in the agent
`{attr}` of {where} (imported as written); found by prunecheck {version}, seed {seed}. main() plays the schedule,
one line a step. Run from any directory: python <this file>; exit 0 = not reproduced, 1 = reproduced, 2 = could not run.\"\"\"
import asyncio, collections, concurrent.futures, dataclasses, importlib.metadata, {imports}json, os, pathlib, sys, tempfile
FOUND_ON = {found_on}
{gate}
{excepthook}
from agents import {agents_names}
from agents.models.chatcmpl_converter import Converter
from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call
{tool_import}{user_import}
STORE, requests, ran, outputs, done, turns, results, findings = tempfile.TemporaryDirectory(), [], {{}}, {{}}, collections.defaultdict(asyncio.Event), [], [], []
class Inline(concurrent.futures.ThreadPoolExecutor):  # the session's to_thread work: at once, in order
    def submit(self, fn, /, *args, **kwargs):
        (future := concurrent.futures.Future()).set_result(fn(*args, **kwargs))
        return future
"""

_USER_PATH = """\
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / {folder}))
import {module} as user  # the user's agent, as written"""

_USER_FILE = """\
spec = importlib.util.spec_from_file_location("user", {path})
user = importlib.util.module_from_spec(spec)
spec.loader.exec_module(user)  # the user's agent, as written"""

_ANSWER = """\
async def answer(call):  # the provider: each request in Chat Completions form, judged, then its reply
    system = [{"role": "system", "content": call.system_instructions}] if call.system_instructions else []
    requests.append(messages := system + Converter.items_to_messages(call.input))
"""

_SAID = 'f"request #{len(requests)}: {json.dumps(messages, default=str)}\\n'

_ORPHAN = """\
    calls = []  # OpenAI's rule: a tool message answers a call of the last message before it that is not one
    for i, m in enumerate(messages):
        calls = calls if m["role"] == "tool" else [c["id"] for c in m.get("tool_calls") or ()]
        if m["role"] == "tool" and m["tool_call_id"] not in calls:
            findings.append(SAID{ORPHAN}\\nreproduced: provider_rejection: request #{len(requests)} "
                            f"sends the result of {m['tool_call_id']} (messages.{i}) without its call")
""".replace("SAID", _SAID)

_UNANSWERED = """\
    for i, m in enumerate(messages):  # OpenAI's rule: the tool messages right after a call answer it
        answered = {n["tool_call_id"] for n in itertools.takewhile(lambda n: n["role"] == "tool", messages[i + 1 :])}
        if missing := [c["id"] for c in m.get("tool_calls") or () if c["id"] not in answered]:
            findings.append(SAID{UNANSWERED}TAIL\\nreproduced: provider_rejection: "
                            f"request #{len(requests)} sends the call of {missing[0]} (messages.{i}) without its result")
""".replace("SAID", _SAID)

_LOST = """\
    told = {item.get("call_id") for item in await session.get_items()} | {m.get("tool_call_id") for m in messages}
    told |= {c["id"] for m in messages for c in m.get("tool_calls") or ()}
    for call_id in [c for c in ran if c not in told]:  # it ran; neither request nor session holds it (no trim removed it)
        findings.append(SAID{ran[call_id]} ran for {call_id}; neither this request nor the session holds its call or result\\n"
                        f"reproduced: silent_loss: {ran[call_id]} ran for {call_id} and the model is no longer told")
""".replace("SAID", _SAID)

_FAKE = """\
    return await replies.get()
def fake(tool):  # the user's tool, its body replaced: it returns when the schedule completes its call
    async def body(ctx, arguments):
        await done[ctx.tool_call_id].wait()
        ran[ctx.tool_call_id] = tool.name
        {tool_return}
    return dataclasses.replace(tool, on_invoke_tool={invoke})
"""

_PROCESS = """\
agent, config = {build}  # the user's, with fake tools, the scripted model and a session
agent = agent.clone(tools=[fake(t) if isinstance(t, FunctionTool) else t for t in agent.tools])
config = dataclasses.replace(config, model=ScriptedModel(ModelStep.respond(answer) for _ in range({requests})), tracing_disabled=True)
{session}
"""

_HELPERS = """\
async def settle():  # every task runs until all of them wait on the schedule
    for _ in range(200): await asyncio.sleep(0)
async def turn(given):  # one streamed run of the agent on the session, as an application runs it
    results.append(Runner.run_streamed(agent, given, session=session, run_config=config))
    async for _event in results[-1].stream_events(): pass
async def say(text):  # the user sends a message
    turns.append(asyncio.create_task(turn(text))); await settle()
"""

_STEPS = {
    "reply": """\
async def reply(*output):  # the model answers its pending request
    replies.put_nowait(list(output)); await settle()
""",
    "complete": """\
async def complete(call_id, output):  # the tool body of call_id returns (or raises)
    outputs[call_id] = output; done[call_id].set(); await settle()
""",
    "advance": """\
async def advance(seconds):  # the loop's clock moves on: the timers then due fire
    loop = asyncio.get_running_loop()
    loop.time = lambda clock=loop.time: clock() + seconds; await settle()
""",
    "cancel": """\
async def cancel():  # the application cancels the turn (the SDK's cancel) and waits 5 s for it at most
    results[-1].cancel({mode})
    if not (await asyncio.wait(turns[-1:], timeout=5))[0]:
        findings.append("the turn did not return 5 s after the cancel\\nreproduced: hang: the turn did not return")
    await settle()
""",
    "approve": """\
decisions = {}
async def approve(call_id, approved):  # a human answers; once every waiting call is answered, the run goes on
    decisions[call_id] = approved
    if all(item.raw_item.call_id in decisions for item in results[-1].interruptions):
        state = results[-1].to_state()
        for item in results[-1].interruptions:
            (state.approve if decisions.pop(item.raw_item.call_id) else state.reject)(item)
        turns.append(asyncio.create_task(turn(state)))
    await settle()
""",
}

_OPEN = """\
def open_agent():  # a process: the user's agent and run config, the scripted model, a session on the store
    global agent, config, session, replies
"""

_MAIN = """
async def main():
    asyncio.get_running_loop().set_default_executor(Inline())
"""

_TAIL = """\
    [task.result() for task in turns if task.done() and not task.cancelled()]  # a run that raised: the replay went wrong
asyncio.run(main())  # an error escaping is "could not run" (the excepthook), exit 2
sys.exit(print(findings[0] if findings else "not reproduced") or (1 if findings else 0))
"""

#: A step's kind → the helper it calls (``user`` and ``new_message`` use ``say``).
_HELPER = {"fail": "complete", "timeout": "complete"}

#: Module names a user's file must not be imported as (they would shadow these).
_TAKEN = frozenset({"agents", "openai", "user"})


def _where(target_spec: str, folder: Path | None) -> tuple[str, str, str]:
    """The user's module: (the lines importing it as ``user``, how the
    docstring names it, the attribute)."""
    where, attr = split_reference(target_spec)
    if not where.endswith(".py"):
        return f"import {where} as user  # the user's agent, as written", where, attr
    path = Path(where).resolve()
    try:
        rel = os.path.relpath(path, (folder or Path.cwd()).resolve()).replace(os.sep, "/")
    except ValueError:  # another drive: no relative path
        return _USER_FILE.format(path=_lit(path.as_posix())), path.name, attr
    stem = path.stem
    if (
        stem.isidentifier()
        and not keyword.iskeyword(stem)
        and stem not in _TAKEN | set(sys.stdlib_module_names)
    ):
        parent = os.path.dirname(rel) or "."
        return _USER_PATH.format(folder=_lit(parent), module=stem), rel, attr
    located = f"pathlib.Path(__file__).resolve().parent / {_lit(rel)}"
    return _USER_FILE.format(path=located), rel, attr


def _build(target_spec: str, attr: str) -> str:
    """How the script gets ``(agent, run_config)`` from the user's attribute."""
    from prunecheck.sim.subjects.user_code import find_object

    where = split_reference(target_spec)[0]
    name = "user." + attr if attr.isidentifier() else f"getattr(user, {attr!r})"
    found = find_object(where, attr, f"loop spec {target_spec!r}")
    if type(found).__module__.split(".")[0] == "agents":
        return f"{name}, RunConfig()"
    made = found() if callable(found) else found
    if isinstance(made, tuple) and len(made) > 1 and made[1] is not None:
        return f"{name}()[:2]" if len(made) > 2 else f"{name}()"
    if isinstance(made, tuple):
        return f"{name}()[0], RunConfig()"
    return f"{name}(), RunConfig()"


def _session(target_spec: str, attr: str) -> str:
    """How the script makes its session: the user's (``(agent, run_config, session)``
    from a factory) re-initialised on the store, as the harness runs it; else the SDK's."""
    from prunecheck.sim.subjects.user_code import find_object

    where = split_reference(target_spec)[0]
    found: Any = find_object(where, attr, f"loop spec {target_spec!r}")
    made = (
        found() if callable(found) and type(found).__module__.split(".")[0] != "agents" else found
    )
    parts = made[1:] if isinstance(made, tuple) else ()
    own = next((p for p in parts if hasattr(p, "get_items") and hasattr(p, "db_path")), None)
    default = (
        'session, replies = SQLiteSession("conversation", f"{STORE.name}/session.sqlite"), '
        "asyncio.Queue()"
    )
    if own is None or not hasattr(own, "db_path"):
        return default
    name = "user." + attr if attr.isidentifier() else f"getattr(user, {attr!r})"
    position = next(i for i, part in enumerate(made) if part is own)
    place = '":memory:"' if str(own.db_path) == ":memory:" else 'f"{STORE.name}/session.sqlite"'
    return (
        f"mine = {name}()[{position}]  # the app's own session: its class and settings\n"
        f"session = copy.copy(mine); SQLiteSession.__init__(session, mine.session_id, {place}, "
        "sessions_table=mine.sessions_table, messages_table=mine.messages_table, "
        "session_settings=mine.session_settings)  # on the store\n"
        "replies = asyncio.Queue()"
    )


def _lit(text: str) -> str:
    """``text`` as a Python literal, in double quotes unless it holds one.

    >>> print(_lit("hi"), _lit('{"path": "a"}'), _lit("it's"))
    "hi" '{"path": "a"}' "it's"
    """
    literal = repr(text)
    if literal.startswith("'") and '"' not in text:
        literal = '"' + literal[1:-1].replace("\\'", "'") + '"'
    return literal


def _call(call: dict[str, Any]) -> str:
    name, arguments, call_id = _lit(call["name"]), _lit(call["arguments"]), _lit(call["id"])
    return f"function_call({name}, {arguments}, call_id={call_id})"


def _step(step: dict[str, Any], replies: int) -> str:
    """The line(s) of ``main`` that play one step."""
    kind = step["kind"]
    if kind in ("user", "new_message"):
        return f"    await say({_lit(step['text'])})"
    if kind == "reply":
        calls = step.get("calls") or []
        items = [_call(c) for c in calls]
        if step.get("text") or not calls:
            items.insert(
                0, f'assistant_message({_lit(step.get("text", ""))}, item_id="msg_{replies}")'
            )
        return "    await reply(" + ",\n                ".join(items) + ")"
    if kind == "complete":
        return f"    await complete({_lit(step['call'])}, {_lit(step['output'])})"
    if kind in ("fail", "timeout"):
        error = step.get("error", "tool failed")
        raised = f"RuntimeError({_lit(error)})"
        if kind == "timeout":
            raised = f"TimeoutError({_lit('the tool of ' + step['call'] + ' timed out')})"
        return f"    await complete({_lit(step['call'])}, {raised})  # the tool raises"
    if kind == "advance":
        return f"    await advance({float(step['seconds'])!r})"
    if kind == "cancel":
        return "    await cancel()"
    if kind == "crash":
        return "    open_agent()  # the process dies; a new one opens the agent on the same store"
    if kind == "approve":
        return f"    await approve({_lit(step['call'])}, {bool(step.get('approved', True))!r})"
    raise ValueError(
        f"step {kind!r}: the OpenAI Agents SDK resumes only a RunState kept from an "
        "interruption; after a crash a schedule sends a new message (new_message)"
    )


def _judges(
    expect: set[str], says: Mapping[str, tuple[str, str]] | None = None
) -> tuple[str, str, str]:
    """(constants, judge lines, extra imports) for the violation kinds ``expect``;
    the texts those of the provider that judged the schedule (``says``,
    :func:`._common.provider_says`), else OpenAI Chat Completions'."""
    said = says or {}
    orphan = not expect or bool(expect & {"orphaned_result", "provider_rejection"})
    unanswered = not expect or "unanswered_call" in expect
    if "provider_rejection" in expect and "orphaned_result" not in expect:
        unanswered = True
    constants, lines, imports = "", "", ""
    if orphan:
        who, text = said.get("result_without_call", ("openai", TEXT_ORPHAN))
        constants += f"ORPHAN = {_lit(f'{who} says: {text}')}\n"
        lines += _ORPHAN
    if unanswered:
        who, text = said.get("call_without_result", ("openai", TEXT_UNANSWERED))
        constants += f"UNANSWERED = {_lit(f'{who} says: {text}')}\n"
        tail = "" if "call_without_result" in said else "{', '.join(missing)}"
        lines += _UNANSWERED.replace("TAIL", tail)
        imports = "itertools, "
    if not expect or "silent_loss" in expect:
        lines += _LOST
    return constants, lines, imports


def script_text(
    target_spec: str,
    schedule_json: str,
    *,
    folder: Path | None = None,
    cancel_mode: str = "immediate",
    says: Mapping[str, tuple[str, str]] | None = None,
) -> str:
    """The standalone script replaying ``schedule_json`` on ``target_spec``.

    Parameters
    ----------
    target_spec : str
        ``FILE.py:ATTR`` (a path absolute or relative to the working
        directory) or ``module:ATTR``: the agent, or its factory.
    schedule_json : str
        The schedule (:func:`prunecheck.sim.subjects.loops.steps.schedule_to_json`);
        its ``expect``, ``scenario`` and ``seed``, when present, choose the
        judges and fill the docstring.
    folder : Path or None
        Where the script will be written (the user's module is imported by
        its path relative to it); ``None``: the working directory.
    cancel_mode : str
        ``RunResultStreaming.cancel(mode=...)`` of a cancel step.
    says : Mapping or None
        What the provider that judged the schedule answered
        (:func:`._common.provider_says`): the script prints its text.

    Raises
    ------
    ValueError
        If a step is one the SDK cannot take (``resume``).
    """
    data = json.loads(schedule_json)
    steps: list[dict[str, Any]] = list(data["steps"])
    expect = set(data.get("expect") or ())
    user_import, where, attr = _where(target_spec, folder)
    kinds = {s["kind"] for s in steps}
    fails = bool(kinds & {"fail", "timeout"})
    names = ["FunctionTool", "RunConfig", "Runner", "SQLiteSession"]
    constants, judges, imports = _judges(expect, says)
    if "importlib.util" in user_import:
        imports += "importlib.util, "
    session = _session(target_spec, attr)
    if "copy.copy" in session:
        imports = "copy, " + imports
    dist_version = importlib.metadata.version("openai-agents")
    text = _HEAD.format(
        gate=VERSION_GATE,
        excepthook=SCRIPT_EXCEPTHOOK,
        dist_version=dist_version,
        scenario=data.get("scenario", "unnamed"),
        kinds=", ".join(sorted(expect)) or "the violations prunecheck found",
        version=importlib.metadata.version("prunecheck"),
        seed=data.get("seed", 0),
        attr=attr,
        where=where,
        imports=imports,
        found_on=json.dumps({"openai-agents": dist_version}),
        agents_names=", ".join(names),
        user_import=user_import,
        tool_import="from agents.tool import with_function_tool_failure_error_handler\n"
        if fails
        else "",
    )
    tool_return, invoke = "return outputs[ctx.tool_call_id]", "body"
    if fails:  # the tool's own failure handling (the user's, or the SDK's default) answers
        tool_return = (
            "out = outputs[ctx.tool_call_id]\n"
            "        if isinstance(out, Exception): raise out  # the tool's failure handling answers\n"
            "        return out"
        )
        invoke = "with_function_tool_failure_error_handler(body, lambda *_: None)"
    text += constants + _ANSWER + judges + _FAKE.format(tool_return=tool_return, invoke=invoke)
    process = _PROCESS.format(build=_build(target_spec, attr), requests=len(steps),
                              session=session)  # fmt: skip
    if "crash" in kinds:  # a crash opens the agent again: a function
        body = "".join("    " + line for line in process.splitlines(keepends=True))
        process = _OPEN + body + "open_agent()\n"
    text += process + _HELPERS
    used = {_HELPER.get(k, k) for k in kinds}
    mode = "" if cancel_mode == "immediate" else f"mode={_lit(cancel_mode)}"
    text += "".join(h.replace("{mode}", mode) for k, h in _STEPS.items() if k in used)
    text += _MAIN
    count = 0
    for step in steps:
        count += step["kind"] == "reply"
        text += _step(step, count) + "\n"
    return compact(text + _TAIL)

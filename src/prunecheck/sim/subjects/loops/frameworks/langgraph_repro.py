"""The standalone reproduction of a LangChain v1 / LangGraph schedule.

:func:`repro_script` writes the bug report a LangChain maintainer can paste
into an issue: one short script on LangChain's public API that

* checks, before importing anything of LangChain, that the versions it was
  found on are installed (``FOUND_ON``; exit 2 naming both otherwise);
* imports the user's factory from its folder, relative to the script (or by
  its module name), and builds the agent as the user wrote it on a
  ``GenericFakeChatModel`` that records each request in the OpenAI Chat
  Completions form (``langchain_core``'s ``convert_to_openai_messages``),
  judges it, and waits for the reply the schedule gives; each tool is
  replaced by a fake of the same name and schema whose call waits on an
  ``asyncio.Event`` (``done[call id]``) and then returns or raises
  ``results[call id]``;
* keeps the checkpointer's kind as :class:`~.langgraph.LangGraphAdapter`
  does: none (the app passes the conversation so far), the factory's own
  in-memory one, or a durable one, which becomes LangGraph's
  ``AsyncSqliteSaver`` on a file in a ``tempfile.TemporaryDirectory()``;
  a crash closes its connection (nothing more reaches the file), drops the
  turn, and builds the agent again on the same file;
* plays the schedule as plain code, one step after the other, each once the
  agent has settled (the turn has returned, or waits on the model or on a
  tool).  With a checkpointer the turns run with ``durability="sync"``:
  each step's checkpoint is on disk before the next step starts, which is
  the harness's settled state (with the default ``"async"`` a write may
  still be on SQLite's thread when the script crashes the process);
* prints the request that breaks (``request #N: ...``, ``openai says:
  ...``) or the call that ran and vanished, and ends with ``reproduced:
  KIND: detail`` (exit 1) or ``not reproduced`` (exit 0); anything else
  that escapes is ``could not run: ...`` (exit 2).

Same schedule, same bytes: no time, no machine path.
"""

# ruff: noqa: E501 -- the templates below are the script's own lines, as a maintainer reads them

from __future__ import annotations

import importlib.metadata
import json
import os
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from prunecheck.model.provider.openai_chat import CALL_UNANSWERED, RESULT_ORPHANED
from prunecheck.sim.subjects.policy_spec import is_file_reference, split_reference

from ._common import SCRIPT_EXCEPTHOOK, compact

__all__ = ["DISTRIBUTIONS", "repro_script"]

#: The distributions whose versions a script checks: LangChain (``create_agent``) first.
DISTRIBUTIONS = ("langchain", "langgraph", "langchain-core")

#: The distribution of LangGraph's SQLite checkpointer (for a durable checkpointer).
SQLITE = "langgraph-checkpoint-sqlite"

_PROVIDER = ("provider_rejection", "unanswered_call", "orphaned_result")

_TEXT_UNANSWERED = CALL_UNANSWERED.template.removesuffix("{ids}")
_TEXT_ORPHAN = RESULT_ORPHANED.template  # the rule (prunecheck.model.provider)

_HEAD = '''\
"""LangChain v1 / LangGraph: {what}, replayed with the framework alone.
{about}"""
import asyncio, importlib.metadata, itertools, json, os, runpy, sys{more_imports}
from pathlib import Path
FOUND_ON = {found_on}
for dist, version in FOUND_ON.items():  # checked before LangChain is imported
    if (have := next((d.version for d in importlib.metadata.distributions(name=dist)), None)) != version:
        sys.exit(print(f"could not run: {{dist}} is not installed (found on {{dist}} {{version}})" if have is None else f"could not run: found on {{dist}} {{version}}, installed {{dist}} {{have}}") or 2)
{excepthook}
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage, convert_to_openai_messages
from langchain_core.tools import StructuredTool
{framework_imports}'''

_MODEL = """\
requests, found, asked, done, results, ran = [], [], [], {}, {}, []

class Model(GenericFakeChatModel):  # LangChain's fake, in OpenAI's place: checks each request, then answers
    bind_tools = lambda self, tools, **kwargs: self  # create_agent binds the tools; the fake needs none
    async def _agenerate(self, messages, *args, **kwargs):
        requests.append(sent := convert_to_openai_messages(messages))
        n = len(requests)
JUDGE        asked.append(answer := asyncio.get_running_loop().create_future())
        self.messages = iter([await answer])
        return self._generate(messages)

class FakeTool(StructuredTool):  # the user's tool's name and schema: a call waits for done[its id]
    async def ainvoke(self, call, config=None, **kwargs):
        await done.setdefault(call["id"], asyncio.Event()).wait()
RAN        if isinstance(result := results[call["id"]], Exception): raise result
        return ToolMessage(result, tool_call_id=call["id"], name=self.name)
"""

_UNANSWERED = """\
        after = {t["tool_call_id"] for t in itertools.takewhile(lambda t: t["role"] == "tool", sent[i + 1:])}
        if missing := ", ".join(c["id"] for c in m.get("tool_calls", []) if c["id"] not in after):
            found.append([f"request #{n}: {json.dumps(sent)}", SAYS_UNANSWERED,
                          f"reproduced: KIND: request #{n} sends {missing} without a result"])"""

_ORPHAN = """\
        asked_for = next((p.get("tool_calls", []) for p in sent[:i][::-1] if p["role"] != "tool"), [])
        if m["role"] == "tool" and m["tool_call_id"] not in {c["id"] for c in asked_for}:
            found.append([f"request #{n}: {json.dumps(sent)}", SAYS_ORPHAN,
                          f"reproduced: KIND: request #{n} sends the result of {m['tool_call_id']} without its call"])"""

_SILENT = """\
    told = {c["id"] for m in sent for c in m.get("tool_calls", [])}
    for call_id, name in ran:
        if call_id not in told:
            found.append([f"request #{n}: {json.dumps(sent)}", f"reproduced: silent_loss: {name} ran for {call_id}, but request #{n} "
                          "does not tell the model (nothing in it says the call was made)"])"""

_SETTLE = """\
async def settle(turn, seconds=10):  # until the turn has returned or waits on the model or a tool
    async with asyncio.timeout(seconds):
        while not (turn.done() or any(not a.done() for a in asked) or any(not e.is_set() for e in done.values())):
            await asyncio.sleep(0.001)
"""

_DECISIONS = """\
async def decisions(graph, approved):  # HumanInTheLoopMiddleware's interrupts answered: {call id: yes?}
    state = await graph.aget_state(CONFIG)
    calls = [(c["name"], c["args"], c["id"]) for c in state.values["messages"][-1].tool_calls]
    say = lambda i: {"type": "approve"} if approved[i] else {"type": "reject", "message": "The user rejected this tool call."}
    ids = lambda v: [next(c for n, a, c in calls if (n, a) == (r["name"], r["args"])) for r in v["action_requests"]]
    return {i.id: say(i.value["tool_call_id"]) if i.value.get("type") == "tool_approval"
            else {"decisions": [say(c) for c in ids(i.value)]} for i in state.interrupts}
"""

#: A graph the module compiled at import: each chat model its nodes read (a closure
#: cell, ``create_agent``'s; a module global, a hand-built graph's ``model`` or
#: ``model.bind_tools(...)``) is pointed at the fake, as the adapter's ``ModuleGraph`` does.
_POINT = """\
    from langchain_core.language_models import BaseChatModel
    from langchain_core.runnables import RunnableBinding
    chat = lambda v: isinstance(v, BaseChatModel) or isinstance(v, RunnableBinding) and isinstance(v.bound, BaseChatModel)
    fake = Model(messages=iter([]))
    for f in [getattr(node.bound, a, None) for node in graph.nodes.values() for a in ("func", "afunc")]:
        for c in getattr(f, "__closure__", None) or ():
            with contextlib.suppress(ValueError):  # an empty cell
                if chat(c.cell_contents): c.cell_contents = fake
        if str(getattr(f, "__module__", "")).split(".")[0] not in ("langgraph", "langchain", "langchain_core"):
            for n in getattr(getattr(f, "__code__", None), "co_names", ()):
                if chat(f.__globals__.get(n)): f.__globals__[n] = fake
"""

_TAIL = """\
    return print(*(found[0] if found else ["not reproduced"]), sep="\\n") or (1 if found else 0)
sys.exit(asyncio.run(main()))  # an error escaping is "could not run" (the excepthook), exit 2
"""


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _factory(reference: str, folder: Path | None) -> tuple[str, str]:
    """How the docstring names the user's module, and the script's expression of the factory."""
    where, attr = split_reference(reference)
    if not is_file_reference(where):
        return f"module {where}", f"importlib.import_module({where!r}).{attr}"
    path = Path(where).resolve()
    base = (folder if folder is not None else Path.cwd()).resolve()
    try:
        rel = Path(os.path.relpath(path, base)).as_posix()
    except ValueError:  # another drive: no relative path exists
        return path.as_posix(), f"runpy.run_path({path.as_posix()!r})[{attr!r}]"
    here = "Path(__file__).resolve().parent"
    return rel, f"runpy.run_path(str({here} / {rel!r}))[{attr!r}]"


def _call(call: Mapping[str, Any]) -> str:
    args = json.loads(str(call.get("arguments") or "{}"))
    return f"{{'name': {call['name']!r}, 'args': {args!r}, 'id': {call['id']!r}}}"


def _turn(payload: str, checkpointer: str) -> str:
    if checkpointer == "none":
        return f"turn = asyncio.create_task(send(graph, {payload}))"
    return f'turn = asyncio.create_task(graph.ainvoke({payload}, CONFIG, durability="sync"))'


def _steps(steps: Sequence[Mapping[str, Any]], checkpointer: str, hang: bool) -> list[str]:
    """The schedule's steps as the lines of ``main``'s body (indented by the caller)."""
    out: list[str] = []
    turn = False
    pending: dict[str, bool] = {}
    for i, step in enumerate(steps):
        kind = str(step["kind"])
        if kind != "approve" and pending:
            out.append(_turn(f"Command(resume=await decisions(graph, {pending!r}))", checkpointer))
            out.append("await settle(turn)")
            pending = {}
        if kind in ("user", "new_message"):
            text = f"HumanMessage({step['text']!r})"
            payload = text if checkpointer == "none" else f'{{"messages": [{text}]}}'
            out.append(_turn(payload, checkpointer))
            turn = True
        elif kind == "resume":
            out.append(_turn("None", checkpointer))
            turn = True
        elif kind == "reply":
            calls = [_call(c) for c in step.get("calls") or []]
            text = repr(str(step.get("text", "")))
            if not calls:
                out.append(f"asked.pop(0).set_result(AIMessage({text}))")
            elif len(calls) == 1:
                out.append(f"asked.pop(0).set_result(AIMessage({text}, tool_calls=[{calls[0]}]))")
            else:
                out.append(f"asked.pop(0).set_result(AIMessage({text}, tool_calls=[")
                out += [f"    {c}," for c in calls[:-1]] + [f"    {calls[-1]}]))"]
        elif kind == "model_error":  # the summarizer's request fails, as the provider's error
            out.append(f"asked.pop(0).set_exception(RuntimeError({str(step.get('error'))!r}))")
        elif kind in ("complete", "fail", "timeout"):
            call = str(step["call"])
            if kind == "complete":
                result = repr(str(step.get("output", "")))
            elif kind == "fail":
                result = f"RuntimeError({str(step.get('error', 'tool failed'))!r})"
            else:
                result = f"TimeoutError({f'the tool of {call} timed out'!r})"
            out.append(f"results[{call!r}] = {result}; done[{call!r}].set()")
        elif kind == "advance":
            out.append(f"await asyncio.sleep({float(step['seconds'])!r})  # the clock moves on")
            continue
        elif kind == "cancel":
            out.append(
                "turn.cancel(), done.clear()  # LangGraph's cancel: cancel the task running ainvoke"
            )
            if hang:
                out.append("with contextlib.suppress(TimeoutError):")
                out.append("    await settle(turn)")
                out.append("if not turn.done():")
                out.append(
                    '    found.append(["reproduced: hang: the turn did not return 10 s '
                    'after the cancel"])'
                )
                continue
        elif kind == "crash":
            out.append(
                "await graph.checkpointer.conn.close()  # the process dies: nothing more "
                "reaches the file"
            )
            out.append(("turn.cancel(), " if turn else "") + "asked.clear(), done.clear()")
            out.append("graph = agent(await saver())  # a new process: the agent on the same file")
            continue
        elif kind == "approve":
            pending[str(step["call"])] = bool(step.get("approved", True))
            if i + 1 < len(steps):
                continue
            out.append(_turn(f"Command(resume=await decisions(graph, {pending!r}))", checkpointer))
            pending = {}
        else:
            raise ValueError(f"step {i}: unknown kind {kind!r}")
        out += _then_settle(out.pop())
    return out


def _then_settle(line: str) -> list[str]:
    """``line`` and the wait for the agent to settle: one line per step where
    the step's line is a simple statement without a comment."""
    if "#" in line or line.startswith(("with ", "if ")) or line.endswith(":"):
        return [line, "await settle(turn)"]
    return [f"{line}; await settle(turn)"]


def _judge(expect: set[str], says: Mapping[str, tuple[str, str]] | None = None) -> str:
    """The checks of the kinds ``expect``, printing the text of the provider that
    judged the schedule (``says``, :func:`._common.provider_says`), else OpenAI
    Chat Completions' (its unanswered text then ends with the calls found)."""
    provider = next((k for k in _PROVIDER if k in expect), "")
    said = says or {}
    lines = []
    if provider:
        lines.append("    for i, m in enumerate(sent):")
        if provider != "orphaned_result":
            who, text = said.get("call_without_result", ("openai", _TEXT_UNANSWERED))
            literal = repr(f"{who} says: {text}")
            literal += "" if "call_without_result" in said else " + missing"
            lines.append(_UNANSWERED.replace("KIND", provider).replace("SAYS_UNANSWERED", literal))
        if "orphaned_result" in expect:
            who, text = said.get("result_without_call", ("openai", _TEXT_ORPHAN))
            literal = repr(f"{who} says: {text}")
            lines.append(_ORPHAN.replace("KIND", "orphaned_result").replace("SAYS_ORPHAN", literal))
    if "silent_loss" in expect or not provider:
        lines.append(_SILENT)
    return "".join("    " + line + "\n" for line in "\n".join(lines).splitlines())


def repro_script(
    reference: str,
    schedule: Mapping[str, Any],
    *,
    checkpointer: str,
    folder: Path | None = None,
    module_graph: bool = False,
    says: Mapping[str, tuple[str, str]] | None = None,
) -> str:
    """The text of the standalone script replaying ``schedule`` (see the module's docs).

    Parameters
    ----------
    reference : str
        ``FILE.py:ATTR`` or ``module:ATTR``: the user's factory.
    schedule : Mapping[str, Any]
        The schedule's JSON document (``steps``, ``scenario``, ``expect``, ``seed``).
    checkpointer : str
        ``"none"``, ``"memory"`` or ``"durable"``, as the adapter reads the factory.
    folder : Path or None
        Where the script will be written (the user's module is imported
        relative to it); ``None``: the working directory.
    module_graph : bool
        Whether ``reference`` is a graph the module compiled at import (its
        model, a provider string's, is pointed at the fake model; the import
        gets a placeholder key).
    says : Mapping or None
        What the provider that judged the schedule answered
        (:func:`._common.provider_says`): the script prints its text; None:
        OpenAI Chat Completions'.
    """
    _, attr = split_reference(reference)
    shown, factory = _factory(reference, folder)
    steps = list(schedule.get("steps") or [])
    expect = {str(k) for k in schedule.get("expect") or []}
    rules = expect or {
        "provider_rejection",
        "orphaned_result",
        "silent_loss",
    }  # no bundle: every rule
    kinds = {str(s.get("kind")) for s in steps}
    dists = [*DISTRIBUTIONS, *([SQLITE] if checkpointer == "durable" else [])]
    found_on = json.dumps({d: _version(d) for d in dists})
    chosen = next((k for k in _PROVIDER if k in rules), "")
    imports = []
    if checkpointer == "durable":
        imports.append("from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver")
    if "approve" in kinds:
        imports.append("from langgraph.types import Command")
    more = [", contextlib, tempfile"] if checkpointer == "durable" else []
    if ("hang" in expect or module_graph) and not more:
        more.append(", contextlib")
    if factory.startswith("importlib.import_module"):
        more.append(", importlib")
    kept = {
        "none": ", no checkpointer",
        "memory": ", its in-memory checkpointer",
        "durable": ", LangGraph's SQLite checkpointer (a temporary file)",
    }[checkpointer]
    about = (
        f"`{attr}` of {shown} as written, on LangChain's fake chat model and fake tools of the "
        f"same names{kept}.  Scenario class {schedule.get('scenario', '?')}, violations "
        f"{', '.join(sorted(expect)) or 'none'}, found by prunecheck {_version('prunecheck')}, "
        f"seed {schedule.get('seed', 0)}.  Run from any directory: python <this file>.  Exit "
        "0 = not reproduced, 1 = reproduced, 2 = could not run."
    )
    text = _HEAD.format(
        excepthook=SCRIPT_EXCEPTHOOK,
        about=textwrap.fill(about, 110),
        what="a request OpenAI rejects" if chosen else "a tool call that ran and vanishes",
        more_imports="".join(more),
        found_on=found_on,
        framework_imports="".join(line + "\n" for line in imports),
    )
    if checkpointer != "none":
        text += 'CONFIG = {"configurable": {"thread_id": "1"}}\n'
    ran = '        ran.append((call["id"], self.name))\n' if "silent_loss" in rules else ""
    if checkpointer == "none":
        text += "history = []\n"
    text += _MODEL.replace("RAN", ran).replace("JUDGE", _judge(rules, says)) + "\n"
    saver = ", checkpointer=checkpointer" if checkpointer == "durable" else ""
    text += (
        f"def agent({'checkpointer' if saver else ''}):  # the user's agent: fake model, fake tools\n"
        + (
            '    os.environ.setdefault("OPENAI_API_KEY", "sk-placeholder")  # it builds a ChatOpenAI\n'
            f"    graph = {factory}  # compiled at import: every chat model its nodes read gets the fake\n"
            + _POINT
            if module_graph
            else f"    graph = {factory}(model=Model(messages=iter([])){saver})\n"
        )
        + '    tools = graph.nodes["tools"].bound.tools_by_name\n'
        "    tools.update({n: FakeTool(name=n, description=t.description, args_schema=t.args_schema) "
        "for n, t in tools.items()})\n"
        "    return graph\n\n"
    )
    if checkpointer == "none":
        text += (
            "async def send(graph, message):  # the app passes the conversation so far (no checkpoint)\n"
            '    history[:] = (await graph.ainvoke({"messages": [*history, message]}))["messages"]\n'
            "\n"
        )
    text += _SETTLE + "\n"
    if "approve" in kinds:
        text += _DECISIONS + "\n"
    body = [
        "asyncio.get_running_loop().set_exception_handler(lambda loop, context: None)"
        "  # a turn's end is no finding",
    ]
    indent = "    "
    if checkpointer == "durable":
        body += [
            "async with contextlib.AsyncExitStack() as stack:",
            '    db = Path(stack.enter_context(tempfile.TemporaryDirectory())) / "checkpoints.sqlite"',
            "    saver = lambda: stack.enter_async_context(AsyncSqliteSaver.from_conn_string(str(db)))",
            "    graph = agent(await saver())",
        ]
        indent = "        "
    else:
        body.append("graph = agent()")
    body = ["    " + line for line in body]
    body += [indent + line for line in _steps(steps, checkpointer, "hang" in rules)]
    text += "async def main():\n" + "\n".join(body) + "\n" + _TAIL
    return compact(text)

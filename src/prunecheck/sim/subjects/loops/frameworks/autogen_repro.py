"""The AutoGen AgentChat reproduction: a short standalone script of one schedule.

:func:`script_text` writes what a framework maintainer can paste into an
issue: a script of at most 80 lines on AutoGen's public API alone.  It checks
the installed AutoGen against the versions the failure was found on (exit 2
naming both), imports the user's factory by its path relative to the script
(or by module name), builds the agent on AutoGen's own
``ReplayChatCompletionClient`` (its replies given at the schedule's steps, each
request recorded in OpenAI Chat Completions form, tokens counted as the
harness's double counts them, so a ``TokenLimitedChatCompletionContext``
trims where it trimmed under prunecheck), and replaces every tool's body
(``BaseTool.run_json``) by one that waits on an ``asyncio.Event`` per call.
Then it plays the schedule as plain code, one line a step, as
:class:`~.autogen.AutoGenLoop` does: a turn is ``agent.run(task=...,
cancellation_token=token)`` followed by the app's ``save_state``; a cancel is
``token.cancel()``; a crash drops the turn and the agent, and a new agent loads
the saved state; a resume is ``agent.run()`` without a task.

A module-level ``AssistantAgent`` (no factory) is driven as the adapter drives
one: its model context, tools and settings as its module built them, the
agent's model client and each client its model context holds pointed at the
script's model; after a crash, the module is imported anew (as a new process
would) and its new agent pointed at the model likewise.

It checks only what its schedule showed (the schedule's ``expect``; every
check when it has none): OpenAI's pairing rules on every request, with their
exact texts; a tool that ran before a crash and that the request after it no
longer shows; a turn that does not return :data:`HANG_SECONDS` after the
cancel (the harness gives it 60 virtual seconds).  Its last
line is ``reproduced: KIND: detail`` (exit 1) or ``not reproduced`` (exit 0).
"""

# ruff: noqa: E501  (the templates are the script's own lines, long where a reader wants them whole)

from __future__ import annotations

import json
import os
import textwrap
from collections.abc import Mapping, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from string import Template
from typing import Any

from prunecheck.model.provider.openai_chat import CALL_UNANSWERED, RESULT_ORPHANED
from prunecheck.sim.subjects.policy_spec import split_reference

from ._common import SCRIPT_EXCEPTHOOK, VERSION_GATE, agent_argument, also_shown, compact

__all__ = [
    "DISTRIBUTIONS",
    "HANG_SECONDS",
    "orphan_check",
    "said",
    "script_text",
    "step_lines",
    "unanswered_check",
]

#: What the script checks the version of: AgentChat first (``FOUND_ON``'s main entry).
DISTRIBUTIONS = ("autogen-agentchat", "autogen-core", "autogen-ext")

#: Seconds a cancelled turn has to return before the script calls it a hang.
HANG_SECONDS = 2

_ORPHAN = RESULT_ORPHANED.template  # the rule (prunecheck.model.provider)
_UNANSWERED = CALL_UNANSWERED.template.removesuffix("{ids}")


def said(says: Mapping[str, tuple[str, str]] | None, kind: str) -> dict[str, str]:
    """The fields a pairing check prints (``who``, ``text`` as a literal, and the
    ``tail`` appended to it): the text of the provider that judged the schedule
    (:func:`._common.provider_says`) for ``kind`` (``result_without_call`` or
    ``call_without_result``); OpenAI Chat Completions' when none rejected it
    (its unanswered text then ends with the calls the script finds)."""
    found = (says or {}).get(kind)
    if found is not None:
        return {"who": found[0], "text": repr(found[1]), "tail": ""}
    if kind == "result_without_call":
        return {"who": "openai", "text": repr(_ORPHAN), "tail": ""}
    return {"who": "openai", "text": repr(_UNANSWERED), "tail": ' + ", ".join(missing)'}


def orphan_check(says: Mapping[str, tuple[str, str]] | None = None) -> str:
    """The check of a result sent without its call, printing the judged provider's
    text (:func:`said`)."""
    return _ORPHAN_CHECK.substitute(said(says, "result_without_call"))


def unanswered_check(says: Mapping[str, tuple[str, str]] | None = None) -> str:
    """The check of a call sent without its result, printing the judged provider's
    text (:func:`said`)."""
    return _UNANSWERED_CHECK.substitute(said(says, "call_without_result"))


_HEAD = Template('''\
"""AutoGen AgentChat: $agent, scenario class $scenario, violations $kinds;
found by prunecheck $version, seed $seed. Run from any directory: python <this file>; exit 0 = not reproduced, 1 = reproduced, 2 = could not run."""
import asyncio, collections, importlib.metadata, json, os, pathlib, sys

FOUND_ON = $found_on
$gate
$excepthook
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
$ran    if isinstance(outcome[call_id], Exception): raise outcome[call_id]
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
''')

_MAIN = Template("""\
async def main():
$load
    tools.BaseTool.run_json = tool_body  # the tools keep their names and schemas; their bodies are fakes
$steps
$checks\
    return print("not reproduced") or 0
if __name__ == "__main__": sys.exit(asyncio.run(main()))  # an error escaping is "could not run" (the excepthook), exit 2
""")

_ORPHAN_CHECK = Template("""\
    for n, body in enumerate(requests, 1):  # OpenAI: a tool message answers the assistant message before it
        for i, m in enumerate(body):
            calls = next((p.get("tool_calls") or [] for p in body[i::-1] if p["role"] != "tool"), [])  # of the message before
            if m["role"] == "tool" and m["tool_call_id"] not in [c["id"] for c in calls]:
                print(f"request #{n}: {json.dumps(body)}\\n$who says: " + $text)
                return print(f"reproduced: orphaned_result: the result of {m['tool_call_id']} is sent without its call") or 1
""")

_UNANSWERED_CHECK = Template("""\
    for n, body in enumerate(requests, 1):  # OpenAI: the tool messages after a call answer each of its calls
        for i, m in enumerate(body):
            after = [p.get("tool_call_id") for p in body[i + 1:]] + [None]
            if missing := [c["id"] for c in m.get("tool_calls") or [] if c["id"] not in after[:after.index(None)]]:
                print(f"request #{n}: {json.dumps(body)}\\n$who says: " + $text$tail)
                return print(f"reproduced: unanswered_call: {', '.join(missing)} is sent without its result") or 1
""")

_EMPTY_CHECK = Template("""\
    for n, body in enumerate(requests, 1):  # $who: a request needs a message besides the system prompt
        if all(m["role"] in ("system", "developer") for m in body):
            print(f"request #{n}: {json.dumps(body)}\\n$who says: " + $text)
            return print(f"reproduced: provider_rejection: request #{n} holds the system prompt and no conversation") or 1
""")

_LOSS_CHECK = """\
    for call_id, name in ran.items():  # a tool that ran, and what the last request tells the model
        if call_id not in {m.get("tool_call_id") for m in requests[-1]}:
            print(f"request #{len(requests)}: {json.dumps(requests[-1])}")
            return print(f"reproduced: silent_loss: {name} ran for {call_id}; request #{len(requests)} does not say so") or 1
"""


#: How the script points a module-level ``AssistantAgent`` at its model (as the adapter
#: drives one, :func:`~.autogen._rebuild`): the agent's model client, and every client its
#: model context holds (to count tokens, to summarize), as :func:`~.autogen._fresh_context`.
_POINT = Template("""\
agent._model_client = $client  # the agent's model client: the script's model (AutoGen has no public setter)
for key, value in vars(agent.model_context).items():  # so is each client its model context holds (to count tokens, to summarize)
    if isinstance(value, models.ChatCompletionClient): setattr(agent.model_context, key, $client)
""")
_KEY = '    os.environ.setdefault("OPENAI_API_KEY", "sk-placeholder")  # the user\'s module builds its client at import; the script never calls it'


def _instance_lines(found: str, module: str, *, crashes: bool) -> list[str]:
    """The lines building a module-level ``AssistantAgent`` on the script's model:
    the module's own object; with a crash, ``build`` importing the module anew
    for each agent, so that the new process's agent and model context are new
    objects (the adapter's copy, :func:`~.autogen._copy_of_users`), not the
    crashed turn's."""
    if not crashes:
        return [_KEY, f"    agent = {found}  # the user's AssistantAgent: its model context, tools and settings as its module built them",
                *textwrap.indent(_POINT.substitute(client="model"), "    ").splitlines()]  # fmt: skip
    return [_KEY, "    def build(model_client):  # the user's AssistantAgent as a new process builds it: its module imported anew",
            f"        sys.modules.pop({module}, None)", f"        agent = {found}",
            *textwrap.indent(_POINT.substitute(client="model_client"), "        ").splitlines(),
            "        return agent", "    agent = build(model_client=model)  # its model context kept"]  # fmt: skip


def _found_on() -> str:
    """``FOUND_ON``'s dict literal: the installed versions, AgentChat first."""
    versions: dict[str, str] = {}
    for dist in DISTRIBUTIONS:
        try:
            versions[dist] = version(dist)
        except PackageNotFoundError:
            continue
    return json.dumps(versions)


def _prunecheck_version() -> str:
    """The installed prunecheck's version (``prunecheck.__version__`` reads the
    same; importing the package from here would cross the layers)."""
    return version("prunecheck")


def _load_lines(
    target_spec: str, folder: Path | None, *, crashes: bool, instance: bool = False
) -> tuple[str, str]:
    """The lines importing the user's factory (or ``AssistantAgent``, ``instance``)
    and building the agent, and how the docstring names the agent."""
    where, attr = split_reference(target_spec)
    called = "" if instance else "()"
    if where.endswith(".py"):
        path = Path(where).resolve()
        place = _relative(path.parent, folder)
        module = path.stem
        file = f"{place}/{path.name}" if folder is not None else str(path)
        shown = f"{attr}{called} of {file}"
        if folder is not None and not Path(place).is_absolute():
            place_expr = f"pathlib.Path(__file__).resolve().parent / {place!r}"
        else:
            place_expr = repr(place)
        lines = [agent_argument(module, attr),
                 f"    sys.path.insert(0, str({place_expr}))  # the user's module"]  # fmt: skip
        factory, named = "getattr(importlib.import_module(module), name)", "module"
    else:
        module, shown, lines = where, f"{attr}{called} of module {where}", []
        factory, named = f"importlib.import_module({module!r}).{attr}", repr(module)
    if instance:
        lines += _instance_lines(factory, named, crashes=crashes)
    elif crashes:
        lines += [f"    build = {factory}  # the user's factory",
                  "    agent = build(model_client=model)  # its model context kept"]  # fmt: skip
    else:
        lines.append(f"    agent = {factory}(model_client=model)  # its model context kept")
    return "\n".join(lines), shown


def _relative(path: Path, folder: Path | None) -> str:
    """``path`` relative to ``folder`` (POSIX form), or absolute when there is no relative path."""
    if folder is None:
        return path.as_posix()
    try:
        return Path(os.path.relpath(path, folder.resolve())).as_posix()
    except ValueError:  # another drive
        return path.as_posix()


def _call(call: Mapping[str, Any]) -> str:
    return (f"FunctionCall(id={call['id']!r}, name={call['name']!r}, "
            f"arguments={call['arguments']!r})")  # fmt: skip


def step_lines(step: Mapping[str, Any]) -> list[str]:
    """The script's lines (inside ``main``) playing one schedule step."""
    kind = step["kind"]
    if kind in ("user", "new_message"):
        return [f"    await step(start(agent, {step['text']!r}))"]
    if kind == "resume":
        return ["    await step(start(agent))  # resume: run() without a task, on the loaded state"]
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
    if kind == "model_error":  # the context's own call (a summary) fails: the provider's error
        error = str(step.get("error", "model error"))
        oldest = "next(f for f in asked.values() if not f.done())"
        return [f"    await step({oldest}.set_exception(RuntimeError({error!r})))"]
    if kind == "advance":
        return [f"    await step(await asyncio.sleep({float(step['seconds'])!r}))"]
    if kind == "cancel":
        return [
            "    token.cancel()  # AutoGen's cancel of the running turn",
            f"    if not (await asyncio.wait([running], timeout={HANG_SECONDS}))[0]:",
            f'        print("reproduced: hang: the turn did not return {HANG_SECONDS} s after '
            'token.cancel()")',
            "        return 1",
        ]
    if kind == "crash":
        return [
            "    dead.append((asked.copy(), done.copy())), asked.clear(), done.clear()  # a crash: the process's model call and tools never return (nor are finalized)",
            "    agent = build(model_client=model)  # a new process builds the agent, loads the saved state",
            "    await agent.load_state(json.loads(saved[-1])) if saved else None",
        ]
    raise ValueError(f"AutoGen's AssistantAgent has no {kind!r} step")


def script_text(
    target_spec: str,
    schedule_json: str,
    *,
    folder: Path | None = None,
    says: Mapping[str, tuple[str, str]] | None = None,
    instance: bool = False,
) -> str:
    """The standalone script replaying ``schedule_json`` on ``target_spec``.

    Parameters
    ----------
    target_spec : str
        ``path/to/file.py:factory`` or ``package.module:factory`` (an
        ``agent(model_client)`` factory of an ``AssistantAgent``, or the
        agent itself with ``instance``).
    schedule_json : str
        The schedule (:func:`prunecheck.sim.subjects.loops.steps.schedule_to_json`); its
        ``expect`` (the violation kinds) chooses the script's checks.
    folder : Path or None
        Where the script will be written: it imports the user's file by its
        path relative to there (None: by its absolute path).
    says : Mapping or None
        What the judged provider answered (:func:`._common.provider_says`):
        the script prints its text; None: OpenAI Chat Completions'.
    instance : bool
        ``target_spec`` names a module-level ``AssistantAgent``, not a factory:
        the script points the agent's model client, and each client its model
        context holds, at its model, and imports the module anew for the agent
        a crash's new process builds (:func:`_instance_lines`).
    """
    schedule = json.loads(schedule_json)
    steps: Sequence[Mapping[str, Any]] = schedule["steps"]
    expect = set(schedule.get("expect") or ())
    crashes = any(s["kind"] == "crash" for s in steps)
    load, agent = _load_lines(target_spec, folder, crashes=crashes, instance=instance)
    head = _HEAD.substitute(
        gate=VERSION_GATE,
        excepthook=SCRIPT_EXCEPTHOOK,
        agent=agent + also_shown(schedule),
        scenario=schedule.get("scenario", "(none)"),
        kinds=", ".join(sorted(expect)) or "(not given)",
        version=_prunecheck_version(),
        seed=schedule.get("seed", 0),
        found_on=_found_on(),
        ran="    ran[call_id] = tool.name  # it ran\n"
        if not expect or "silent_loss" in expect
        else "",
    )
    checks: list[str] = []
    # an empty conversation's rejection (what the judged provider said, if it did)
    empty = (says or {}).get("no_messages") if "provider_rejection" in expect else None
    orphan = "orphaned_result" in expect or (
        "provider_rejection" in expect and "unanswered_call" not in expect and empty is None
    )
    if empty is not None:
        checks.append(_EMPTY_CHECK.substitute(who=empty[0], text=repr(empty[1])))
    if not expect or orphan:
        checks.append(orphan_check(says))
    if not expect or "unanswered_call" in expect:
        checks.append(unanswered_check(says))
    if not expect or "silent_loss" in expect:
        checks.append(_LOSS_CHECK)
    body = "\n".join(line for step in steps for line in step_lines(step))
    return compact(head + _MAIN.substitute(load=load, steps=body, checks="".join(checks)))

"""The standalone reproduction of a pydantic-ai schedule (issue 30).

:func:`script_text` writes the bug report a pydantic-ai maintainer can paste
into an issue: a script of 60 to 80 lines on pydantic-ai's public API alone
(the table's cells: 64-71).  pydantic-ai's own ``FunctionModel`` answers each
request when the schedule's reply step sets its future; a ``WrapperToolset``
around each of the agent's toolsets keeps the tools' names and schemas (and,
for a schedule that moves the clock, their timeouts) and swaps their bodies
for fakes that wait on an ``asyncio.Event`` per call and record that they
ran; the user's module is imported from its folder, given relative to the
script.  The application's store is ``all_messages()`` as
``ModelMessagesTypeAdapter`` JSON, written as
:class:`~.pydantic_ai.PydanticAIAdapter` writes it (after every node of
``agent.iter``, or once per run); a crash abandons the run where it waits
and the next "process" starts from the last write.  The steps are plain
lines in ``main()``, numbered as the narrative numbers them, each settled the
way the harness settles them (the loop runs until the agent waits on the
model or a tool).

The script checks the schedule's first violation as the run shows it (a body
that ran twice; a call that ran and is gone from request ``#N`` while, for a
trimming agent, its batch was never closed in the store; a request the provider
rejects, printed with the text of the provider that judged it (the one the
agent's model talks to); a result no tool returned; a cancelled
turn that does not return) and ends with ``reproduced: KIND: detail`` (exit
1) or ``not reproduced`` (exit 0); it exits 2, saying why, when pydantic-ai
is missing, is another version than the one it was found on, or the replay
raises.
"""

from __future__ import annotations

import json
import os
import textwrap
from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path
from typing import Any

from prunecheck.model.incidents import Incident
from prunecheck.model.provider.openai_chat import CALL_UNANSWERED, RESULT_ORPHANED
from prunecheck.sim.subjects.policy_spec import is_file_reference, split_reference

from ..contract import Adapter
from ..judge import rejecting_provider
from ..steps import (
    Advance,
    Approve,
    Cancel,
    Complete,
    Crash,
    Fail,
    NewMessage,
    ReplyStep,
    Resume,
    Step,
    Timeout,
    User,
    schedule_from_json,
)
from ..story import Story, retell
from ._common import SCRIPT_EXCEPTHOOK, compact

__all__ = ["DIST", "script_text"]

#: The distribution a script's version gate checks first (pydantic-ai's own).
DIST = "pydantic-ai-slim"

#: How long a cancelled turn has to return before the script calls it a hang.
HANG_SECONDS = 5

_WHAT = {
    "duplicated_side_effect": "a tool call that already ran runs again",
    "silent_loss": "a tool call that ran is gone from what the model is told",
    "provider_rejection": "a request the provider rejects",
    "orphaned_result": "a request with a tool result and no call",
    "unanswered_call": "a request with a tool call and no result",
    "synthesized_result": "the model is told a result no tool returned",
    "hang": "a cancelled turn does not return",
}


_TEXT_ORPHAN = RESULT_ORPHANED.template  # the rule (prunecheck.model.provider)
_TEXT_UNANSWERED = CALL_UNANSWERED.template

_GATE = """\
FOUND_ON = {found_on}
HAVE = {{d.metadata["Name"]: d.version for d in distributions()}}
for dist, found in FOUND_ON.items():  # exit 2 unless installed as found
    HAVE.get(dist) == found or \
sys.exit(print(f"could not run: found on {{dist}} {{found}}, installed {{dist}} {{HAVE[dist]}}" \
if dist in HAVE else f"could not run: {{dist}} is not installed (found on {{dist}} {{found}})") \
or 2)
{excepthook}
"""

#: The request in OpenAI Chat Completions form (only where the script prints one).
_OPENAI = "\n".join(
    [
        "def openai(messages, instructions):  # a request as OpenAI Chat Completions messages",
        '    out = [{"role": "system", "content": instructions}] if instructions else []',
        "    for m in messages:",
        '        if m.kind == "response":  # the model\'s text and its tool calls',
        '            calls = [{"id": p.tool_call_id, "type": "function", "function": {"name": '
        'p.tool_name, "arguments": p.args_as_json_str()}} for p in m.tool_calls]',
        '            out.append({"role": "assistant", "content": m.text} '
        '| ({"tool_calls": calls} if calls else {}))',
        '        for p in m.parts if m.kind == "request" else ():  # prompts, results, retries',
        '            if p.part_kind == "tool-return" or getattr(p, "tool_name", None):',
        '                out.append({"role": "tool", "tool_call_id": p.tool_call_id, "content": '
        'p.model_response_str() if p.part_kind == "tool-return" else p.model_response()})',
        '            elif p.part_kind in ("system-prompt", "user-prompt"):',
        '                out.append({"role": p.part_kind[:-7], "content": str(p.content)})',
        '            elif p.part_kind == "retry-prompt":',
        '                out.append({"role": "user", "content": p.model_response()})',
        "    return out",
        "",
    ]
)

_TAIL = """\
finding = asyncio.run(main())  # an error escaping is "could not run" (the excepthook), exit 2
sys.exit(print(f"reproduced: {finding}" if finding else "not reproduced") \
or (1 if finding else 0))
"""


def _relpath(where: str, folder: Path | None) -> str:
    """``where`` (a file, relative to the working directory or absolute) as seen
    from ``folder``; absolute only where no relative path exists."""
    path = Path(where).resolve()
    base = (folder if folder is not None else Path.cwd()).resolve()
    try:
        return Path(os.path.relpath(path, base)).as_posix()
    except ValueError:  # another drive
        return path.as_posix()


def _first_violation(story: Story, expect: Sequence[str]) -> Incident | None:
    for incident in story.incidents:
        if incident.is_violation and (not expect or incident.kind.value in expect):
            return incident
    return None


def _request_of(story: Story, incident: Incident) -> int:
    """The number (from 1) of the last request received by ``incident``'s step."""
    numbers = [n for n, r in enumerate(story.ledger.requests, 1) if r.step <= incident.step]
    return numbers[-1] if numbers else 1


def _q(text: str) -> str:
    """A Python string literal, double-quoted where it can be (as the script's code is)."""
    return json.dumps(text, ensure_ascii=False) if "\\" not in json.dumps(text) else repr(text)


def _reply(step: ReplyStep, n: int) -> str:
    """The model's reply: the oldest waiting request's future gets a ``ModelResponse``
    (one line, or one line per part when there are several calls)."""
    parts = [f"ToolCallPart({_q(c.name)}, {c.arguments!r}, tool_call_id={_q(c.id)})"
             for c in step.calls]  # fmt: skip
    if step.text or not step.calls:
        parts.insert(0, f"TextPart({_q(step.text)})")
    if len(parts) == 1:
        return f"waiting.pop().set_result(ModelResponse([{parts[0]}])); await settle()  # {n}."
    inner = ",\n    ".join(parts)
    return (f"waiting.pop().set_result(ModelResponse([  # {n}. the model's reply\n    {inner}]))"
            "; await settle()")  # fmt: skip


def _finish(call: str, output: str, n: int, what: str = "") -> str:
    return f"outputs[{_q(call)}] = {output}; done[{_q(call)}].set(); await settle()  # {n}.{what}"


def _step_code(i: int, step: Step, new_agent: str, hang: bool) -> str:
    """One step of the schedule as code, numbered as the narrative numbers it."""
    n = i + 1
    match step:
        case User(text):
            return f"await start(agent, {_q(text)})  # {n}. the user's message"
        case ReplyStep():
            return _reply(step, n)
        case Complete(call, output):
            return _finish(call, _q(output), n)
        case Fail(call, error):
            return _finish(call, f"RuntimeError({_q(error)})", n, " it fails")
        case Timeout(call):
            return _finish(call, "TimeoutError()", n, " it times out")
        case Advance(seconds):
            return (f"await asyncio.sleep({seconds:g}); await settle()  # {n}. time passes "
                    "(in real seconds: pydantic-ai's own timers)")  # fmt: skip
        case Cancel():
            code = f"await cancel()  # {n}. AgentRun.cancel()"
            if hang:
                code += (f"\nif not (await asyncio.wait(tasks[-1:], timeout={HANG_SECONDS}))[0]:"
                         f"\n    return 'hang: the turn did not return {HANG_SECONDS} s after "
                         "the cancel'")  # fmt: skip
            return code
        case Crash():
            again = f"agent = {new_agent}  " if new_agent else ""
            return (f"{again}# {n}. crash: the run is abandoned where it waits (never resumed); "
                    "a new process starts from the last save")  # fmt: skip
        case Resume():
            return f"await start(agent, None)  # {n}. resume the saved run"
        case NewMessage(text):
            return f"await start(agent, {_q(text)})  # {n}. a new message after the crash"
        case Approve(call, approved):
            answer = "True" if approved else "ToolDenied()"
            return f"await approve(agent, {_q(call)}, {answer})  # {n}. a human answers"
    raise AssertionError(step)  # pragma: no cover - every step kind is above


#: The calls the store answers (after a crash: what the next process starts from).
_HELD = ("held = {p.tool_call_id for m in Saved.validate_json(saves[-1]) "
         'for p in m.parts if p.part_kind in ("tool-return", "retry-prompt")}')  # fmt: skip


def _told(n: int) -> str:
    return (f"told = {{p.tool_call_id for m in requests[{n - 1}] for p in m.parts "
            f'if hasattr(p, "tool_call_id")}}  # request #{n}')  # fmt: skip


def _check(story: Story, incident: Incident | None, trims: bool) -> tuple[list[str], bool]:
    """The lines checking the violation as the run shows it; whether they print a
    request (the script then renders requests as OpenAI messages)."""
    if incident is None:
        return ["return None  # prunecheck found no violation in this schedule"], False
    kind, ids = incident.kind.value, incident.ids
    done = f"return {_q(f'{kind}: {incident.detail}')}"
    cid = ids[0] if ids else ""
    n = _request_of(story, incident)
    if kind == "duplicated_side_effect":
        return [
            f"if ran.count({_q(cid)}) > 1:  # its body returned, and ran again",
            f"    {done}",
        ], False
    if kind == "hang":
        return ["return None  # every cancelled turn returned"], False
    if kind == "silent_loss":
        cond = f"{_q(cid)} in ran and {_q(cid)} not in told"
        lines = [_told(n)]
        if trims:  # a trim may remove a whole unit the store held closed; not one it never closed
            if not any(s.kind == "crash" for s in story.steps[: incident.step]):
                lines.append(_HELD)  # else after the last crash (script_text)
            batch = ", ".join(_q(c) for c in story.ledger.unit(cid))
            cond += f" and not {{{batch}}} <= held"
            return [
                *lines,
                f"if {cond}:  # and its batch never closed in the store",
                f"    {done}",
            ], False
        return [*lines, f"if {cond}:", f"    {done}"], False
    if kind == "synthesized_result":  # the results request #n tells the model
        said = (f"results = {{p.tool_call_id: p.model_response_str() for m in requests[{n - 1}] "
                f'for p in m.parts if p.part_kind == "tool-return"}}  # request #{n}')  # fmt: skip
        cond = (f"{_q(cid)} in results and ({_q(cid)} not in ran "
                f"or outputs[{_q(cid)}] not in results[{_q(cid)}])")  # fmt: skip
        return [said, f"if {cond}:", f"    {done}"], False
    lines = [f"request = openai(requests[{n - 1}], instructions[{n - 1}])",
             'calls = {c["id"] for m in request for c in m.get("tool_calls", [])}',
             'results = {m["tool_call_id"]: m["content"] for m in request '
             'if m["role"] == "tool"}']  # fmt: skip
    who, said = "", ""
    if kind in ("orphaned_result", "unanswered_call", "provider_rejection") and ids:
        orphan = kind == "orphaned_result" or "result_without_call" in incident.reason
        tests = [f"{_q(c)} in results and {_q(c)} not in calls" if orphan
                 else f"{_q(c)} in calls and {_q(c)} not in results" for c in ids]  # fmt: skip
        cond = " or ".join(tests)
        who, said = _said(story, incident, orphan)
    else:  # the shape prunecheck judged: each message's role, its calls' ids, the id it answers
        body = story.ledger.requests[n - 1].body["messages"]
        assert isinstance(body, list)
        want = [[m.get("role"), [c["id"] for c in m.get("tool_calls") or ()], m.get("tool_call_id")]
                for m in body]  # fmt: skip
        lines.append('shape = [[m["role"], [c["id"] for c in m.get("tool_calls", [])], '
                     'm.get("tool_call_id")] for m in request]')  # fmt: skip
        cond = f"shape == {want!r}"
    lines += [f"if {cond}:", f'    print(f"request #{n}: {{json.dumps(request)}}")']
    if said:
        lines.append(f"    print({_q(f'{who} says: {said}')})")
    return [*lines, f"    {done}"], True


def _said(story: Story, incident: Incident, orphan: bool) -> tuple[str, str]:
    """The provider that judged the request and its text: the incident's own
    (a provider rejection), or the rejection the judge wrote beside it for the
    same call (an orphaned result, an unanswered call); OpenAI Chat
    Completions' when there is none."""
    if incident.kind.value == "provider_rejection" and incident.text:
        return rejecting_provider(incident)[0] or "openai", incident.text
    beside = next((i for i in story.incidents if i.kind.value == "provider_rejection"
                   and i.step == incident.step and set(i.ids) & set(incident.ids) and i.text),
                  None)  # fmt: skip
    if beside is not None:
        return rejecting_provider(beside)[0] or "openai", beside.text
    return "openai", _TEXT_ORPHAN if orphan else _TEXT_UNANSWERED.format(ids=list(incident.ids))


def script_text(
    adapter: Adapter,
    target: object,
    target_spec: str,
    schedule_json: str,
    *,
    persist_every_node: bool,
    repair_on_new_message: bool,
    folder: Path | None = None,
) -> str:
    """The standalone script replaying ``schedule_json`` on ``target_spec``.

    Parameters
    ----------
    adapter : Adapter
        The pydantic-ai adapter (the schedule is retold with it once, to find
        the violation and the request it shows in).
    target : object
        The user's agent (or its factory), loaded from ``target_spec``.
    target_spec : str
        ``FILE.py:ATTR`` (relative to the working directory, or absolute) or
        ``module:ATTR``.
    schedule_json : str
        The schedule (:func:`~prunecheck.sim.subjects.loops.steps.schedule_to_json`).
    persist_every_node, repair_on_new_message : bool
        The adapter's settings (:class:`~.pydantic_ai.PydanticAIAdapter`).
    folder : Path or None
        Where the script will be written (None: the working directory).
    """
    from pydantic_ai import Agent

    data: dict[str, Any] = json.loads(schedule_json)
    story = retell(adapter, target, schedule_from_json(schedule_json))
    steps = story.steps  # a step that was not enabled ends the schedule, as in the harness
    expect = [str(k) for k in data.get("expect") or ()]
    incident = _first_violation(story, expect)
    kinds = expect or sorted({i.kind.value for i in story.incidents if i.is_violation})
    trims = "trim_hook" in {c.value for c in adapter.capabilities(target)}
    check, prints = _check(story, incident, trims)
    used = {s.kind for s in steps}
    where, attr = split_reference(target_spec)
    factory = not isinstance(target, Agent)
    if is_file_reference(where):
        rel = _relpath(where, folder)
        parent, _, file = rel.rpartition("/")
        module, agent_of = file.removesuffix(".py"), f"`{attr}` of {rel} (relative to this file)"
        load = [f"sys.path.insert(0, str(Path(__file__).resolve().parent / {_q(parent or '.')}))"]
    else:
        module, agent_of, load = where, f"`{attr}` of module {where}", []
    name = "build" if factory else "agent"
    if all(part.isidentifier() for part in module.split(".")):
        load.append(f"from {module} import {attr}" + ("" if attr == name else f" as {name}"))
    else:  # a file name that is no Python name (my-agent.py)
        load.append(f"{name} = __import__({_q(module)}).{attr}")
    load += ["agent = build()"] if factory else []
    what = _WHAT.get(kinds[0], "a violation") if kinds else "no violation"
    scenario = f"scenario class {data['scenario']}, " if data.get("scenario") else ""
    about = (
        f"Agent {agent_of}, {scenario}found by prunecheck {version('prunecheck')}, seed "
        f"{data.get('seed', 0)}. Run from any directory: python <this file>."
    )
    imports = ["asyncio", *(["json"] if prints else []), "os", "sys"]
    out = [
        f'"""pydantic-ai: {what} ({", ".join(kinds) or "none"}).',
        *textwrap.wrap(about, 99, break_on_hyphens=False, break_long_words=False),
        'Exit status: 0 = not reproduced, 1 = reproduced, 2 = could not run."""',
        f"import {', '.join(imports)}",
        *(["from dataclasses import replace"] if "advance" in used else []),
        "from importlib.metadata import distributions",
        *(["from pathlib import Path"] if is_file_reference(where) else []),
        _GATE.format(
            found_on=json.dumps({DIST: version(DIST)}), excepthook=SCRIPT_EXCEPTHOOK
        ).rstrip("\n"),
        *_framework_imports(used, repair_on_new_message),
        "",
    ]
    records = prints or any("requests" in line for line in check)
    state = ["requests"] * records + ["instructions"] * prints + ["waiting", "tasks"]
    state += ["done", "outputs", "ran"]
    empty = {"done": "{}", "outputs": "{}"}
    out.append(f"{', '.join(state)} = {', '.join(empty.get(v, '[]') for v in state)}")
    when = "after every node" if persist_every_node else "when each run ends"
    out.append(f'saves = [b"[]"]  # the app\'s store: all_messages() as JSON {when}; '
               "a crash keeps the last")  # fmt: skip
    out += _helpers(used, prints, records, persist_every_node, repair_on_new_message)
    out += ["", "async def main():", *(f"    {line}" for line in load)]
    hang_at = incident.step if incident is not None and incident.kind.value == "hang" else -1
    again = "build()" if factory else ""
    held_at = -1  # a silent loss in a trimming agent: what the store held after the last crash
    if incident is not None and incident.kind.value == "silent_loss" and trims:
        held_at = max((i for i, s in enumerate(steps) if s.kind == "crash" and i < incident.step),
                      default=-1)  # fmt: skip
    for i, step in enumerate(steps):
        out += [f"    {line}" for line in _step_code(i, step, again, i == hang_at).split("\n")]
        if i == held_at:
            out.append(f"    {_HELD}  # what the crash left")
    out += [f"    {line}" for line in check]
    return compact("\n".join(out) + "\n" + _TAIL)


def _framework_imports(used: set[str], repair: bool) -> list[str]:
    messages = ["ModelMessagesTypeAdapter as Saved", "ModelResponse", "TextPart", "ToolCallPart"]
    if repair and "new_message" in used:
        messages.append("repair_messages")
    top = ["DeferredToolResults", "ToolDenied"] if "approve" in used else []
    if "cancel" in used:
        top.append("RunCancelled")
    return [
        *([f"from pydantic_ai import {', '.join(top)}"] if top else []),
        f"from pydantic_ai.messages import {', '.join(messages)}",
        "from pydantic_ai.models.function import FunctionModel",
        "from pydantic_ai.toolsets import WrapperToolset",
    ]


def _helpers(
    used: set[str], prints: bool, records: bool, every_node: bool, repair: bool
) -> list[str]:
    """The script's functions: the model, the fake tools, a run, the steps' helpers."""
    approves, cancels, advances = "approve" in used, "cancel" in used, "advance" in used
    text = "\n" + _OPENAI if prints else ""
    text += "\nasync def model(messages, info):  # pydantic-ai's test model: "
    text += "each request waits for the script's reply\n"
    if prints:
        text += "    requests.append(list(messages)); instructions.append(info.instructions)\n"
    elif records:
        text += "    requests.append(list(messages))\n"
    text += "    waiting.append(asyncio.Future())\n    return await waiting[-1]\n\n"
    if advances:  # the body goes through the tool's own call: inside pydantic-ai's timeout
        text += "async def body(args, ctx):  # every tool's body waits for the script\n"
    else:
        text += "class FakeTools(WrapperToolset):  # the agent's tools, names and schemas kept\n"
        text += "    async def call_tool(self, name, args, ctx, tool):  "
        text += "# its body waits for the script\n"
    pad = "    " if advances else "        "
    text += f"{pad}done[ctx.tool_call_id] = asyncio.Event()\n"
    text += f"{pad}await done[ctx.tool_call_id].wait()\n"
    if used & {"fail", "timeout"}:
        text += f"{pad}if isinstance(outputs[ctx.tool_call_id], Exception):\n"
        text += f"{pad}    raise outputs[ctx.tool_call_id]\n"
    text += f"{pad}ran.append(ctx.tool_call_id)  # its side effect happened\n"
    text += f"{pad}return outputs[ctx.tool_call_id]\n\n"
    if advances:
        text += "class FakeTools(WrapperToolset):  # the agent's tools (names, schemas, timeouts)\n"
        text += "    async def call_tool(self, name, args, ctx, tool):\n"
        text += "        tool = replace(tool, call_func=body, is_async=True)\n"
        text += "        return await super().call_tool(name, args, ctx, tool)\n\n"
    params = "agent, prompt, deferred=None" if approves else "agent, prompt"
    text += f"async def turn({params}):  # one run of the agent (prompt None: it continues)\n"
    history = "Saved.validate_json(saves[-1]) or None"
    if repair and "new_message" in used:  # the UserError's advice for a new prompt
        text += "    history = Saved.validate_json(saves[-1])\n"
        text += "    history = repair_messages(history) if prompt is not None else history\n"
        history = "history or None"
    text += "    fakes = [FakeTools(t) for t in agent.toolsets]\n"
    text += "    with agent.override(model=FunctionModel(model), tools=[], toolsets=fakes):\n"
    text += "        try:\n"
    extra = ", deferred_tool_results=deferred" if approves else ""
    text += f"            async with agent.iter(prompt, message_history={history}{extra}) as run:\n"
    if cancels:
        text += "                runs.append(run)\n"
    text += "                async for _node in run:\n"
    if every_node:
        text += "                    saves.append(Saved.dump_json(run.all_messages()))\n"
    else:
        text += "                    pass\n"
        text += "            saves.append(Saved.dump_json(run.all_messages()))\n"
    if approves:
        text += "            approvals.extend(getattr(run.result.output, 'approvals', []))\n"
    if cancels:
        text += "        except RunCancelled as exc:  "
        text += "# the run's completed work, as pydantic-ai hands it\n"
        text += "            saves.append(Saved.dump_json(exc.all_messages()))\n"
    text += (
        '        except Exception as exc: print(f"the run raised {exc!r}")  # the turn\'s outcome\n'
    )
    text += """
async def settle():  # after each step the agent runs until it waits for the model or a tool
    for _ in range(1000): await asyncio.sleep(0)  # (about 40 are enough today)

async def start(agent, prompt{approve_arg}):  # a run of the agent, until it waits
    tasks.append(asyncio.create_task(turn(agent, prompt{approve_pass})))
    await settle()
""".format(
        approve_arg=", deferred=None" if approves else "",
        approve_pass=", deferred" if approves else "",
    )
    if cancels:
        text += """
runs = []
async def cancel():  # AgentRun.cancel(); the task itself before the run has started
    runs[-1].cancel() if runs and not tasks[-1].done() else tasks[-1].cancel()
    await settle()
"""
    if approves:
        text += """
approvals, decisions = [], {}
async def approve(agent, call, decision):  # the run continues once every pending call is answered
    decisions[call] = decision
    if {p.tool_call_id for p in approvals} <= set(decisions):
        approvals.clear()
        await start(agent, None, DeferredToolResults(approvals=dict(decisions)))
        decisions.clear()
"""
    return text.split("\n")[:-1]

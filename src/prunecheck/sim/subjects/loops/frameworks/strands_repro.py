"""The Strands Agents reproduction: a short standalone script of one schedule.

:func:`script_text` writes what a framework maintainer can paste into an
issue: a script on Strands' public API alone (and ``DecoratedFunctionTool``'s
function attribute).  It checks the installed ``strands-agents`` against the
release the failure was found on (exit 2 naming both), imports the user's
agent (or factory) by its path relative to the script (or by module name),
and builds the agent as :class:`~.strands.StrandsAdapter` does: its tools,
system prompt, a fresh copy of its conversation manager, its session (a
``FileSessionManager`` of the same session id in a temporary folder) on a
scripted ``strands.models.Model`` whose replies are given at the schedule's
steps, each request recorded in OpenAI Chat Completions form (the model
declares the user's model's ``context_window_limit``, so proactive
compression runs as configured; a summary is answered at once); every ``@tool``
function's body waits on an ``asyncio.Event`` per call.  Then it plays the
schedule as plain code, one line a step: a turn is ``agent.invoke_async``;
a cancel is ``agent.cancel()``; a crash drops the agent and its pending work,
and a new agent restores the session; a resume is ``invoke_async()`` without
a prompt.

The script carries only the parts its agent needs (a session, a summarizing
manager, a Bedrock model), so that it stays within the 80 lines of issue 30.
It checks only what its schedule showed (the schedule's ``expect``; every
check when it has none): OpenAI's pairing rules with their exact texts,
Bedrock Converse's first-message rule (for a Bedrock model), a result that is
not what its tool returned, a tool that ran twice, a tool that ran and that
the last request no longer shows, a turn that does not return
:data:`HANG_SECONDS` after the cancel.  Its last line is ``reproduced: KIND:
detail`` (exit 1) or ``not reproduced`` (exit 0).
"""

# ruff: noqa: E501  (the templates are the script's own lines, long where a reader wants them whole)

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from string import Template
from typing import Any

from prunecheck.sim.subjects.policy_spec import split_reference

from ..judge import BEDROCK_FIRST_USER
from ._common import SCRIPT_EXCEPTHOOK, VERSION_GATE, agent_argument, also_shown
from .autogen_repro import _relative, orphan_check, unanswered_check

__all__ = ["HANG_SECONDS", "script_text", "step_lines"]

#: Seconds a cancelled turn has to return before the script calls it a hang.
HANG_SECONDS = 2

_HEAD = Template('''\
"""Strands Agents: $agent, scenario class $scenario, violations $kinds;
found by prunecheck $version, seed $seed. Run from any directory: python <this file>; exit 0 = not reproduced, 1 = reproduced, 2 = could not run."""
import asyncio, collections, $more_imports contextvars, copy, importlib, importlib.metadata, json, os, pathlib, sys
FOUND_ON = $found_on
$gate
$excepthook
''')

#: The optional parts of the script: each written only where the agent needs it.
_BEDROCK_ENV = 'os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")  # a Bedrock client is built, never called\n'
_SESSION_IMPORT = (
    "from strands.session.file_session_manager import FileSessionManager\n"
    'STORE = tempfile.mkdtemp(prefix="strands-repro-")\n'
)

_CHAT = """\
from strands import Agent
from strands.models.model import Model
$imports\
requests, asked, done, outcome, ran, runs, CALL = [], [], collections.defaultdict(asyncio.Event), {}, {}, collections.Counter(), contextvars.ContextVar("call")
def chat(messages, system):  # Strands' messages in OpenAI Chat Completions form (as prunecheck shows them)
    out = [{"role": "system", "content": system}] if system else []
    for m in messages:
        blocks = m["content"]; text = "".join(b["text"] for b in blocks if "text" in b); results = [b["toolResult"] for b in blocks if "toolResult" in b]
        calls = [{"id": b["toolUse"]["toolUseId"], "type": "function", "function": {"name": b["toolUse"]["name"], "arguments": json.dumps(b["toolUse"]["input"], sort_keys=True)}} for b in blocks if "toolUse" in b]
        if m["role"] == "assistant": out.append({"role": "assistant", "content": text or None, **({"tool_calls": calls} if calls else {})})
        out += [{"role": "tool", "tool_call_id": r["toolUseId"], "content": "".join(c["text"] if "text" in c else json.dumps(c.get("json"), sort_keys=True) for c in r["content"])} for r in results]
        if m["role"] == "user" and (text or not results): out.append({"role": "user", "content": text})
    return out
class Scripted(Model):  # Strands' model interface: each request recorded, answered at the schedule's reply
    def __init__(self, limit): self.limit = limit if isinstance(limit, int) else None  # proactive compression reads it
    def get_config(self): return {"context_window_limit": self.limit} if self.limit else {}
    update_config = structured_output = lambda self, *args, **kwargs: None  # not used by these runs
    async def stream(self, messages, tool_specs=None, system_prompt=None, **kwargs):
"""

_ASK = """\
        requests.append(chat(messages, system_prompt)); asked.append(asyncio.get_running_loop().create_future())
        if (answered := await asked[-1]) is None:  # cancelled in flight: the first chunk comes, Strands' checkpoint stops
            yield {"messageStart": {"role": "assistant"}}; return
        text, calls = answered
"""

#: The request of a summarizing conversation manager: asked from Strands' own
#: thread, answered at once with a summary (the harness does the same).
_ASK_OR_SUMMARY = """\
        main = threading.current_thread() is threading.main_thread()  # a summary is asked from Strands' own thread
        if main: requests.append(chat(messages, system_prompt)); asked.append(asyncio.get_running_loop().create_future())
        if (answered := await asked[-1] if main else ($summary, ())) is None:  # cancelled in flight: the first chunk comes, Strands' checkpoint stops
            yield {"messageStart": {"role": "assistant"}}; return
        text, calls = answered
"""

_REST = """\
        yield {"messageStart": {"role": "assistant"}}
        if text or not calls: yield {"contentBlockDelta": {"delta": {"text": text}}}; yield {"contentBlockStop": {}}
        for call_id, name, arguments in calls:
            yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": call_id, "name": name}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": arguments}}}}; yield {"contentBlockStop": {}}
        yield {"messageStop": {"stopReason": "tool_use" if calls else "end_turn"}}
def fake(tool):  # the tool keeps its name, spec and Strands' own error results; its body waits for the schedule
    fake = copy.copy(tool); inner = fake.stream
    async def body(**_):
        call_id = CALL.get()["toolUseId"]; await done[call_id].wait(); ran[call_id] = tool.tool_name
        if isinstance(outcome[call_id], Exception): raise outcome[call_id]
        runs[call_id] += 1; return outcome[call_id]
    async def stream(tool_use, *args, **kwargs):
        CALL.set(tool_use)
        async for event in inner(tool_use, *args, **kwargs): yield event
    fake._tool_func, fake.stream = body, stream
    return fake
def build(user):  # a new process: the user's agent as configured, on the scripted model
    manager = copy.copy(user.conversation_manager)  # a fresh copy of the conversation manager, its state reset
    [setattr(manager, name, value) for name, value in (("removed_message_count", 0), ("_model_call_count", 0), ("_pin_first_applied", False), ("_summary_message", None)) if hasattr(manager, name)]
    return Agent(model=$model, messages=$messages, tools=[fake(t) for t in user.tool_registry.registry.values()], system_prompt=user.system_prompt,
                 conversation_manager=manager,$session_arg callback_handler=None, agent_id=user.agent_id, name=user.name, tool_executor=user.tool_executor)
"""

#: The user's own hook callbacks on the messages, registered on the agent the script builds.
_HOOKS = """\
    for event, entries in user.hooks._registered_callbacks.items():  # the app's own hook callbacks (not Strands'), as registered
        for c in [getattr(e, "callback", e) for e in entries]:
            if event.__name__ in $events and not getattr(getattr(c, "__func__", c), "__module__", "strands").startswith("strands"): agent.hooks.add_callback(event, c)
"""

_DRIVE = """\
async def step(*_): [await asyncio.sleep(0) for _ in range(500)]  # after each step: Strands runs until it waits on the model or a tool
def answer(text, *calls): next(f for f in asked if not f.done()).set_result((text, calls))  # the model answers the oldest open request
def finish(call_id, result): outcome[call_id] = result; done[call_id].set()  # the tool of call_id returns result (or raises it)
def start(agent, *prompt):  # a turn of the app (one that raises says so)
    global running; running = asyncio.create_task(agent.invoke_async(*prompt))
    running.add_done_callback(lambda t: t.cancelled() or not t.exception() or print(f"(the turn raised {type(t.exception()).__name__}: {t.exception()})"))
"""

_MAIN = Template("""\
async def main():
$load
$steps
$checks\
    return print("not reproduced") or 0
if __name__ == "__main__": sys.exit(asyncio.run(main()))  # an error escaping is "could not run" (the excepthook), exit 2
""")

_BEDROCK_CHECK = Template("""\
    for n, body in enumerate(requests, 1):  # Bedrock Converse: the conversation starts with the user's message
        if (first := next((m for m in body if m["role"] != "system"), {"role": "user"}))["role"] != "user":
            print(f"request #{n}: {json.dumps(body)}\\nbedrock says: " + $text); return print(f"reproduced: provider_rejection: the conversation starts with the {first['role']}'s message") or 1
""")

_RESULT_CHECK = """\
    for n, body in enumerate(requests, 1):  # the result the model is shown, against what the tool returned
        for m, result in ((m, outcome.get(m["tool_call_id"])) for m in body if m["role"] == "tool"):
            if isinstance(result, str) and result not in m["content"]:
                print(f"request #{n}: {json.dumps(body)}"); return print(f"reproduced: {KIND}: the tool of {m['tool_call_id']} returned {result!r}; the model is shown {m['content']!r}") or 1
"""

_TWICE_CHECK = """\
    if twice := [call_id for call_id, n in runs.items() if n > 1]:  # a tool body that ran to its end twice
        return print(f"reproduced: duplicated_side_effect: the tool body of {twice[0]} ran twice") or 1
"""

_LOSS_CHECK = """\
    for call_id, name in ran.items():  # a tool that ran, and what the last request tells the model
        if call_id not in {m.get("tool_call_id") for m in requests[-1]}:
            print(f"request #{len(requests)}: {json.dumps(requests[-1])}")
            return print(f"reproduced: silent_loss: {name} ran for {call_id}; request #{len(requests)} does not say so") or 1
"""


def _load(target_spec: str, folder: Path | None, *, factory: bool) -> tuple[str, str]:
    """The lines importing the user's agent (or calling its factory) and building
    the agent on the scripted model, and how the docstring names the agent."""
    where, attr = split_reference(target_spec)
    call = "()" if factory else ""
    if where.endswith(".py"):
        path = Path(where).resolve()
        place = _relative(path.parent, folder)
        module = path.stem
        shown = (
            f"{attr}{call} of {place}/{path.name}"
            if folder is not None
            else f"{attr}{call} of {path}"
        )
        if folder is not None and not Path(place).is_absolute():
            place_expr = f"pathlib.Path(__file__).resolve().parent / {place!r}"
        else:
            place_expr = repr(place)
        lines = [agent_argument(module, attr),
                 f"    sys.path.insert(0, str({place_expr}))  # the user's module"]  # fmt: skip
        user = f"getattr(importlib.import_module(module), name){call}"
    else:
        module, shown, lines = where, f"{attr}{call} of module {where}", []
        user = f"importlib.import_module({module!r}).{attr}{call}"
    what = "the user's factory, called" if factory else "the user's agent"
    lines += [f"    user = {user}  # {what}", "    agent = build(user)"]
    return "\n".join(lines), shown


def _found_on() -> str:
    try:
        return json.dumps({"strands-agents": version("strands-agents")})
    except PackageNotFoundError:
        return "{}"


def _call(call: Mapping[str, Any]) -> str:
    return repr((call["id"], call["name"], call["arguments"]))


def step_lines(step: Mapping[str, Any]) -> list[str]:
    """The script's lines (inside ``main``) playing one schedule step."""
    kind = step["kind"]
    if kind in ("user", "new_message"):
        return [f"    await step(start(agent, {step['text']!r}))"]
    if kind == "resume":
        return [
            "    await step(start(agent))  # resume: invoke_async() without a prompt, on the restored session"
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
            "    agent.cancel()  # Strands' cancel of the running turn",
            "    [f.set_result(None) for f in asked if not f.done()]  # a model request in flight streams a chunk",
            f"    if not (await asyncio.wait([running], timeout={HANG_SECONDS}))[0]:",
            f'        print("reproduced: hang: the turn did not return {HANG_SECONDS} s after '
            'agent.cancel()")',
            "        return 1",
        ]
    if kind == "crash":
        return [
            "    asked.clear(), done.clear()  # a crash: the process's model call and tools never return",
            "    agent = build(user)  # a new process builds the agent: Strands restores the session",
        ]
    raise ValueError(f"the Strands adapter drives no {kind!r} step")


def script_text(
    target_spec: str,
    schedule_json: str,
    *,
    folder: Path | None = None,
    bedrock: bool = True,
    factory: bool = False,
    session: bool = False,
    summarizing: bool = False,
    hooks: Sequence[str] = (),
    says: Mapping[str, tuple[str, str]] | None = None,
) -> str:
    """The standalone script replaying ``schedule_json`` on ``target_spec``.

    Parameters
    ----------
    target_spec : str
        ``path/to/file.py:attr`` or ``package.module:attr`` (a Strands ``Agent``
        or a function of no argument building one).
    schedule_json : str
        The schedule (:func:`prunecheck.sim.subjects.loops.steps.schedule_to_json`); its
        ``expect`` (the violation kinds) chooses the script's checks.
    folder : Path or None
        Where the script will be written: it imports the user's file by its
        path relative to there (None: by its absolute path).
    bedrock : bool
        Whether the agent's model sends to Bedrock (its first-message rule is checked).
    factory : bool
        Whether ``attr`` is a factory (called) rather than the agent.
    session, summarizing : bool
        Whether the agent has a session manager (restored in a temporary
        folder), a summarizing conversation manager (its summary asked from
        Strands' own thread): the script carries only the parts its agent needs.
    hooks : Sequence[str]
        The events whose hook callbacks of the user's own the script registers
        on the agent it builds (the adapter's ``MESSAGE_EVENTS`` when the agent
        has some, :func:`~.strands.user_hooks`); empty: none.
    says : Mapping or None
        What the provider that judged the schedule answered
        (:func:`._common.provider_says`): the script prints its text; None:
        OpenAI Chat Completions'.
    """
    from .strands_doubles import SUMMARY

    schedule = json.loads(schedule_json)
    steps: Sequence[Mapping[str, Any]] = schedule["steps"]
    expect = set(schedule.get("expect") or ())
    load, agent = _load(target_spec, folder, factory=factory)
    more = ["tempfile,"] if session else []
    more += ["threading,"] if summarizing else []
    head = _HEAD.substitute(
        gate=VERSION_GATE,
        excepthook=SCRIPT_EXCEPTHOOK,
        agent=agent + also_shown(schedule),
        scenario=schedule.get("scenario", "(none)"),
        kinds=", ".join(sorted(expect)) or "(not given)",
        version=version("prunecheck"),
        seed=schedule.get("seed", 0),
        found_on=_found_on(),
        more_imports=" ".join(more),
    )
    model = _CHAT.replace("$imports", _SESSION_IMPORT if session else "")
    model += _ASK_OR_SUMMARY.replace("$summary", repr(SUMMARY)) if summarizing else _ASK
    rest = (
        _REST.replace("$model", 'Scripted(getattr(user.model, "context_window_limit", None))')
        .replace("$messages", "[]" if session else "copy.deepcopy(user.messages)")
        .replace(
            "$session_arg",
            " session_manager=FileSessionManager(session_id=user._session_manager.session_id, storage_dir=STORE),"
            if session
            else "",
        )
    )
    if hooks:  # the agent built, then the user's hook callbacks registered on it
        built = "tool_executor=user.tool_executor)\n"
        rest = rest.replace("    return Agent(model=", "    agent = Agent(model=").replace(
            built, built + _HOOKS.replace("$events", repr(tuple(hooks))) + "    return agent\n"
        )
    head += (_BEDROCK_ENV if bedrock else "") + model + rest + _DRIVE
    every = not expect
    checks: list[str] = []
    if every or ("provider_rejection" in expect and bedrock):
        checks.append(_BEDROCK_CHECK.substitute(text=repr(BEDROCK_FIRST_USER)))
    openai = "provider_rejection" in expect and not bedrock  # a rejection by OpenAI's pairing rules
    if every or openai or "orphaned_result" in expect:
        checks.append(orphan_check(says))
    if every or openai or "unanswered_call" in expect:
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

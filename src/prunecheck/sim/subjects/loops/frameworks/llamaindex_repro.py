"""The LlamaIndex reproduction: a short standalone script of one schedule.

:func:`script_text` writes what a framework maintainer can paste into an
issue: a script on LlamaIndex's public API alone, its test model
``MockFunctionCallingLLM`` answering at the schedule's steps.  It checks the
installed ``llama-index-core`` against the release the failure was found on
(exit 2 naming both), imports the user's agent (or calls its factory) by
its path relative to the script (or by module name), takes the memory the
app runs it with (the module's, the factory's, or LlamaIndex's default
``ChatMemoryBuffer``), and builds the agent as
:class:`~.llamaindex.LlamaIndexAdapter` does: the user's class and fields,
the scripted model, each tool's metadata with a body that waits on an
``asyncio.Event`` per call.  Then it plays the schedule as plain code, one
line a step: a turn is ``agent.run(user_msg=..., memory=memory)``; a cancel
is ``handler.cancel_run()``.

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

from prunecheck.sim.subjects.policy_spec import split_reference

from ._common import SCRIPT_EXCEPTHOOK, VERSION_GATE, compact
from .autogen_repro import _relative, orphan_check, unanswered_check
from .strands_repro import _LOSS_CHECK, _RESULT_CHECK, _TWICE_CHECK

__all__ = ["script_text", "step_lines"]

_HEAD = Template('''\
"""LlamaIndex: $agent, scenario class $scenario, violations $kinds;
found by prunecheck $version, seed $seed. Run from any directory: python <this file>; exit 0 = not reproduced, 1 = reproduced, 2 = could not run."""
import asyncio, collections, concurrent.futures, importlib, importlib.metadata, json, os, pathlib, sys, tempfile

FOUND_ON = $found_on
$gate
$excepthook
from llama_index.core.base.llms.types import ChatMessage, ChatResponse, TextBlock, ToolCallBlock
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.tools import FunctionTool
requests, asked, issued, started, done, outcome, ran, runs = [], [], [], set(), collections.defaultdict(asyncio.Event), {}, {}, collections.Counter()
def chat(messages):  # LlamaIndex's messages in OpenAI Chat Completions form (as prunecheck shows them)
    calls = lambda m: [{"id": b.tool_call_id, "type": "function", "function": {"name": b.tool_name, "arguments": b.tool_kwargs}} for b in m.blocks if isinstance(b, ToolCallBlock)]
    return [{"role": "tool", "tool_call_id": m.additional_kwargs.get("tool_call_id"), "content": m.content or ""} if m.role.value == "tool"
            else {"role": m.role.value, "content": m.content or (None if calls(m) else ""), **({"tool_calls": calls(m)} if calls(m) else {})} for m in messages]
async def one(response): yield response  # a stream of one chunk
class Scripted(MockFunctionCallingLLM):  # LlamaIndex's test model: each request recorded, answered at the schedule's reply
    async def achat(self, messages, **kwargs):
        requests.append(chat(messages)); asked.append(asyncio.get_running_loop().create_future())
        text, calls = await asked[-1]; issued.extend(calls)
        blocks = ([TextBlock(text=text)] if text else []) + [ToolCallBlock(tool_call_id=i, tool_name=n, tool_kwargs=a) for i, n, a in calls]
        return ChatResponse(message=ChatMessage(role="assistant", blocks=blocks))
    async def astream_chat(self, messages, **kwargs): return one(await self.achat(messages, **kwargs))  # the agent streams (its default)
def fake(tool):  # the tool keeps its metadata (name, description, schema); its body waits for the schedule
    async def body(**kwargs):  # handed its arguments, not its call id: the first call issued of that name and arguments not yet run
        call_id = next(i for i, n, a in issued if n == tool.metadata.name and json.loads(a) == kwargs and i not in started); started.add(call_id)
        await done[call_id].wait(); ran[call_id] = tool.metadata.name; runs[call_id] += not isinstance(outcome[call_id], Exception)
        if isinstance(outcome[call_id], Exception): raise outcome[call_id]
        return outcome[call_id]
    return FunctionTool.from_defaults(async_fn=body, tool_metadata=tool.metadata)
def build(user):  # the user's agent as configured (its class and fields) on the scripted model
    return type(user)(**{**{k: getattr(user, k) for k in type(user).model_fields}, "llm": Scripted(), "tools": [fake(t) for t in user.tools or []], "tool_retriever": None})
class Inline(concurrent.futures.ThreadPoolExecutor):  # blocking work (memory.aget) runs at once, in order (as prunecheck runs it)
    def submit(self, fn, /, *args, **kwargs): (future := concurrent.futures.Future()).set_result(fn(*args, **kwargs)); return future
async def step(*_):  # after each step: let LlamaIndex run until it waits on the model or a tool (a SQL memory: on its own threads)
    for n in range(500): await asyncio.sleep(0.001 if n % 10 == 0 else 0)
answer = lambda text, *calls: next(f for f in asked if not f.done()).set_result((text, calls))  # the model answers the oldest open request
finish = lambda call_id, result: (outcome.__setitem__(call_id, result), done[call_id].set())  # the tool of call_id returns result (or raises it)
def start(agent, memory, prompt):  # a turn of the app: agent.run(prompt, memory=memory)
    global handler; handler = agent.run(user_msg=prompt, memory=memory)
    asyncio.ensure_future(handler).add_done_callback(lambda t: t.cancelled() or t.exception() is None or print(f"(the turn raised {type(t.exception()).__name__}: {t.exception()})"))
''')

_MAIN = Template("""\
async def main():
    asyncio.get_running_loop().set_default_executor(Inline(max_workers=1))
$load
$steps
$checks\
    return print("not reproduced") or 0
if __name__ == "__main__": sys.exit(asyncio.run(main()))  # an error escaping is "could not run" (the excepthook), exit 2
""")


def _load(
    target_spec: str,
    folder: Path | None,
    *,
    factory: bool,
    paired: bool,
    memory_name: str | None,
    durable: bool = False,
) -> tuple[str, str]:
    """The lines importing the user's agent (or calling its factory), taking the
    app's memory and building the agent on the scripted model, and how the
    docstring names the agent."""
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
        lines = [f"    sys.path.insert(0, str({place_expr}))  # the user's module"]
    else:
        module, shown, lines = where, f"{attr}{call} of module {where}", []
    lines.append(f"    app = importlib.import_module({module!r})")
    if paired:
        lines.append(
            f"    user, memory = app.{attr}()[:2]  # the user's factory: the agent and its memory"
        )
    else:
        what = "the user's factory, called" if factory else "the user's agent"
        lines.append(f"    user = app.{attr}{call}  # {what}")
        if memory_name is not None:
            lines.append(f"    memory = app.{memory_name}  # the memory the app runs it with")
        else:
            lines.append(
                "    memory = ChatMemoryBuffer.from_defaults(llm=user.llm)  # LlamaIndex's default memory"
            )
    if durable:
        lines.append(
            "    memory.sql_store = type(memory.sql_store)(table_name=memory.sql_store.table_name, async_database_uri="
            'f"sqlite+aiosqlite:///{tempfile.mkdtemp()}/memory.db")  # its database, in a temporary folder'
        )
    lines.append("    agent = build(user)")
    return "\n".join(lines), shown


def _found_on() -> str:
    try:
        return json.dumps({"llama-index-core": version("llama-index-core")})
    except PackageNotFoundError:
        return "{}"


def _call(call: Mapping[str, Any]) -> str:
    return repr((call["id"], call["name"], call["arguments"]))


def step_lines(step: Mapping[str, Any]) -> list[str]:
    """The script's lines (inside ``main``) playing one schedule step."""
    kind = step["kind"]
    if kind in ("user", "new_message"):
        return [f"    await step(start(agent, memory, {step['text']!r}))"]
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
    if kind == "crash":
        return [
            "    asked.clear(), done.clear()  # a crash: the process's model call, tools and run never return",
            "    agent = build(user)  # a new process: the agent anew, its memory on the same database",
        ]
    if kind == "cancel":
        return [
            "    await step(await handler.cancel_run())  # LlamaIndex's cancel of the running turn"
        ]
    raise ValueError(f"the LlamaIndex adapter drives no {kind!r} step")


def script_text(
    target_spec: str,
    schedule_json: str,
    *,
    folder: Path | None = None,
    factory: bool = False,
    paired: bool = False,
    memory_name: str | None = None,
    durable: bool = False,
    says: Mapping[str, tuple[str, str]] | None = None,
) -> str:
    """The standalone script replaying ``schedule_json`` on ``target_spec``.

    Parameters
    ----------
    target_spec : str
        ``path/to/file.py:attr`` or ``package.module:attr`` (a workflow agent
        or a function of no argument building one, or ``(agent, memory)``).
    schedule_json : str
        The schedule (:func:`prunecheck.sim.subjects.loops.steps.schedule_to_json`); its
        ``expect`` (the violation kinds) chooses the script's checks.
    folder : Path or None
        Where the script will be written: it imports the user's file by its
        path relative to there (None: by its absolute path).
    factory : bool
        Whether ``attr`` is a factory (called) rather than the agent.
    paired : bool
        Whether the factory returns ``(agent, memory)``.
    memory_name : str or None
        The module-level memory the app runs the agent with (None: the
        factory's, or LlamaIndex's default).
    durable : bool
        Whether the memory is a ``Memory`` on a database file (the script
        puts its database in a temporary folder; a crash keeps it).
    says : Mapping or None
        What the provider that judged the schedule answered
        (:func:`._common.provider_says`): the script prints its text; None:
        OpenAI Chat Completions'.
    """
    schedule = json.loads(schedule_json)
    steps: Sequence[Mapping[str, Any]] = schedule["steps"]
    expect = set(schedule.get("expect") or ())
    load, agent = _load(target_spec, folder, factory=factory, paired=paired,
                        memory_name=memory_name, durable=durable)  # fmt: skip
    head = _HEAD.substitute(
        gate=VERSION_GATE,
        excepthook=SCRIPT_EXCEPTHOOK,
        agent=agent,
        scenario=schedule.get("scenario", "(none)"),
        kinds=", ".join(sorted(expect)) or "(not given)",
        version=version("prunecheck"),
        seed=schedule.get("seed", 0),
        found_on=_found_on(),
    )
    every = not expect
    checks: list[str] = []
    if every or expect & {"orphaned_result", "provider_rejection"}:
        checks.append(orphan_check(says))
    if every or expect & {"unanswered_call", "provider_rejection"}:
        checks.append(unanswered_check(says))
    for kind in ("synthesized_result", "truncated_payload"):
        if every or kind in expect:
            checks.append(_RESULT_CHECK.replace("{KIND}", kind))
    if every or "duplicated_side_effect" in expect:
        checks.append(_TWICE_CHECK)
    if every or "silent_loss" in expect:
        checks.append(_LOSS_CHECK)
    body = "\n".join(line for step in steps for line in step_lines(step))
    return compact(head + _MAIN.substitute(load=load, steps=body, checks="".join(checks)))

"""The AutoGen 0.2 reproduction: a short standalone script of one schedule.

:func:`script_text` writes a script of well under 80 lines on AutoGen 0.2's
public API alone: it checks the installed ``pyautogen`` against the release
the failure was found on (exit 2 naming both), imports the user's module by
its path relative to the script, builds the assistant as
:class:`~.pyautogen.PyAutoGenAdapter` does (its ``llm_config`` and its hooks,
the ``TransformMessages`` capability included) on a custom model client
(AutoGen's ``model_client_cls``) that answers the schedule's replies in order
and records every request, and a user proxy whose tools return the
schedule's outputs (or raise its failures).  Each user message is one
``initiate_chat(..., clear_history=False)``.  AutoGen 0.2 answers a parallel
batch with one tool message in the calls' order whatever order they finish
in, so the replay needs no concurrency.  It checks OpenAI's pairing rules on
every request, with their exact texts; its last line is ``reproduced: KIND:
detail`` (exit 1) or ``not reproduced`` (exit 0).
"""

# ruff: noqa: E501  (the template is the script's own lines, long where a reader wants them whole)

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from string import Template
from typing import Any

from prunecheck.model.provider.openai_chat import CALL_UNANSWERED, RESULT_ORPHANED
from prunecheck.sim.subjects.policy_spec import split_reference

from ._common import SCRIPT_EXCEPTHOOK
from .autogen_repro import _relative

__all__ = ["script_text"]

_SCRIPT = Template('''\
"""AutoGen 0.2: $agent, scenario class $scenario, violations $kinds;
found by prunecheck $version, seed $seed. Run: python <this file>, from any directory.
Exit status 0 = not reproduced, 1 = reproduced, 2 = could not run (another version, ...)."""
import contextlib, importlib, importlib.metadata, io, os, pathlib, sys, types

FOUND_ON = $found_on
HAVE = {d.metadata["Name"]: d.version for d in importlib.metadata.distributions()}
for dist, found in FOUND_ON.items():  # exit 2 unless installed as found
    if HAVE.get(dist) != found: sys.exit(print(f"could not run: found on {dist} {found}, installed {dist} {HAVE.get(dist, 'nothing')}") or 2)
$excepthook
from autogen import ConversableAgent
from openai.types.chat import ChatCompletionMessage
TURNS = $turns  # the user's messages
REPLIES = $replies  # the model's replies in order: text, calls (id, name, arguments)
OUTCOMES = $outcomes  # per tool, in call order: its output, or the error it raised
requests = []
class Stop(BaseException): pass  # the schedule ends here
class Model:  # AutoGen 0.2's custom model client: records each request, answers the next reply
    def __init__(self, config, **kwargs): pass
    def create(self, params):
        requests.append([dict(m) for m in params["messages"]])
        if not REPLIES: raise Stop
        text, calls = REPLIES.pop(0)
        calls = [{"id": i, "type": "function", "function": {"name": n, "arguments": a}} for i, n, a in calls]
        return types.SimpleNamespace(choices=[types.SimpleNamespace(message=ChatCompletionMessage(role="assistant", content=text or None, tool_calls=calls or None))], model="scripted", usage=None)
    def message_retrieval(self, response): return [c.message for c in response.choices]
    def cost(self, response): return 0.0
    @staticmethod
    def get_usage(response): return {}
def tool(name):
    def run(**kwargs):
        kind, value = OUTCOMES[name].pop(0)
        if kind == "ok": return value
        raise (TimeoutError if kind == "timeout" else RuntimeError)(value)
    return run
def main():
$load
    llm = {k: v for k, v in mine.llm_config.items() if k != "config_list"} | {"config_list": [{"model": "gpt-4o", "model_client_cls": "Model"}], "cache_seed": None}
    assistant = ConversableAgent(mine.name, system_message=mine.system_message, llm_config=llm, human_input_mode="NEVER", is_termination_msg=mine._is_termination_msg)
    assistant.register_model_client(model_client_cls=Model)
    assistant.hook_lists = {k: list(v) for k, v in mine.hook_lists.items()}  # the user's hooks (TransformMessages)
    proxy = ConversableAgent("user", llm_config=False, human_input_mode="NEVER", code_execution_config=False,
                             is_termination_msg=lambda m: not m.get("tool_calls"), function_map={n: tool(n) for n in OUTCOMES})
    for text in TURNS:
        try:
            with contextlib.redirect_stdout(io.StringIO()): proxy.initiate_chat(assistant, message=text, clear_history=False, silent=True)
        except Stop:
            break
    for n, request in enumerate(requests, 1):  # OpenAI's pairing rules, in its words
        called, waiting = set(), []
        for k, m in enumerate(request):
            if m.get("role") == "tool" and m.get("tool_call_id") not in called:
                print(f"reproduced: orphaned_result: request #{n}, messages.[{k}]: " + $orphan)
                return 1
            if m.get("role") != "tool" and waiting:
                print(f"reproduced: unanswered_call: request #{n}: " + $unanswered + ", ".join(waiting))
                return 1
            called |= {c["id"] for c in m.get("tool_calls") or []}
            waiting = [c["id"] for c in m.get("tool_calls") or []] if m.get("tool_calls") else [w for w in waiting if w != m.get("tool_call_id")]
    print(f"not reproduced: {len(requests)} requests, every tool message paired")
    return 0
if __name__ == "__main__":
    sys.exit(main())
''')


def _found_on() -> dict[str, str]:
    try:
        return {"pyautogen": version("pyautogen")}
    except PackageNotFoundError:
        return {}


def _prunecheck_version() -> str:
    try:
        return version("prunecheck")
    except PackageNotFoundError:
        return "(unknown)"


def _load(target_spec: str, folder: Path | None) -> tuple[str, str]:
    where, attr = split_reference(target_spec)
    if where.endswith(".py"):
        path = Path(where).resolve()
        place = _relative(path.parent, folder)
        if folder is not None and not Path(place).is_absolute():
            expr = f"pathlib.Path(__file__).resolve().parent / {place!r}"
        else:
            expr = repr(place)
        lines = [f"    sys.path.insert(0, str({expr}))  # the user's module", ""]
        module, shown = path.stem, f"{attr} of {place}/{path.name}"
    else:
        lines, module, shown = [""], where, f"{attr} of module {where}"
    lines[-1] = (f"    with contextlib.redirect_stdout(io.StringIO()): "
                 f"mine = getattr(importlib.import_module({module!r}), {attr!r})")  # fmt: skip
    return "\n".join(lines), shown


def _plan(steps: Sequence[Mapping[str, Any]]) -> tuple[list[str], list[Any], dict[str, list[Any]]]:
    turns: list[str] = []
    replies: list[Any] = []
    names: dict[str, str] = {}
    outcome: dict[str, tuple[str, str]] = {}
    order: list[str] = []
    for step in steps:
        kind = step["kind"]
        if kind in ("user", "new_message"):
            turns.append(str(step["text"]))
        elif kind == "reply":
            calls = [(c["id"], c["name"], c["arguments"]) for c in step.get("calls") or ()]
            replies.append((step.get("text", ""), calls))
            for call_id, name, _ in calls:
                names[call_id] = name
                order.append(call_id)
        elif kind == "complete":
            outcome[step["call"]] = ("ok", str(step["output"]))
        elif kind == "fail":
            outcome[step["call"]] = ("fail", str(step.get("error", "tool failed")))
        elif kind == "timeout":
            outcome[step["call"]] = ("timeout", f"the tool of {step['call']} timed out")
    per_tool: dict[str, list[Any]] = {}
    for call_id in order:
        per_tool.setdefault(names[call_id], []).append(outcome.get(call_id, ("ok", "")))
    return turns, replies, per_tool


def script_text(target_spec: str, schedule_json: str, *, folder: Path | None = None) -> str:
    """The standalone script replaying ``schedule_json`` on ``target_spec``
    (``path/to/file.py:assistant``, a ``ConversableAgent``); ``folder``: where
    the script will be written (it imports the user's file relative to it)."""
    schedule = json.loads(schedule_json)
    turns, replies, outcomes = _plan(schedule["steps"])
    load, shown = _load(target_spec, folder)
    return _SCRIPT.substitute(
        agent=shown,
        scenario=schedule.get("scenario", "(none)"),
        kinds=", ".join(sorted(schedule.get("expect") or ())) or "(not given)",
        version=_prunecheck_version(),
        seed=schedule.get("seed", 0),
        found_on=_found_on(),
        excepthook=SCRIPT_EXCEPTHOOK,
        turns=repr(turns),
        replies=repr(replies),
        outcomes=repr(outcomes),
        load=load,
        orphan=repr(RESULT_ORPHANED.template),
        unanswered=repr(CALL_UNANSWERED.template.removesuffix("{ids}")),
    )

"""The AutoGen AgentChat reproductions in reports/loops (issue 30): each is at
most 80 lines, what the adapter writes today, and run alone from a folder
outside the repository it exits 1 showing the bundle's broken request
(tests/repro_check.py).  One cell per violation kind runs in the fast suite,
the rest in ``make test-all``."""

from __future__ import annotations

import json
from importlib.metadata import version
from pathlib import Path

import pytest
import repro_check
from repro_check import Cell

from prunecheck.model.provider.openai_chat import RESULT_ORPHANED
from prunecheck.sim.reports.alone import run_alone
from prunecheck.sim.subjects.loops.frameworks.autogen import AutoGenAdapter
from prunecheck.sim.subjects.loops.frameworks.autogen_repro import script_text, step_lines

CELLS = repro_check.cells("autogen_")
#: One cell per violation kind the AutoGen cells show (fast); the rest are slow.
FAST = {
    "autogen_plain-agent-cancel",  # hang
    "autogen_plain-agent-crash_resume",  # provider_rejection (a resume sends an empty request)
    "autogen_plain-agent-crash_new_message",  # silent_loss
    "autogen_token_limited-agent-trim",  # orphaned_result, provider_rejection
    "autogen_token_limited-agent-parallel",  # unanswered_call
}


@pytest.fixture(autouse=True)
def _framework() -> None:
    pytest.importorskip("autogen_agentchat")
    pytest.importorskip("autogen_ext.models.replay")


def test_the_fast_cells_cover_every_violation_kind_of_the_autogen_cells() -> None:
    every = {kind for cell in CELLS for kind in cell.data["expect"]}
    fast = {kind for cell in CELLS if str(cell) in FAST for kind in cell.data["expect"]}
    assert {str(c) for c in CELLS} >= FAST
    assert fast == every


@pytest.mark.parametrize(
    "cell",
    [c if str(c) in FAST else pytest.param(c, marks=pytest.mark.slow) for c in CELLS],
    ids=str,
)
def test_the_reproduction_reproduces_alone(cell: Cell, tmp_path: Path) -> None:
    repro_check.check_reproduces(cell, tmp_path)


def test_a_reproduction_found_on_another_version_exits_2_naming_both(tmp_path: Path) -> None:
    repro_check.check_other_version_exits_2(CELLS[0], tmp_path)


# ---------------------------------------------------------------- the generator (no run)
_STEPS: list[dict[str, object]] = [
    {"kind": "user", "text": "hi"},
    {"kind": "reply", "text": "", "calls": [{"id": "call_1", "name": "search", "arguments": "{}"}]},
    {"kind": "complete", "call": "call_1", "output": "found"},
    {"kind": "crash"},
    {"kind": "new_message", "text": "again"},
]


def _schedule(steps: list[dict[str, object]], **extra: object) -> str:
    return json.dumps({"format": "prunecheck-loop-schedule/1", "seed": 3, "steps": steps, **extra})


def test_the_script_imports_the_users_file_relative_to_its_folder(tmp_path: Path) -> None:
    user = tmp_path / "app" / "agents" / "support.py"
    text = script_text(f"{user}:agent", _schedule(_STEPS), folder=tmp_path / "out" / "bugs")
    assert "pathlib.Path(__file__).resolve().parent / '../../app/agents'" in text
    assert "(sys.argv[1:] or ['support:agent'])" in text  # another agent: the script's argument
    assert "getattr(importlib.import_module(module), name)" in text
    assert str(tmp_path) not in text  # no machine path: same schedule, same bytes anywhere
    compile(text, "repro.py", "exec")


def test_the_script_imports_a_module_spec_by_its_name() -> None:
    text = script_text("mypkg.agents:make", _schedule(_STEPS[:2]))
    assert "agent = importlib.import_module('mypkg.agents').make(model_client=model)" in text
    assert "sys.path.insert" not in text and "build = " not in text  # no crash: built once


def test_the_version_gate_comes_first_and_names_the_installed_autogen() -> None:
    text = script_text("mypkg.agents:make", _schedule(_STEPS))
    gate = next(ln for ln in text.splitlines() if ln.startswith("FOUND_ON = "))
    found = json.loads(gate.removeprefix("FOUND_ON = "))
    assert next(iter(found)) == "autogen-agentchat"
    assert found["autogen-agentchat"] == version("autogen-agentchat")
    assert text.index("FOUND_ON = ") < text.index("from autogen_core import")
    assert "found by prunecheck" in text.splitlines()[1] and "seed 3" in text.splitlines()[1]


def test_the_checks_are_those_of_the_schedules_violations() -> None:
    loss = script_text("m:a", _schedule(_STEPS, expect=["silent_loss"], scenario="crash"))
    assert "silent_loss" in loss and "openai says" not in loss
    orphan = script_text("m:a", _schedule(_STEPS, expect=["orphaned_result", "provider_rejection"]))
    assert "orphaned_result" in orphan and "unanswered_call" not in orphan
    assert "ran[call_id]" not in orphan and "ran[call_id]" in loss
    every = script_text("m:a", _schedule(_STEPS))  # a schedule without expect: every check
    assert all(k in every for k in ("orphaned_result", "unanswered_call", "silent_loss"))


def test_each_step_is_a_line_of_plain_code() -> None:
    assert step_lines({"kind": "user", "text": "hi"}) == ["    await step(start(agent, 'hi'))"]
    assert step_lines({"kind": "timeout", "call": "call_2"}) == [
        "    await step(finish('call_2', TimeoutError('the tool of call_2 timed out')))"
    ]
    assert "token.cancel()" in step_lines({"kind": "cancel"})[0]
    assert step_lines({"kind": "resume"})[0].startswith("    await step(start(agent))")
    with pytest.raises(ValueError, match="approve"):
        step_lines({"kind": "approve", "call": "call_1", "approved": True})


_STREAMING = '''
from autogen_agentchat.agents import AssistantAgent


async def search(query: str) -> str:
    """Search."""
    raise NotImplementedError


def agent(model_client):
    return AssistantAgent("s", model_client=model_client, tools=[search], model_client_stream=True)
'''


@pytest.mark.slow
def test_a_streaming_agents_reproduction_records_its_requests(tmp_path: Path) -> None:
    """A ``model_client_stream=True`` agent asks the model through
    ``create_stream``: the script's model records and answers it there too."""
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "streaming.py").write_text(_STREAMING, encoding="utf-8")
    steps: list[dict[str, object]] = [*_STEPS[:3], {"kind": "user", "text": "more?"},
                                      {"kind": "reply", "text": "no"}]  # fmt: skip
    script = tmp_path / "out" / "repro.py"
    script.parent.mkdir()
    schedule = _schedule(steps, expect=["silent_loss"])
    text = script_text(f"{tmp_path}/app/streaming.py:agent", schedule, folder=script.parent)
    script.write_text(text, encoding="utf-8")
    done = run_alone(script, "autogen", tmp_path, keep_guard=False, timeout=120)
    assert (done.returncode, done.stdout.splitlines()[-1]) == (0, "not reproduced"), done.stderr
    assert "turn raised" not in done.stdout


def test_a_reproduction_whose_framework_is_missing_exits_2_naming_it(tmp_path: Path) -> None:
    """The version gate runs before any import of AutoGen: a distribution that
    is not installed is named with the version the failure was found on."""
    cell = CELLS[0]
    text = cell.script.read_text(encoding="utf-8")
    found = version("autogen-agentchat")
    script = tmp_path / cell.script.name
    script.write_text(text.replace('{"autogen-agentchat": ', '{"autogen-gone": ', 1))
    done = run_alone(script, "autogen", tmp_path, keep_guard=True, timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout.strip() == (
        f"could not run: autogen-gone is not installed (found on autogen-gone {found})"
    )


#: A module-level ``AssistantAgent`` (no factory) whose context keeps its newest 2 messages.
_MODULE_AGENT = Path(__file__).resolve().parent / "loops_ag_module_agent.py"
_ORPHANING: list[dict[str, object]] = [
    {"kind": "user", "text": "who is c-7?"},
    {"kind": "reply", "text": "", "calls": [{"id": "call_1", "name": "lookup",
                                             "arguments": '{"key": "c-7"}'}]},
    {"kind": "complete", "call": "call_1", "output": "c-7: Ada, since 2019"},
]  # fmt: skip


@pytest.mark.parametrize(
    ("scenario", "then"),
    [
        pytest.param("trim", [], marks=pytest.mark.slow, id="trim"),
        ("crash_new_message", [{"kind": "crash"}]),  # a new agent loads the saved state
    ],
)
def test_a_module_level_agents_reproduction_reproduces_alone(
    scenario: str, then: list[dict[str, object]], tmp_path: Path
) -> None:
    """The user's attribute is an ``AssistantAgent`` built at import on an
    ``OpenAIChatCompletionClient`` (no key set), not a factory: the script points
    its model client at the script's model, keeps its model context, and after a
    crash builds the new process's agent from the module imported anew."""
    pytest.importorskip("autogen_ext.models.openai")
    again: dict[str, object] = {"kind": "new_message" if then else "user", "text": "and c-8?"}
    steps = [*_ORPHANING, *then, again]
    schedule = _schedule(steps, scenario=scenario, expect=["orphaned_result", "provider_rejection"])
    script = tmp_path / "out" / "repro.py"
    script.parent.mkdir()
    text = AutoGenAdapter().script(f"{_MODULE_AGENT}:agent", schedule, folder=script.parent)
    assert len(text.splitlines()) <= repro_check.MAX_LINES
    assert "agent._model_client = model" in text  # not called as a factory
    script.write_text(text, encoding="utf-8")
    done = run_alone(script, "autogen", tmp_path, keep_guard=False, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    said = done.stdout.splitlines()
    assert said[-1] == "reproduced: orphaned_result: the result of call_1 is sent without its call"
    assert said[-2] == f"openai says: {RESULT_ORPHANED.template}"
    assert said[-3].startswith("request #2: ")
    sent = json.loads(said[-3].removeprefix("request #2: "))
    assert [m["role"] for m in sent] == ["system", "tool", "user"]


def test_a_resume_that_found_nothing_saved_reproduces_the_empty_request_quietly(
    tmp_path: Path,
) -> None:
    """A crash while the first request waits (nothing saved yet), then a resume:
    AutoGen sends the system prompt alone, which a provider that keeps it apart
    refuses.  The script checks for that request (not an orphaned result), prints
    the judged provider's text, and the crashed turn's tasks, kept as a dead
    process leaves them, print nothing when the script ends (they printed an
    OpenTelemetry traceback and "Task was destroyed but it is pending!")."""
    from prunecheck.sim.subjects.loops.judge import ANTHROPIC_NO_MESSAGES

    steps: list[dict[str, object]] = [
        {"kind": "user", "text": "user message 1"},
        {"kind": "crash"},
        {"kind": "resume"},
    ]
    schedule = _schedule(steps, scenario="crash_resume", expect=["provider_rejection"])
    script = tmp_path / "out" / "repro.py"
    script.parent.mkdir()
    user = Path(__file__).resolve().parent.parent / "examples" / "loops" / "autogen_plain.py"
    text = AutoGenAdapter().script(f"{user}:agent", schedule, folder=script.parent)
    assert "orphaned_result" not in text
    script.write_text(text, encoding="utf-8")
    done = run_alone(script, "autogen", tmp_path, keep_guard=False, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr
    said = done.stdout.splitlines()
    assert said[-1] == (
        "reproduced: provider_rejection: request #2 holds the system prompt and no conversation"
    )
    assert said[-2] == f"anthropic says: {ANTHROPIC_NO_MESSAGES}"
    assert done.stderr == ""


_SUMMARIZING = '''\
from autogen_agentchat.agents import AssistantAgent
from autogen_core.model_context import UnboundedChatCompletionContext
from autogen_core.models import AssistantMessage, SystemMessage, UserMessage


class Summarizing(UnboundedChatCompletionContext):
    """Past 3 messages, what came before the newest tool round is summarized."""

    def __init__(self, client):
        super().__init__()
        self.client = client

    async def get_messages(self):
        messages = await super().get_messages()
        rounds = [i for i, m in enumerate(messages)
                  if isinstance(m, AssistantMessage) and isinstance(m.content, list)]
        if len(messages) <= 3 or not rounds or rounds[-1] == 0:
            return messages
        text = "\\n".join(str(m.content) for m in messages[:rounds[-1]])
        done = await self.client.create([SystemMessage(content="Summarize."),
                                         UserMessage(content=text, source="user")])
        return [UserMessage(content=str(done.content), source="summary"), *messages[rounds[-1]:]]


def lookup(key: str) -> str:
    """Look a record up."""
    return key


def agent(model_client):
    return AssistantAgent("support", model_client=model_client, tools=[lookup],
                          model_context=Summarizing(model_client))
'''


def test_a_context_that_summarizes_on_the_agents_client_runs_in_the_script(
    tmp_path: Path,
) -> None:
    """A model context that asks the agent's client for a summary calls ``create``
    without a cancellation token: the script's model takes one or none (it
    required one, and such a script stopped at the summary with exit 2)."""
    from prunecheck.sim.subjects.loops.contract import ToolCall
    from prunecheck.sim.subjects.loops.scheduler import LoopRun
    from prunecheck.sim.subjects.loops.steps import (
        Complete,
        ReplyStep,
        Step,
        User,
        schedule_to_json,
    )
    from prunecheck.sim.subjects.loops.target import load_target

    user = tmp_path / "app" / "support.py"
    user.parent.mkdir()
    user.write_text(_SUMMARIZING, encoding="utf-8")
    spec = f"{user}:agent"
    call = ToolCall("call_1", "lookup", '{"key": "c-7"}')
    steps: list[Step] = [User("who is c-7?"), ReplyStep("", (call,)), Complete("call_1", "Ada"),
                         User("and c-8?"), ReplyStep("the user asked about c-7"),
                         ReplyStep("Let me look.")]  # fmt: skip
    target = load_target(f"loop:autogen:{spec}")
    with LoopRun(target.adapter, target.target) as run:  # the harness takes it: a valid schedule
        for one in steps:
            run.apply(one)
        assert run.side_request() is False and not run.incidents
    schedule = schedule_to_json(steps, target=spec)
    script = tmp_path / "out" / "repro.py"
    script.parent.mkdir()
    script.write_text(AutoGenAdapter().script(spec, schedule, folder=script.parent), "utf-8")
    done = run_alone(script, "autogen", tmp_path, keep_guard=False, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == "not reproduced"

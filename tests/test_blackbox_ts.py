"""TypeScript agents checked black-box: the Vercel AI SDK and the OpenAI Agents SDK.

``examples/blackbox/ts-vercel/agent.ts`` is a notes agent on ``ai`` 6
(``generateText`` multi-step tool calling, ``prepareStep`` trimming its
history; ``pruneMessages`` in the safe configuration);
``examples/blackbox/ts-openai-agents/agent.ts`` one on ``@openai/agents``
(``run`` with a file-backed session on the Responses API, a
``callModelInputFilter`` trimming each call's input).  Each runs as a
subprocess (``node --import tsx``) against the fake model endpoint, driven
by the loop harness's own :class:`~prunecheck.sim.subjects.loops.scheduler.LoopRun`.
Their packages come from the npm registry at the versions of their
``package-lock.json``, installed by ``make node-deps`` into their
``node_modules/`` (git-ignored); without ``node`` or without them the tests
are skipped, saying which and what to run.  Slow: each life of an agent is
a node process (about 1 s of CPU).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from prunecheck.model.incidents import IncidentKind
from prunecheck.sim.subjects.loops.contract import ToolCall
from prunecheck.sim.subjects.loops.scheduler import LoopRun
from prunecheck.sim.subjects.loops.steps import Complete, Crash, ReplyStep, Resume, User
from prunecheck.sim.subjects.loops.target import load_target

ROOT = Path(__file__).resolve().parent.parent
VERCEL = ROOT / "examples" / "blackbox" / "ts-vercel"
AGENTS = ROOT / "examples" / "blackbox" / "ts-openai-agents"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform != "linux", reason="black-box mode reads /proc"),
]

_CALLS = (
    ToolCall("call_1", "read_note", '{"name": "a"}'),
    ToolCall("call_2", "write_note", '{"name": "b"}'),
)
_ORPHANED = (
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
    "message with 'tool_calls'."
)


def _ready(folder: Path) -> None:
    if shutil.which("node") is None:
        pytest.skip("node is not on PATH: install Node.js 18+ (Debian: apt-get install nodejs)")
    locked = json.loads((folder / "package-lock.json").read_text())["packages"]
    for name, entry in locked.items():
        if not name.startswith("node_modules/") or entry.get("dev") or entry.get("optional"):
            continue
        there = folder / name / "package.json"
        if not there.exists() or json.loads(there.read_text())["version"] != entry["version"]:
            pytest.skip(
                f"{name.removeprefix('node_modules/')} {entry['version']} is not installed in "
                f"{folder / 'node_modules'}: run `make node-deps` (npm ci from its lockfile)"
            )


def _two_steps(manifest: Path) -> tuple[list[IncidentKind], list[list[str]]]:
    """One turn: a batch of two calls, one more call, the answer.  Returns
    the incidents found and the roles of what each request sent (the ledger
    holds a Responses or Messages body as Chat messages)."""
    _ready(manifest.parent)
    target = load_target(f"loop:process:{manifest}")
    found = []
    with LoopRun(target.adapter, target.target) as run:
        for step in (
            User("take notes"),
            ReplyStep("", _CALLS),
            Complete("call_1", "note a"),
            Complete("call_2", "note b"),
            ReplyStep("", (ToolCall("call_3", "read_note", '{"name": "c"}'),)),
            Complete("call_3", "note c"),
            ReplyStep("done"),
        ):
            if step.kind == "reply" and not run.pending_requests():
                break  # the request was rejected (HTTP 400): the agent's turn ended
            found += run.apply(step)
        sent = [r.body["messages"] for r in run.ledger.requests]
    roles = [[str(m["role"]) for m in messages] for messages in sent if isinstance(messages, list)]
    return [i.kind for i in found], roles


def test_the_unsafe_trim_sends_results_without_their_calls() -> None:
    kinds, roles = _two_steps(VERCEL / "agent.toml")
    # KEEP = 3: the third request keeps the results of call_1 and call_2, not their call
    assert roles[2] == ["system", "tool", "tool", "assistant", "tool"]
    assert IncidentKind.ORPHANED_RESULT in kinds and IncidentKind.PROVIDER_REJECTION in kinds


def test_prune_messages_drops_calls_with_their_results() -> None:
    # KEEP = 2: call_1 and call_2 are before the last 2 messages, their results with them
    kinds, roles = _two_steps(VERCEL / "agent_safe.toml")
    assert roles[2] == ["system", "user", "assistant", "tool"]
    assert IncidentKind.ORPHANED_RESULT not in kinds
    assert IncidentKind.PROVIDER_REJECTION not in kinds


def test_a_crash_is_a_sigkill_and_the_restart_reads_its_history() -> None:
    _ready(VERCEL)
    target = load_target(f"loop:process:{VERCEL / 'agent_safe.toml'}")
    with LoopRun(target.adapter, target.target) as run:
        run.apply(User("take notes"))
        run.apply(ReplyStep("", _CALLS))
        run.apply(Complete("call_1", "note a"))
        run.apply(Complete("call_2", "note b"))
        saved = json.loads((run.store / "history.json").read_text())
        run.apply(Crash())
        run.apply(Resume())
        resumed = run.ledger.requests[-1].body["messages"]
    # the step was saved when it finished: the restarted agent sends the batch and its results
    assert [m["role"] for m in saved] == ["user", "assistant", "tool"]
    assert isinstance(resumed, list)
    assert [m["role"] for m in resumed] == ["system", "user", "assistant", "tool", "tool"]


def test_the_agents_sdk_filter_that_cuts_anywhere_sends_outputs_without_calls() -> None:
    kinds, roles = _two_steps(AGENTS / "agent.toml")
    # KEEP = 3 items: the batch's second call and both outputs, call_1 cut away (the ledger
    # holds each Responses body as Chat messages: the instructions, a call, two outputs)
    assert roles[1] == ["system", "assistant", "tool", "tool"]
    assert IncidentKind.ORPHANED_RESULT in kinds and IncidentKind.PROVIDER_REJECTION in kinds


def test_the_agents_sdk_filter_that_cuts_at_user_messages_is_clean() -> None:
    kinds, roles = _two_steps(AGENTS / "agent_safe.toml")
    # the cut moves on to the user message: the whole turn is sent
    assert roles[2] == ["system", "user", "assistant", "tool", "tool", "assistant", "tool"]
    assert IncidentKind.ORPHANED_RESULT not in kinds
    assert IncidentKind.PROVIDER_REJECTION not in kinds

"""Black-box mode: the user's agent as a subprocess (``loop:process:MANIFEST.toml``).

The fast tests drive ``tests/blackbox_agents/tiny_agent.py`` (the standard
library alone: it starts in ~30 ms), through the loop harness's own
:class:`~prunecheck.sim.subjects.loops.scheduler.LoopRun`: a crash is a real
``SIGKILL`` of its process and a restart against the history file it
persists; a cancel is a real ``SIGINT``; every request it sends is judged.
The real ``openai`` client's example (``examples/blackbox/py_openai``) is
the slow twin (:mod:`test_blackbox_examples`).
"""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from prunecheck.model.errors import PolicyError
from prunecheck.model.incidents import IncidentKind
from prunecheck.sim.subjects.blackbox.process import ProcessLoop
from prunecheck.sim.subjects.loops.contract import ToolCall
from prunecheck.sim.subjects.loops.ledger import BodyEnd
from prunecheck.sim.subjects.loops.scheduler import LoopRun
from prunecheck.sim.subjects.loops.steps import (
    Cancel,
    Complete,
    Crash,
    ReplyStep,
    Resume,
    Step,
    User,
)
from prunecheck.sim.subjects.loops.target import load_target
from prunecheck.sim.subjects.policy_spec import SpecKind, parse_spec

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="black-box mode reads /proc")

AGENTS = Path(__file__).resolve().parent / "blackbox_agents"
ARGV = f"loop:process:{AGENTS / 'argv.toml'}"
REPL = f"loop:process:{AGENTS / 'repl.toml'}"
HTTP = f"loop:process:{AGENTS / 'http.toml'}"
_CALLS = (
    ToolCall("call_1", "read_note", '{"name": "a"}'),
    ToolCall("call_2", "write_note", '{"name": "b"}'),
)
_WITHOUT_RESULT = (
    "An assistant message with 'tool_calls' must be followed by tool messages responding to "
    "each 'tool_call_id'. The following tool_call_ids did not have response messages: call_2"
)


def test_the_spec_names_a_manifest() -> None:
    spec = parse_spec("loop:process:agents/a.toml")
    assert (spec.kind, spec.adapter, spec.where, spec.attr) == (
        SpecKind.LOOP, "process", "agents/a.toml", "")  # fmt: skip
    with pytest.raises(PolicyError, match=r"a \.toml file"):
        parse_spec("loop:process:agent.py:agent")


def _live(run: LoopRun) -> ProcessLoop:
    assert isinstance(run.loop, ProcessLoop)
    return run.loop


#: The stdin (REPL) agent under a loaded machine: its quiescence is judged by the
#: black-box wake window (docs/how-to/black-box.md), which a CI run of the parallel suite
#: missed twice on 2026-12-03 (a request read before the restarted agent sent its own).
#: Until that heuristic is made robust, these run in make test-all, not make test.
_LOAD_SENSITIVE = pytest.mark.slow


@pytest.mark.parametrize(
    "spec", [ARGV, pytest.param(REPL, marks=_LOAD_SENSITIVE)], ids=["argv", "stdin"]
)
def test_a_crash_is_a_sigkill_and_the_restart_reads_the_real_persistence(spec: str) -> None:
    target = load_target(spec)
    with LoopRun(target.adapter, target.target) as run:
        run.apply(User("hi"))
        run.apply(ReplyStep("", _CALLS))
        run.apply(Complete("call_1", "note a"))
        before = _live(run)
        assert before.proc is not None and before.proc.poll() is None  # alive, mid-batch
        killed = before.proc
        saved = json.loads((run.store / "history.json").read_text())
        run.apply(Crash())
        assert killed.returncode == -signal.SIGKILL  # killed, not asked to stop
        assert run.loop is None
        found = run.apply(Resume())
        after = _live(run)
        assert after is not before and after.proc is not None and after.proc.pid != killed.pid
        # the new process sent what the killed one had persisted: call_2 has no result
        resumed = run.ledger.requests[-1].body["messages"]
        assert resumed == saved
        assert [b.end for b in run.ledger.bodies] == [BodyEnd.OK, BodyEnd.DROPPED]
    texts = {i.text for i in found if i.kind is IncidentKind.PROVIDER_REJECTION}
    assert _WITHOUT_RESULT in texts
    assert IncidentKind.UNANSWERED_CALL in {i.kind for i in found}


def test_a_cancel_is_a_sigint_and_the_process_lives_on() -> None:
    target = load_target(REPL)
    with LoopRun(target.adapter, target.target) as run:
        run.apply(User("hi"))
        run.apply(ReplyStep("", _CALLS))
        run.apply(Complete("call_1", "note a"))
        pid = _live(run).proc.pid  # type: ignore[union-attr]
        assert not run.apply(Cancel())  # the turn ended: no hang
        assert not run.turn_running and _live(run).proc.pid == pid  # type: ignore[union-attr]
        assert [b.end for b in run.ledger.bodies] == [BodyEnd.OK, BodyEnd.CANCELLED]
        found = run.apply(User("again"))
    assert _WITHOUT_RESULT in {i.text for i in found}


def test_the_same_schedule_sends_the_same_requests() -> None:
    target = load_target(ARGV)
    steps: list[Step] = [User("hi"), ReplyStep("", _CALLS), Complete("call_1", "a"),
                         Complete("call_2", "b"), ReplyStep("done"), User("more")]  # fmt: skip
    sent: list[list[Mapping[str, object]]] = []
    judged = []
    for _ in range(2):
        with LoopRun(target.adapter, target.target) as run:
            for step in steps:
                run.apply(step)
            sent.append([r.body for r in run.ledger.requests])
            judged.append(run.incidents)
    assert sent[0] == sent[1] and len(sent[0]) == 3
    assert judged[0] == judged[1] and judged[0]  # the trim of the 3rd request: the same findings
    second = sent[0][1]["messages"]
    assert isinstance(second, list)
    assert [m.get("tool_call_id") for m in second[3:]] == ["call_1", "call_2"]


@_LOAD_SENSITIVE
def test_a_trim_that_cuts_a_result_from_its_call_is_judged_with_the_providers_text() -> None:
    target = load_target(REPL)  # KEEP = 4: the cut falls between the calls and their results
    with LoopRun(target.adapter, target.target) as run:
        run.apply(User("hi"))
        run.apply(ReplyStep("", _CALLS))
        run.apply(Complete("call_1", "a"))
        run.apply(Complete("call_2", "b"))
        run.apply(ReplyStep("done"))
        found = run.apply(User("more"))  # 7 messages: the system prompt and the last 4 are sent
    assert {i.kind for i in found} >= {
        IncidentKind.ORPHANED_RESULT,
        IncidentKind.PROVIDER_REJECTION,
    }
    assert any("must be a response to a preceeding message with 'tool_calls'" in i.text
               for i in found)  # fmt: skip


def test_a_manifest_that_breaks_a_rule_names_the_key(tmp_path: Path) -> None:
    bad = tmp_path / "agent.toml"
    bad.write_text('command = ["x"]\ninput = "stdin"\n[[tools]]\nname = "t"\n')
    with pytest.raises(PolicyError, match="needs ready"):
        load_target(f"loop:process:{bad}")
    bad.write_text('command = ["x"]\n[env]\nURL = "{base}"\n[[tools]]\nname = "t"\n')
    with pytest.raises(PolicyError, match=r"placeholder \{base\}"):
        load_target(f"loop:process:{bad}")


def test_user_input_over_the_http_hook_ends_a_turn_when_the_agent_asks_again() -> None:
    target = load_target(HTTP)  # KEEP = 4: the cut falls between the calls and their results
    with LoopRun(target.adapter, target.target) as run:
        run.apply(User("hi"))
        pid = _live(run).proc.pid  # type: ignore[union-attr]
        run.apply(ReplyStep("", _CALLS))
        run.apply(Complete("call_1", "a"))
        run.apply(Complete("call_2", "b"))
        run.apply(ReplyStep("done"))
        assert not run.turn_running  # it asked for the next message: the turn is over
        found = run.apply(User("more"))
        assert _live(run).proc.pid == pid  # type: ignore[union-attr]  # one process
        last = run.ledger.requests[-1].body["messages"]
        assert isinstance(last, list) and last[-1]["content"] == "more"
    assert IncidentKind.ORPHANED_RESULT in {i.kind for i in found}

"""The user's own session and context classes run as written: an OpenAI Agents SDK
``SQLiteSession`` subclass keeps its methods and attributes, on the run's
store instead of the app's file, and its trimming is judged (issue 31)."""

from __future__ import annotations

import pytest
from loops_sync_agents import APP_DIR, oa_app

from prunecheck.sim.subjects.loops.contract import Capability, ToolCall
from prunecheck.sim.subjects.loops.scheduler import LoopRun
from prunecheck.sim.subjects.loops.steps import Complete, ReplyStep, User


@pytest.fixture(autouse=True)
def _framework() -> None:
    pytest.importorskip("agents")


def test_a_session_subclass_that_trims_is_the_trim_hook() -> None:
    from prunecheck.sim.subjects.loops.frameworks.openai_agents import OpenAIAgentsAdapter

    caps = OpenAIAgentsAdapter().capabilities(oa_app)
    assert Capability.TRIM_HOOK in caps and Capability.CRASH_NEW_MESSAGE in caps


def test_the_users_session_class_runs_on_the_store_and_its_trim_is_judged() -> None:
    from prunecheck.sim.subjects.loops.frameworks.openai_agents import OpenAIAgentsAdapter

    read = ToolCall("call_1", "read_file", '{"path": "a"}')
    with LoopRun(OpenAIAgentsAdapter(), oa_app) as run:
        session = run.loop._session  # type: ignore[union-attr]
        assert type(session).__name__ == "LastFour" and session.keep == 4
        assert session.session_id == "customer-42" and str(run.store) in str(session.db_path)
        for step in (User("read a"), ReplyStep("", (read,)), Complete("call_1", "A"),
                     ReplyStep("done"), User("and then?"), ReplyStep("nothing"),
                     User("sure?")):  # fmt: skip
            run.apply(step)
        last = run.ledger.requests[-1].body["messages"]
        kinds = {i.kind.value for i in run.incidents}
    assert isinstance(last, list)
    # the session handed the runner its last 4 items: the call's output without its call
    assert [m["role"] for m in last] == ["system", "tool", "assistant", "user", "assistant", "user"]
    assert "orphaned_result" in kinds
    db = APP_DIR / "sessions.sqlite"
    import sqlite3

    with sqlite3.connect(db) as conn:  # the app's own file: nothing of the run in it
        assert conn.execute("SELECT COUNT(*) FROM agent_messages").fetchone() == (0,)


def test_an_autogen_agent_object_keeps_its_own_context_class() -> None:
    pytest.importorskip("autogen_agentchat")
    from loops_sync_agents import ag_custom_context

    from prunecheck.sim.subjects.loops.frameworks.autogen import AutoGenAdapter

    agent = ag_custom_context()
    read = ToolCall("call_1", "read_file", '{"path": "a"}')
    with LoopRun(AutoGenAdapter(), agent) as run:
        assert Capability.TRIM_HOOK in run.capabilities
        context = run.loop._agent._model_context  # type: ignore[union-attr]
        assert type(context).__name__ == "LastThree" and context is not agent._model_context
        for step in (User("hi"), ReplyStep("", (read,)), Complete("call_1", "one"), User("more")):
            run.apply(step)
        bodies = [r.body["messages"] for r in run.ledger.requests]
        sent = [[m["role"] for m in body] for body in bodies if isinstance(body, list)]
    # the user's get_messages hands the model its last 3 messages: the first user message is gone
    assert sent == [["system", "user"], ["system", "assistant", "tool", "user"]]
    assert agent._model_context._messages == []  # the user's own object is never written

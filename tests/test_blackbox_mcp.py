"""The MCP tool server: planned latency, failures, timeouts and output sizes,
each tool body run recorded; read by the official ``mcp`` package's client
over streamable HTTP (in process) and stdio (a child process, as an agent
starts it)."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from prunecheck.model.errors import ConfigError
from prunecheck.sim.subjects.blackbox.tool_bodies import ToolBodies
from prunecheck.sim.subjects.blackbox.tool_plan import (
    OutcomeKind,
    ServerPlan,
    ToolOutcome,
    ToolPlan,
    filler,
    plan_from_json,
    plan_to_json,
    read_records,
)

# The mcp package is looked for, not imported, at collection: every xdist worker
# collects every test file, and importing mcp there cost each worker about 0.6 s
# of CPU; the tests of the real client import it themselves.
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("mcp") is None, reason="the mcp package is not installed"
)

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


def _plan(record: Path | None = None) -> ServerPlan:
    return ServerPlan(
        (
            ToolPlan(
                "read",
                "Read a file.",
                SCHEMA,
                (
                    ToolOutcome(size=5000),
                    ToolOutcome(OutcomeKind.FAIL, text="disk full"),
                    ToolOutcome(OutcomeKind.TIMEOUT, latency=0.01),
                ),
            ),
            ToolPlan("wait", "Never returns.", outcomes=(ToolOutcome(OutcomeKind.HANG),)),
        ),
        seed=7,
        record=record,
    )


def _run(bodies: ToolBodies, name: str, **arguments: Any) -> tuple[str, bool]:
    result = asyncio.run(bodies.run(name, arguments))
    return result.text, result.is_error


def test_bodies_do_what_the_plan_says_and_record_each_run(tmp_path: Path) -> None:
    record = tmp_path / "runs.jsonl"
    bodies = ToolBodies(_plan(record))
    assert _run(bodies, "read", path="a") == (filler(7, "read", 0, 5000), False)
    assert _run(bodies, "read", path="b") == ("disk full", True)
    assert _run(bodies, "read", path="c") == ("read timed out after 0.01 s", True)
    assert _run(bodies, "read", path="d")[1]  # the last outcome repeats
    assert _run(bodies, "nope")[0].startswith("Unknown tool: nope")
    on_file = read_records(record)
    assert on_file == bodies.records
    assert [(r.run, r.event, r.outcome) for r in on_file[:4]] == [
        (0, "start", ""),
        (0, "end", "ok"),
        (1, "start", ""),
        (1, "end", "fail"),
    ]
    assert on_file[0].arguments == {"path": "a"} and on_file[1].output_chars == 5000


def test_a_restarted_server_counts_on_from_the_record(tmp_path: Path) -> None:
    record = tmp_path / "runs.jsonl"
    _run(ToolBodies(_plan(record)), "read", path="a")
    again = ToolBodies(_plan(record))  # as after the agent (and its stdio server) restarted
    assert _run(again, "read", path="b") == ("disk full", True)
    assert [r.run for r in read_records(record)] == [0, 0, 1, 1]


def test_a_hanging_body_is_recorded_as_cancelled() -> None:
    bodies = ToolBodies(_plan())

    async def cancel_it() -> None:
        task = asyncio.ensure_future(bodies.run("wait", {}))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_it())
    assert [(r.event, r.outcome) for r in bodies.records] == [("start", ""), ("end", "cancelled")]


def test_the_plan_file_is_read_again_when_it_changes(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan_to_json(_plan())))
    bodies = ToolBodies(plan_from_json(json.loads(path.read_text())), path)
    changed = plan_to_json(ServerPlan((ToolPlan("read", outcomes=(ToolOutcome(text="new"),)),)))
    path.write_text(json.dumps(changed))
    import os

    os.utime(path, ns=(1, 1))  # a different mtime whatever the clock's resolution
    assert _run(bodies, "read", path="a") == ("new", False)


def test_plan_json_round_trips() -> None:
    plan = _plan(Path("runs.jsonl"))
    assert plan_from_json(json.loads(json.dumps(plan_to_json(plan)))) == plan


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ({"tools": []}, '"format"'),
        ({"format": "prunecheck-mcp-plan/1", "tools": []}, "non-empty list"),
        (
            {
                "format": "prunecheck-mcp-plan/1",
                "tools": [{"name": "a", "outcomes": [{"kind": "x"}]}],
            },
            "none of ok",
        ),
        (
            {
                "format": "prunecheck-mcp-plan/1",
                "tools": [{"name": "a", "outcomes": [{"latency": -1}]}],
            },
            "latency",
        ),
        ({"format": "prunecheck-mcp-plan/1", "tools": [{"name": "a"}, {"name": "a"}]}, "unique"),
    ],
)
def test_a_bad_plan_is_named(data: object, says: str) -> None:
    with pytest.raises(ConfigError, match=says) as caught:
        plan_from_json(data, "p.json")
    assert "MCP tool plan p.json" in str(caught.value)


# The real MCP client (imported inside the tests that use it; see pytestmark).


async def _session_calls(session: Any) -> dict[str, Any]:
    await session.initialize()
    listed = await session.list_tools()
    ok = await session.call_tool("read", {"path": "a"})
    failed = await session.call_tool("read", {"path": "b"})
    return {"tools": listed.tools, "ok": ok, "failed": failed}


def _check_session(got: dict[str, Any]) -> None:
    assert [(t.name, t.inputSchema) for t in got["tools"]] == [
        ("read", SCHEMA),
        ("wait", {"type": "object", "properties": {}}),
    ]
    assert not got["ok"].isError and got["ok"].content[0].text == filler(7, "read", 0, 5000)
    assert got["failed"].isError and got["failed"].content[0].text == "disk full"


def test_streamable_http_with_the_mcp_client(tmp_path: Path) -> None:
    from mcp import ClientSession
    from mcp.client import streamable_http
    from mcp.shared.exceptions import McpError

    from prunecheck.sim.subjects.blackbox.mcp_server import HttpToolServer

    async def agent(url: str) -> dict[str, Any]:
        connect = getattr(streamable_http, "streamable_http_client", None)
        connect = connect or streamable_http.streamablehttp_client  # mcp before 1.2x
        async with (
            connect(url) as (read, write, _),
            ClientSession(read, write) as session,
        ):
            got = await _session_calls(session)
            with pytest.raises(McpError):  # the client's own timeout on a hanging tool
                await session.call_tool("wait", {}, read_timeout_seconds=timedelta(seconds=0.2))
            return got

    with HttpToolServer(_plan(tmp_path / "runs.jsonl")) as tools:
        _check_session(asyncio.run(agent(tools.url)))
        records = tools.bodies.records
    assert [(r.tool, r.event) for r in records][:5] == [
        ("read", "start"),
        ("read", "end"),
        ("read", "start"),
        ("read", "end"),
        ("wait", "start"),
    ]
    # the client hung up (session closed, server stopped): the hanging body was cancelled
    assert (records[-1].tool, records[-1].outcome) == ("wait", "cancelled")


@pytest.mark.slow
def test_stdio_with_the_mcp_client(tmp_path: Path) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    record = tmp_path / "runs.jsonl"
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(plan_to_json(_plan(record))))
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "prunecheck.sim.subjects.blackbox.mcp_server", str(plan_file)],
    )

    async def agent() -> dict[str, Any]:
        async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
            return await _session_calls(session)

    _check_session(asyncio.run(agent()))
    assert [(r.run, r.event, r.outcome) for r in read_records(record)] == [
        (0, "start", ""),
        (0, "end", "ok"),
        (1, "start", ""),
        (1, "end", "fail"),
    ]


@pytest.mark.parametrize(
    ("content", "args", "says"),
    [
        ("{not json", [], "cannot be read as JSON"),
        (
            '{"format": "prunecheck-mcp-plan/1", "tools": [{"name": ""}]}',
            [],
            "non-empty string name",
        ),
        (
            '{"format": "prunecheck-mcp-plan/1", "tools": [{"name": "a"}]}',
            ["--http", "8765"],
            "HOST:PORT",
        ),
    ],
)
def test_the_server_command_names_a_bad_plan_in_one_paragraph(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, args: list[str], says: str
) -> None:
    from prunecheck.sim.subjects.blackbox.mcp_server import main

    plan = tmp_path / "plan.json"
    plan.write_text(content)
    assert main([str(plan), *args]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err
    assert err.count("\n") == 1 and err.startswith("prunecheck: ")


def test_with_a_hook_the_harness_decides_each_body(tmp_path: Path) -> None:
    """``--hook``: each call goes to the loop harness's tool hook, which answers
    (or not) when the schedule says so; a body the client gives up on is seen
    there as gone, and recorded as cancelled."""
    import threading

    from mcp import ClientSession
    from mcp.client import streamable_http
    from mcp.shared.exceptions import McpError

    from prunecheck.sim.subjects.blackbox.mcp_server import HttpToolServer
    from prunecheck.sim.subjects.blackbox.tool_hook import ToolHook, ToolRequest

    answers = {
        '{"path": "a"}': {"ok": True, "output": "from the harness"},
        '{"path": "b"}': {"ok": False, "error": "took too long", "timeout": True},
    }
    seen: list[ToolRequest] = []
    hook = ToolHook()
    stop = threading.Event()

    def harness() -> None:  # answers a and b, leaves c waiting
        while not stop.wait(0.01):
            for request in hook.take():
                seen.append(request)
                if request.arguments in answers:
                    request.finish(answers[request.arguments])

    async def agent(url: str) -> list[Any]:
        connect = getattr(streamable_http, "streamable_http_client", None)
        connect = connect or streamable_http.streamablehttp_client  # mcp before 1.2x
        async with connect(url) as (read, write, _), ClientSession(read, write) as session:
            await session.initialize()
            got = [await session.call_tool("read", {"path": p}) for p in "ab"]
            with pytest.raises(McpError):
                await session.call_tool(
                    "read", {"path": "c"}, read_timeout_seconds=timedelta(seconds=0.3)
                )
            return got

    answering = threading.Thread(target=harness, daemon=True)
    answering.start()
    try:
        with HttpToolServer(_plan(), hook=hook.url) as tools:
            ok, timed_out = asyncio.run(agent(tools.url))
            records = tools.bodies.records
    finally:
        stop.set()
        answering.join(5)
        hook.close()
    assert (ok.isError, ok.content[0].text) == (False, "from the harness")
    assert (timed_out.isError, timed_out.content[0].text) == (True, "took too long")
    assert [(r.name, r.arguments) for r in seen] == [
        ("read", '{"path": "a"}'),
        ("read", '{"path": "b"}'),
        ("read", '{"path": "c"}'),
    ]
    assert seen[2].gone and seen[2].answer is None  # the harness saw the body cancelled
    assert [r.outcome for r in records if r.event == "end"] == ["ok", "timeout", "cancelled"]

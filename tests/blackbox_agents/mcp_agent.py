"""A black-box agent whose tools are MCP tools: prunecheck's MCP server over stdio.

Chat Completions over ``urllib`` (as ``tiny_agent.py``), its history in
``$AGENT_HOME/history.json``; each tool call goes through an MCP client
session (the official ``mcp`` package) to the server it starts as a child
process: ``python -m prunecheck.sim.subjects.blackbox.mcp_server PLAN --hook
URL`` (the manifest's ``{mcp_plan}`` and ``{tools_url}``).  One turn per
process: ``python mcp_agent.py TEXT``, or ``--resume``.
"""

import asyncio
import json
import os
import sys
import urllib.request
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

HISTORY = Path(os.environ["AGENT_HOME"]) / "history.json"
SERVER = StdioServerParameters(command=sys.executable, args=[
    "-m", "prunecheck.sim.subjects.blackbox.mcp_server", os.environ["MCP_PLAN"],
    "--hook", os.environ["TOOLS"]])  # fmt: skip


def ask(history: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    body = json.dumps({"model": "m", "messages": history, "tools": tools}).encode()
    headers = {"Content-Type": "application/json", "Authorization": "Bearer " + os.environ["KEY"]}
    request = urllib.request.Request(
        os.environ["BASE"] + "/chat/completions", body, headers=headers
    )
    reply: dict[str, Any] = json.loads(urllib.request.urlopen(request, timeout=300).read())
    message: dict[str, Any] = reply["choices"][0]["message"]
    return message


async def main(argv: list[str]) -> int:
    history = (
        json.loads(HISTORY.read_text())
        if HISTORY.exists()
        else [{"role": "system", "content": "notes"}]
    )
    if argv[:1] != ["--resume"]:
        history.append({"role": "user", "content": " ".join(argv)})
    async with stdio_client(SERVER) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listed = (await session.list_tools()).tools
        tools = [{"type": "function", "function": {"name": t.name, "parameters": t.inputSchema}}
                 for t in listed]  # fmt: skip
        while True:
            message = ask(history, tools)
            history.append(
                {k: v for k, v in message.items() if k in ("role", "content", "tool_calls")}
            )
            HISTORY.write_text(json.dumps(history))
            for call in message.get("tool_calls") or []:
                fn = call["function"]
                result = await session.call_tool(fn["name"], json.loads(fn["arguments"] or "{}"))
                text = "".join(getattr(part, "text", "") for part in result.content)
                history.append({"role": "tool", "tool_call_id": call["id"], "content": text})
                HISTORY.write_text(json.dumps(history))
            if not message.get("tool_calls"):
                return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))

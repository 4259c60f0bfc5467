"""The MCP tool server: the agent's tools, run as the harness plans them.

Built on the official ``mcp`` package (``pip install 'prunecheck[blackbox]'``;
imported here only, never by ``import prunecheck``), it offers the tools of a
:class:`~.tool_plan.ServerPlan` over either MCP transport:

- **stdio** -- the agent starts it as a child process, as it starts any
  stdio MCP server::

      python -m prunecheck.sim.subjects.blackbox.mcp_server PLAN.json

- **streamable HTTP** -- in the harness's process, on loopback
  (:class:`HttpToolServer`, :attr:`HttpToolServer.url` ends in ``/mcp``),
  or as a process: ``python -m … mcp_server PLAN.json --http 127.0.0.1:8765``.

Each call runs a :class:`~.tool_bodies.ToolBodies` body: the latency,
failure, timeout or hang and the output size the plan chose, or, with
``--hook URL`` (or ``$PRUNECHECK_TOOL_HOOK``), whatever the loop harness's
tool hook answers when the schedule says so; each run is recorded (the
plan's ``record`` file, and :attr:`ToolBodies.records` in process).  A
call the client cancels (``notifications/cancelled``, or its connection
closed) ends the body, recorded as ``cancelled``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import sys
import threading
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Self

try:
    import anyio
    import uvicorn
    from mcp import types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.applications import Starlette
    from starlette.routing import Route
except ImportError as exc:  # pragma: no cover - the extra is part of make's venv
    raise ImportError(
        f"prunecheck's MCP tool server needs the official mcp package ({exc.name} is "
        "missing): pip install 'prunecheck[blackbox]'"
    ) from exc

from prunecheck.model.errors import PrunecheckError

from .tool_bodies import ToolBodies
from .tool_plan import ServerPlan, load_plan

__all__ = ["HOOK_VARIABLE", "HttpToolServer", "build_server", "main", "serve_stdio"]

#: The environment variable that names the harness's tool hook (``--hook``'s default).
HOOK_VARIABLE = "PRUNECHECK_TOOL_HOOK"


def build_server(bodies: ToolBodies) -> Server[Any, Any]:
    """The MCP server offering ``bodies``' tools (low-level API: the plan's
    JSON schemas are offered as they are)."""
    server: Server[Any, Any] = Server("prunecheck-tools")

    @server.list_tools()  # type: ignore[no-untyped-call, untyped-decorator]
    async def _list() -> list[types.Tool]:
        return [
            types.Tool(name=t.name, description=t.description, inputSchema=dict(t.parameters))
            for t in bodies.current_plan().tools
        ]

    @server.call_tool(validate_input=False)  # type: ignore[untyped-decorator]
    async def _call(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        result = await bodies.run(name, arguments)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=result.text)], isError=result.is_error
        )

    return server


async def serve_stdio(bodies: ToolBodies) -> None:
    """Serve over this process's stdin and stdout until the client closes them."""
    server = build_server(bodies)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


class _Endpoint:
    """The session manager as a plain ASGI app (a Starlette route)."""

    def __init__(self, manager: StreamableHTTPSessionManager) -> None:
        self.manager = manager

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.manager.handle_request(scope, receive, send)


def _app(bodies: ToolBodies) -> Starlette:
    manager = StreamableHTTPSessionManager(app=build_server(bodies))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    route = Route("/mcp", endpoint=_Endpoint(manager), methods=["GET", "POST", "DELETE"])
    return Starlette(routes=[route], lifespan=lifespan)


class HttpToolServer:
    """The tool server over streamable HTTP, on loopback, in a thread.

    Example::

        with HttpToolServer(plan) as tools:
            run_agent(mcp_url=tools.url)
            tools.bodies.records          # every body run, start and end
    """

    def __init__(
        self, plan: ServerPlan, host: str = "127.0.0.1", port: int = 0, hook: str | None = None
    ) -> None:
        self.bodies = ToolBodies(plan, hook=hook)
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind((host, port))
        config = uvicorn.Config(_app(self.bodies), log_level="warning", lifespan="on")
        self._server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT/mcp``."""
        host, port = self._socket.getsockname()[:2]
        return f"http://{host}:{port}/mcp"

    def start(self) -> Self:
        """Serve in a daemon thread until :meth:`stop`; returns self once it listens."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._server.run,
                kwargs={"sockets": [self._socket]},
                name="prunecheck-mcp-tools",
                daemon=True,
            )
            self._thread.start()
            while not self._server.started and self._thread.is_alive():
                self._thread.join(0.01)
        return self

    def stop(self) -> None:
        """Stop serving (hanging bodies are cancelled)."""
        if self._thread is not None:
            self._server.should_exit = True
            self._thread.join(10)
            self._thread = None
        self._socket.close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m prunecheck.sim.subjects.blackbox.mcp_server PLAN [--http HOST:PORT]``."""
    parser = argparse.ArgumentParser(
        prog="python -m prunecheck.sim.subjects.blackbox.mcp_server",
        description="Serve the tools of a prunecheck-mcp-plan/1 file over MCP "
        "(stdio by default; --http for streamable HTTP at /mcp).",
    )
    parser.add_argument("plan", type=Path, help="the plan file (JSON)")
    parser.add_argument("--http", metavar="HOST:PORT", help="serve streamable HTTP here")
    parser.add_argument(
        "--hook",
        metavar="URL",
        default=os.environ.get(HOOK_VARIABLE) or None,
        help="the loop harness's tool hook: each call is posted there and the harness "
        f"decides its outcome (default: ${HOOK_VARIABLE}; none: the plan's outcomes)",
    )
    args = parser.parse_args(argv)
    try:
        plan = load_plan(args.plan)
    except PrunecheckError as exc:
        print(f"prunecheck: {exc.paragraph()}", file=sys.stderr)
        return 2
    bodies = ToolBodies(plan, args.plan, args.hook)
    if args.http:
        host, _, port = str(args.http).rpartition(":")
        if not host or not port.isdigit():
            print(f"prunecheck: --http {args.http}: expected HOST:PORT.", file=sys.stderr)
            return 2
        uvicorn.run(_app(bodies), host=host, port=int(port), log_level="warning")
        return 0
    anyio.run(serve_stdio, bodies)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

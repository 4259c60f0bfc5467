"""The harness's tool hook: a black-box agent's tool bodies, over loopback HTTP.

A black-box agent's tools are the harness's: each tool body of the agent
(or the MCP server standing for its tools) posts the call to the hook and
returns what the hook answers, so the harness decides when each body
ends, and how (its output, a failure, a timeout), and its ledger holds
every body that ran.  ``POST /tool`` with the JSON object
``{"name": ..., "arguments": {...} or "...", "id": "call_..." (optional)}``
answers, once the schedule says so::

    {"ok": true, "output": "..."}
    {"ok": false, "error": "...", "timeout": false}

A call whose id the agent does not know is matched to the earliest issued
call of that name and arguments whose body has not started (as the
in-process adapters' are).  The server is a thread per connection on
127.0.0.1; the harness takes the calls it received with :meth:`ToolHook.take`,
on its own thread, and answers each with :meth:`ToolRequest.finish`.
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer

from .flight import CountedHandler, Flight

__all__ = ["ToolHook", "ToolRequest"]

#: Real seconds a tool body waits for the harness before it gives up (the run is over).
_PATIENCE = 120.0
#: Real seconds between two looks at a waiting agent's socket.
_POLL = 0.02


@dataclass(eq=False, slots=True)
class ToolRequest:
    """One tool body the agent started, waiting for the harness's decision."""

    name: str
    arguments: str
    id: str = ""
    answer: dict[str, object] | None = None
    gone: bool = False  # the agent hung up (a cancel, a crash): nobody waits for the answer
    written: bool = False  # the answer was written to the agent's socket (or cannot be)
    _done: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def finished(self) -> bool:
        """Whether the harness answered it (the answer may not be written yet)."""
        return self._done.is_set()

    def finish(self, answer: dict[str, object]) -> None:
        """Answer the body (``{"ok": ..., "output" | "error": ...}``)."""
        self.answer = answer
        self._done.set()


class _Handler(CountedHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        return

    def _send(self, status: int, doc: dict[str, object]) -> None:
        data = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            doc = json.loads(self.rfile.read(length) or b"{}")
            name = doc["name"]
            args = doc.get("arguments", {})
            assert isinstance(name, str)
        except (ValueError, KeyError, AssertionError, TypeError):
            self._send(400, {"ok": False, "error": 'POST {"name": ..., "arguments": ...}'})
            return
        text = args if isinstance(args, str) else json.dumps(args, sort_keys=True)
        request = ToolRequest(name, text, str(doc.get("id") or ""))
        with self.server.lock:
            self.server.inbox.append(request)
        self.landed()  # in the inbox: the harness sees it
        deadline = time.monotonic() + _PATIENCE
        while not request._done.wait(_POLL):
            if self._hung_up() or time.monotonic() > deadline:
                request.gone = request.written = True
                self.close_connection = True
                return
        try:
            if request.answer is None:
                self._send(503, {"ok": False, "error": "the harness ended the run"})
            else:
                self._send(200, request.answer)
        finally:
            request.written = True

    def _hung_up(self) -> bool:
        """Whether the agent closed its side of the connection."""
        try:
            ready, _, _ = select.select([self.connection], [], [], 0)
            return bool(ready) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        """Quiet: an agent killed mid-call leaves a broken pipe, which is no news."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lock = threading.Lock()
        self.inbox: list[ToolRequest] = []
        self.flight = Flight()


class ToolHook:
    """The hook's server, started at once; :meth:`close` stops it."""

    def __init__(self) -> None:
        self._server = _Server()
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
            name="prunecheck-tool-hook", daemon=True,
        )  # fmt: skip
        self._thread.start()
        self.port = int(self._server.server_address[1])
        self.url = f"http://127.0.0.1:{self.port}/tool"
        #: Requests read but not yet in the inbox (:mod:`.flight`).
        self.flight = self._server.flight

    def take(self) -> list[ToolRequest]:
        """The calls received since the last take, in arrival order."""
        with self._server.lock:
            out, self._server.inbox[:] = list(self._server.inbox), []
        return out

    def close(self) -> None:
        """Stop the server; bodies still waiting are told the run ended."""
        for request in self.take():
            request.finish({"ok": False, "error": "the harness ended the run"})
        self._server.shutdown()
        self._server.server_close()

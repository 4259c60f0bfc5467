"""The harness's input hook: a black-box agent's user messages over loopback HTTP.

An agent whose manifest says ``input = "http"`` asks for its next user
message with ``GET {input_url}``.  The request waits until the harness sends
a message (:meth:`InputHook.give`), answered ``{"text": "..."}``, or ends the
run, answered ``{"end": true}`` (the agent then exits).  A request waiting
here *is* the agent's turn being over, as a ready line is for input on
standard input: a fact the harness reads (:meth:`InputHook.waiting`), not a
timing.  The server is a thread per connection on 127.0.0.1, the standard
library alone.
"""

from __future__ import annotations

import json
import select
import socket
import threading
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer

from .flight import CountedHandler, Flight

__all__ = ["InputHook"]

#: Real seconds between two looks at a waiting agent's socket.
_POLL = 0.02


@dataclass(eq=False, slots=True)
class _Ask:
    """One ``GET``: the agent waits for its next message."""

    answer: dict[str, object] | None = None
    gone: bool = False  # the agent hung up
    written: bool = False  # the answer was written (or cannot be)
    done: threading.Event = field(default_factory=threading.Event)


class _Handler(CountedHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        return

    def do_GET(self) -> None:
        ask = _Ask()
        with self.server.lock:
            self.server.asks.append(ask)
        self.landed()  # the harness sees it waiting
        while not ask.done.wait(_POLL):
            if self._hung_up():
                ask.gone = ask.written = True
                self.close_connection = True
                return
        data = json.dumps(ask.answer or {"end": True}).encode()
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        finally:
            ask.written = True

    def _hung_up(self) -> bool:
        try:
            ready, _, _ = select.select([self.connection], [], [], 0)
            return bool(ready) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        """Quiet: an agent killed while it waits leaves a broken pipe."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lock = threading.Lock()
        self.asks: list[_Ask] = []
        self.flight = Flight()


class InputHook:
    """The input hook's server, started at once; :meth:`close` stops it."""

    def __init__(self) -> None:
        self._server = _Server()
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
            name="prunecheck-input-hook", daemon=True,
        )  # fmt: skip
        self._thread.start()
        self.port = int(self._server.server_address[1])
        self.url = f"http://127.0.0.1:{self.port}/next"
        #: Requests read but not yet waiting (:mod:`.flight`).
        self.flight = self._server.flight

    def _open(self) -> list[_Ask]:
        with self._server.lock:
            self._server.asks[:] = [a for a in self._server.asks if not a.written]
            return [a for a in self._server.asks if not a.done.is_set() and not a.gone]

    def waiting(self) -> bool:
        """Whether the agent waits for its next message."""
        return bool(self._open())

    def unwritten(self) -> bool:
        """Whether a message given is not yet written to the agent's socket."""
        with self._server.lock:
            return any(a.done.is_set() and not a.written for a in self._server.asks)

    def give(self, text: str) -> None:
        """Answer the agent's oldest waiting ``GET`` with ``text``."""
        asks = self._open()
        if not asks:
            raise RuntimeError("the agent does not wait for a message")
        asks[0].answer = {"text": text}
        asks[0].done.set()

    def close(self) -> None:
        """Stop the server; a waiting agent is told the run ended."""
        for ask in self._open():
            ask.done.set()
        self._server.shutdown()
        self._server.server_close()

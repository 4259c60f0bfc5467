"""Requests a harness server has read from the kernel but not yet handed over.

Between the moment a server's thread reads a request off its socket and the
moment the harness can see it (an exchange recorded, a tool call in the
hook's inbox), the request is neither in the kernel (:func:`.quiet.in_transit`)
nor at the harness.  :class:`Flight` counts such requests; a handler
(:class:`CountedHandler`) enters it *before* it takes a request's first
bytes off its socket (it waits until the socket is readable, enters, then
reads) and leaves it when it hands the request over
(:meth:`CountedHandler.landed`), or at the latest when the request is done.
So at every instant a request is in the kernel, in the flight, or at the
harness, and a reader that looks in that order (:meth:`.process.ProcessLoop.busy`:
the kernel's queues, then :meth:`Flight.busy`, then what was handed over)
cannot miss it.  (Entering only once the request line was parsed left a
window, between the read and the parse, in which a second tool call of a
parallel batch was nowhere the harness looked: seen on the ``@openai/agents``
example under load, a run and its replay then disagreed on the calls
waiting.)  A count, not a timing.
"""

from __future__ import annotations

import contextlib
import select
import threading
from http.server import BaseHTTPRequestHandler

__all__ = ["CountedHandler", "Flight"]


class Flight:
    """A thread-safe count of requests read but not yet handed over."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count = 0

    def enter(self) -> None:
        with self._lock:
            self._count += 1

    def leave(self) -> None:
        with self._lock:
            self._count -= 1

    def busy(self) -> bool:
        """Whether some request is between its socket and the harness."""
        with self._lock:
            return self._count > 0


class CountedHandler(BaseHTTPRequestHandler):
    """A request handler whose server has a :class:`Flight` (``server.flight``)."""

    _flying = False

    def _flight(self) -> Flight | None:
        flight = getattr(self.server, "flight", None)
        return flight if isinstance(flight, Flight) else None

    def parse_request(self) -> bool:
        """Called as soon as the request line is read: the request is in flight."""
        flight = self._flight()
        if flight is not None and not self._flying:
            flight.enter()
            self._flying = True
        return super().parse_request()

    def landed(self) -> None:
        """The request is handed over (or answered): it left the flight."""
        flight = self._flight()
        if flight is not None and self._flying:
            self._flying = False
            flight.leave()

    def _await_request(self, flight: Flight) -> None:
        """Enter the flight before the next request's bytes leave the kernel: at once
        if some already wait in the reader's buffer (a client that sent ahead),
        else once the socket is readable (bytes, or the client's hang-up)."""
        flight.enter()
        self._flying = True
        buffered = b""
        peek = getattr(self.rfile, "peek", None)  # (a BufferedReader's)
        with contextlib.suppress(OSError, ValueError, TypeError):
            self.connection.setblocking(False)
            try:
                buffered = peek(1) if peek is not None else b""  # one read that would not wait
            finally:
                self.connection.settimeout(self.timeout)
        if buffered:
            return
        self._flying = False
        flight.leave()
        with contextlib.suppress(OSError, ValueError):
            select.select([self.connection], [], [])
        flight.enter()
        self._flying = True

    def handle_one_request(self) -> None:
        flight = self._flight()
        try:
            if flight is not None and not self._flying:
                self._await_request(flight)
            super().handle_one_request()
        finally:
            self.landed()

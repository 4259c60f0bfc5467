"""Requests a harness server has read from the kernel but not yet handed over.

Between the moment a server's thread reads a request off its socket and the
moment the harness can see it (an exchange recorded, a tool call in the
hook's inbox), the request is neither in the kernel (:func:`.quiet.in_transit`)
nor at the harness.  :class:`Flight` counts such requests; a handler
(:class:`CountedHandler`) enters it when it starts reading a request and
leaves it when it hands the request over (:meth:`CountedHandler.landed`), or
at the latest when the request is done.  The harness's quiescence asks
:meth:`Flight.busy` (:mod:`.process`): a count, not a timing.
"""

from __future__ import annotations

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

    def handle_one_request(self) -> None:
        try:
            super().handle_one_request()
        finally:
            self.landed()

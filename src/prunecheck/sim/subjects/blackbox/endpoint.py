"""The fake model endpoint: OpenAI and Anthropic APIs on loopback, scripted.

An agent in any language, pointed at :attr:`FakeEndpoint.url` (its base URL
and a key by environment variable, :meth:`FakeEndpoint.env`), talks to this
server as to its provider: ``POST …/chat/completions`` (OpenAI Chat
Completions), ``POST …/responses`` (OpenAI Responses) and ``POST
…/messages`` (Anthropic Messages), streamed (``"stream": true``, SSE in each
API's event format, :mod:`.sse`) or not (:mod:`.wire`).

Every request is recorded as an :class:`~.exchange.Exchange`, in arrival
order (:attr:`FakeEndpoint.exchanges`).  A request the real provider would
reject (its history breaks the provider's rules, checked by
:func:`prunecheck.model.provider.validate`) is answered at once with that
provider's HTTP 400 and exact error body, and uses no scripted reply.  Any
other request is answered by, in this order: the next reply queued with
:meth:`FakeEndpoint.script`; the ``responder`` callback; else it waits,
pending, until the harness takes it (:meth:`FakeEndpoint.next_exchange`)
and calls :meth:`~.exchange.Exchange.answer`.  While it waits and while it
streams, a client that hangs up is detected (``Outcome.DISCONNECTED``).

The standard library only: :mod:`http.server` in a thread, one thread per
connection, HTTP/1.1 keep-alive, streams in chunked transfer encoding.

Example::

    with FakeEndpoint() as endpoint:
        endpoint.script(Reply(calls=(ToolCall("call_1", "read", '{"path": "a"}'),)),
                        Reply(text="done"))
        run_agent(env=endpoint.env())            # the agent's requests …
        [x.body for x in endpoint.exchanges]     # … as it sent them
"""

from __future__ import annotations

import contextlib
import json
import queue
import select
import socket
import threading
import time
from collections.abc import Callable, Mapping
from http.server import ThreadingHTTPServer
from types import TracebackType
from typing import Self

from prunecheck.model.errors import TranscriptError
from prunecheck.model.provider import Provider, ProviderError, validate

from ..loops.contract import Reply
from .exchange import PROVIDER_OF, Api, Exchange, Outcome, Timing
from .flight import CountedHandler, Flight
from .responses_state import ResponseStore
from .sse import events
from .wire import NOT_FOUND_KIND, error_body, ids, plain_error, reply_body, responses_items

__all__ = ["FakeEndpoint", "Responder", "api_of"]

#: A callback that may answer an exchange at once: a reply (and its timing),
#: or None to leave it pending.
Responder = Callable[[Exchange], Reply | tuple[Reply, Timing] | None]

_SUFFIXES = (
    ("/chat/completions", Api.CHAT),
    ("/responses", Api.RESPONSES),
    ("/messages", Api.MESSAGES),
)
_POLL = 0.02  # seconds between two looks at a waiting client's socket


def api_of(path: str) -> Api | None:
    """The API a request path names, whatever prefix the base URL gave it.

    >>> api_of("/v1/chat/completions"), api_of("/messages?beta=true"), api_of("/v1/models")
    (<Api.CHAT: 'chat'>, <Api.MESSAGES: 'messages'>, None)
    """
    bare = path.split("?", 1)[0].rstrip("/")
    for suffix, api in _SUFFIXES:
        if bare.endswith(suffix):
            return api
    return None


class FakeEndpoint:
    """A scripted model endpoint on loopback (see the module docstring).

    Parameters
    ----------
    host, port :
        Where to listen; port 0 picks a free one (:attr:`url` tells it).
    check :
        Judge every request by its provider's rules and answer a broken
        one with the provider's HTTP 400 (default).  False: answer all.
    responder :
        Called (in the request's thread) for a request no scripted reply
        answers; returns a reply, ``(reply, timing)`` or None (pending).
    answer_timeout :
        Seconds a request waits for the harness before it gets HTTP 503.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        check: bool = True,
        responder: Responder | None = None,
        answer_timeout: float = 60.0,
    ) -> None:
        self.check = check
        self.responder = responder
        self.answer_timeout = answer_timeout
        self.exchanges: list[Exchange] = []
        self._script: queue.SimpleQueue[tuple[Reply, Timing]] = queue.SimpleQueue()
        self._pending: queue.SimpleQueue[Exchange] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._responses = ResponseStore()
        self._stopping = threading.Event()
        self._server = _Server((host, port), _Handler)
        self._server.endpoint = self
        self._server.flight = self.flight = Flight()
        self._thread: threading.Thread | None = None

    # Life cycle.

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``: Anthropic's base URL (its SDK adds ``/v1/messages``)."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def port(self) -> int:
        """The port it listens on, on 127.0.0.1."""
        return int(self._server.server_address[1])

    @property
    def openai_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``: OpenAI's base URL (its SDK adds ``/chat/completions``)."""
        return self.url + "/v1"

    def env(self, key: str = "sk-prunecheck-fake") -> dict[str, str]:
        """The environment variables that point the official SDKs here."""
        return {
            "OPENAI_BASE_URL": self.openai_url,
            "OPENAI_API_KEY": key,
            "ANTHROPIC_BASE_URL": self.url,
            "ANTHROPIC_API_KEY": key,
        }

    def start(self) -> Self:
        """Serve in a daemon thread (idempotent); returns self."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._server.serve_forever,
                kwargs={"poll_interval": 0.05},
                name="prunecheck-fake-endpoint",
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; requests still waiting get HTTP 503 (``Outcome.UNANSWERED``)."""
        self._stopping.set()
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join()
            self._thread = None
        self._server.server_close()
        for exchange in list(self.exchanges):
            exchange._settle(Outcome.UNANSWERED)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # The harness's side.

    def script(self, *replies: Reply | tuple[Reply, Timing]) -> None:
        """Queue replies: each answers the next request not rejected, in order."""
        for reply in replies:
            self._script.put(reply if isinstance(reply, tuple) else (reply, Timing()))

    def next_exchange(self, timeout: float | None = None) -> Exchange:
        """The oldest exchange left pending (none scripted, none from the
        responder), waiting up to ``timeout`` seconds for one.

        Raises
        ------
        TimeoutError
            If no request came in time.
        """
        try:
            return self._pending.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no pending model request within {timeout} s") from None

    def requests(self) -> list[Mapping[str, object]]:
        """Every request body received, in order."""
        return [x.body for x in self.exchanges]

    # The handler's side.

    def _receive(
        self, path: str, api: Api, headers: Mapping[str, str], body: Mapping[str, object]
    ) -> Exchange:
        stream = body.get("stream") is True
        with self._lock:
            exchange = Exchange(len(self.exchanges), api, path, dict(headers), body, stream)
            self.exchanges.append(exchange)
        if api is Api.RESPONSES:
            exchange.conversation, missing = self._responses.conversation(body)
            if missing is not None and self.check:
                previous = str(body.get("previous_response_id"))
                exchange.rejection = ProviderError(
                    Provider.OPENAI_RESPONSES,
                    NOT_FOUND_KIND,
                    "previous_response_id",
                    (previous,),
                    missing,
                )
                return exchange
        if self.check:
            try:
                errors = validate(
                    exchange.judged_body, PROVIDER_OF[api], source=f"request {exchange.index}"
                )
            except TranscriptError:
                errors = []  # not a transcript we can judge: answered, the harness sees the body
            if errors:
                exchange.rejection = errors[0]
                return exchange
        try:
            reply, timing = self._script.get_nowait()
        except queue.Empty:
            chosen = self.responder(exchange) if self.responder else None
            if chosen is None:
                self._pending.put(exchange)
                return exchange
            reply, timing = chosen if isinstance(chosen, tuple) else (chosen, Timing())
        exchange.answer(reply, timing)
        return exchange

    def _replying(self, exchange: Exchange, reply: Reply) -> None:
        """Store a Responses reply, as the provider does, for later requests to refer to."""
        if exchange.api is Api.RESPONSES:
            self._responses.remember(
                ids(Api.RESPONSES, exchange.index),
                exchange.judged_body,
                responses_items(exchange.index, reply),
            )


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    endpoint: FakeEndpoint
    flight: Flight


class _Handler(CountedHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: the exchanges are the log."""

    def do_GET(self) -> None:
        self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:
        endpoint = self.server.endpoint
        raw = self._read_body()
        api = api_of(self.path)
        if api is None:
            self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        try:
            body = json.loads(raw or b"{}")
        except (json.JSONDecodeError, UnicodeDecodeError):
            self._json(
                400, plain_error(api, "prunecheck fake endpoint: the request body is not JSON")
            )
            return
        if not isinstance(body, dict):
            self._json(
                400,
                plain_error(api, "prunecheck fake endpoint: the request body is not a JSON object"),
            )
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        exchange = endpoint._receive(self.path, api, headers, body)
        self.landed()  # recorded: the harness sees it
        if exchange.rejection is not None:
            exchange._settle(Outcome.REJECTED)
            self._json(exchange.rejection.status, error_body(api, exchange.rejection))
            return
        reply = self._wait_for_reply(exchange)
        if reply is None:
            return
        endpoint._replying(exchange, reply)
        if not self._sleep(exchange, exchange.timing.delay):
            return
        if exchange.stream:
            self._stream(exchange, reply)
        else:
            with exchange._changed:
                exchange.outcome = Outcome.SENDING
            if self._json(200, reply_body(api, exchange.index, body, reply)):
                exchange._settle(Outcome.ANSWERED)
            else:
                exchange._settle(Outcome.DISCONNECTED)

    def _read_body(self) -> bytes:
        """The request body, sent with a length or in chunks (as Go and Rust
        clients stream one)."""
        if "chunked" not in (self.headers.get("transfer-encoding") or "").lower():
            size = int(self.headers.get("content-length") or 0)
            return self.rfile.read(size) if size else b""
        out = bytearray()
        while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
            out += self.rfile.read(size)
            self.rfile.readline()
        while self.rfile.readline() not in (b"\r\n", b"\n", b""):  # trailers
            pass
        return bytes(out)

    # Waiting, watching the client.

    def _hung_up(self) -> bool:
        """True if the client closed its side of the connection."""
        try:
            ready, _, _ = select.select([self.connection], [], [], 0)
            if not ready:
                return False
            peeked: bytes = self.connection.recv(1, socket.MSG_PEEK)
            return peeked == b""
        except (OSError, ValueError):
            return True

    def _wait_for_reply(self, exchange: Exchange) -> Reply | None:
        endpoint = self.server.endpoint
        deadline = time.monotonic() + endpoint.answer_timeout
        while True:
            reply = exchange._await_reply(_POLL)
            if reply is not None:
                return reply
            if self._hung_up():
                exchange._settle(Outcome.DISCONNECTED)
                self.close_connection = True
                return None
            if endpoint._stopping.is_set() or time.monotonic() > deadline:
                message = "prunecheck fake endpoint: no reply was scripted for this request"
                self._json(503, plain_error(exchange.api, message, "overloaded_error"))
                exchange._settle(Outcome.UNANSWERED)
                return None

    def _sleep(self, exchange: Exchange, seconds: float) -> bool:
        """Sleep ``seconds`` watching the client; False if it hung up."""
        until = time.monotonic() + seconds
        while (left := until - time.monotonic()) > 0:
            time.sleep(min(left, _POLL))
            if self._hung_up():
                exchange._settle(Outcome.DISCONNECTED)
                self.close_connection = True
                return False
        return True

    # Writing.

    def _json(self, status: int, payload: object) -> bool:
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            self.close_connection = True
            return False
        return True

    def _stream(self, exchange: Exchange, reply: Reply) -> None:
        stream = events(exchange.api, exchange.index, exchange.body, reply)
        cut = exchange.timing.cut_after
        with exchange._changed:
            exchange.outcome = Outcome.SENDING
        try:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream; charset=utf-8")
            self.send_header("cache-control", "no-cache")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            self.wfile.flush()
            for at, event in enumerate(stream):
                if cut is not None and at >= cut:
                    self.close_connection = True
                    with contextlib.suppress(OSError):
                        self.connection.shutdown(socket.SHUT_RDWR)
                    exchange._settle(Outcome.CUT)
                    return
                if at and not self._sleep(exchange, exchange.timing.gap):
                    return
                self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
                self.wfile.flush()
                exchange.events_sent = at + 1
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError:
            self.close_connection = True
            exchange._settle(Outcome.DISCONNECTED)
            return
        exchange._settle(Outcome.ANSWERED)

"""What the black-box harness reads to know that nothing is on its way to or from the agent.

:func:`prunecheck.sim.subjects.blackbox.quiet.in_transit` and its parts read
counts the kernel keeps (``/proc/net/tcp``'s queues and states, pending
signals, a pipe's unread bytes); :mod:`prunecheck.sim.subjects.blackbox.flight`
counts requests a server read but did not hand over yet.  Each is asserted
on real sockets, a real pipe and a real stopped process: no timing.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator

import pytest

from prunecheck.sim.subjects.blackbox.quiet import (
    loopback_backlog,
    signals_pending,
    unread_bytes,
)
from prunecheck.sim.subjects.blackbox.tool_hook import ToolHook, ToolRequest

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="black-box mode reads /proc")


@pytest.fixture
def server() -> Iterator[socket.socket]:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    yield listener
    listener.close()


def _backlog(listener: socket.socket) -> list[str]:
    return loopback_backlog({listener.getsockname()[1]})


def test_every_byte_and_hang_up_between_client_and_server_is_seen(server: socket.socket) -> None:
    port = server.getsockname()[1]
    assert _backlog(server) == []
    client = socket.create_connection(("127.0.0.1", port))
    assert _backlog(server) == [f"not accepted by the server 127.0.0.1:{port} (1)"]
    conn, _ = server.accept()
    assert _backlog(server) == []
    client.sendall(b"POST /")
    assert _backlog(server) == [f"unread by the server 127.0.0.1:{port} (6 bytes)"]
    assert conn.recv(100) == b"POST /"
    conn.sendall(b"200")
    assert _backlog(server) == [f"unread by a client of 127.0.0.1:{port} (3 bytes)"]
    assert client.recv(100) == b"200"
    assert _backlog(server) == []
    client.close()  # a cancel: the agent hangs up
    assert _backlog(server) == [f"closed by the client of 127.0.0.1:{port}, not yet seen"]
    assert conn.recv(100) == b""
    conn.close()
    assert _backlog(server) == []


def test_a_line_of_input_is_in_transit_until_read() -> None:
    read, write = os.pipe()
    try:
        os.write(write, b"hello\n")
        assert unread_bytes(write) == 6
        os.read(read, 100)
        assert unread_bytes(write) == 0
    finally:
        os.close(read)
        os.close(write)


def test_a_signal_is_in_transit_until_delivered() -> None:
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        os.kill(sleeper.pid, signal.SIGSTOP)  # stopped: what it is sent stays pending
        os.waitpid(sleeper.pid, os.WUNTRACED)  # (returns once it has stopped)
        assert not signals_pending([sleeper.pid])
        os.kill(sleeper.pid, signal.SIGUSR1)  # (not SIGINT: a background job ignores it)
        assert signals_pending([sleeper.pid])
    finally:
        sleeper.kill()
        sleeper.wait()
    assert not signals_pending([sleeper.pid])  # gone: nothing to read


def test_the_hook_hands_a_call_over_and_says_when_its_answer_is_written() -> None:
    hook = ToolHook()
    try:
        body = json.dumps({"id": "call_1", "name": "read_note", "arguments": {"name": "a"}})
        post = urllib.request.Request(hook.url, body.encode(), method="POST")
        post.add_header("Content-Type", "application/json")
        answers: list[dict[str, object]] = []
        client = threading.Thread(
            target=lambda: answers.append(json.loads(urllib.request.urlopen(post).read()))
        )
        client.start()
        taken: list[ToolRequest] = []
        while not taken:
            taken = hook.take()
            client.join(0.001)
        (request,) = taken
        assert not hook.flight.busy()  # handed over: no longer in flight
        assert not request.finished and not request.written
        request.finish({"ok": True, "output": "note a"})
        assert request.finished
        client.join()
        assert answers == [{"ok": True, "output": "note a"}]
        for _ in range(5000):  # the hook's thread marks it right after the client got it
            if request.written:
                break
            time.sleep(0.001)
        assert request.written
    finally:
        hook.close()


class _Outside:
    """An agent outside the process as the loop's clock sees it: busy for its
    first ``calls`` questions, its CPU time ``step`` nanoseconds more at each."""

    def __init__(self, calls: int, step: int | None) -> None:
        self.calls, self.step, self.asked, self.spent = calls, step, 0, 0

    def busy(self) -> bool:
        self.asked += 1
        return self.asked <= self.calls

    def cpu(self) -> int | None:
        if self.step is None:
            return None
        self.spent += self.step
        return self.spent


def _settle(outside: object) -> None:
    from prunecheck.sim.subjects.loops.clock import VirtualLoop

    loop = VirtualLoop(thread_patience=0.02)
    loop.outside = outside  # type: ignore[assignment]
    try:
        loop.settle()
    finally:
        loop.close()


def test_an_agent_that_runs_slowly_is_waited_for_past_the_wall_clock_patience() -> None:
    """Its CPU time moves (it runs, slowly: a loaded machine) and stays far below the
    patience: 400 questions, each after a sleep of at least a millisecond, outlast the
    0.02 s patience of the wall clock, and the clock still waits for it."""
    from prunecheck.sim.subjects.loops.clock import LoopStuck

    _settle(_Outside(400, step=1))
    with pytest.raises(LoopStuck, match="worked over 0 s"):
        _settle(_Outside(400, step=0))  # it does not run at all: still, stuck
    with pytest.raises(LoopStuck, match="spent 0 s of CPU time"):
        _settle(_Outside(10**6, step=10**8))  # 0.1 CPU-s a question: it works on its own
    with pytest.raises(LoopStuck, match="worked over 0 s"):
        _settle(_Outside(400, step=None))  # no CPU time to go by: the wall clock alone


def test_a_request_read_off_its_socket_but_not_yet_parsed_is_in_flight(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The hook's thread is held right after it read the request's first line, before
    it parses it (as a thread the scheduler or the GIL holds there): the request has
    left the kernel and is not in the inbox, so the flight must count it."""
    from prunecheck.sim.subjects.blackbox import tool_hook

    reached, release = threading.Event(), threading.Event()
    parse = tool_hook._Handler.parse_request

    def held(self: tool_hook._Handler) -> bool:
        reached.set()
        release.wait(30)
        return parse(self)

    monkeypatch.setattr(tool_hook._Handler, "parse_request", held)
    hook = ToolHook()
    try:
        body = json.dumps({"id": "call_1", "name": "read_note", "arguments": {"name": "a"}})
        post = urllib.request.Request(hook.url, body.encode(), method="POST")
        post.add_header("Content-Type", "application/json")
        client = threading.Thread(target=lambda: urllib.request.urlopen(post).read())
        client.start()
        assert reached.wait(30)
        assert not hook.take()  # not handed over
        assert hook.flight.busy()  # but counted
        release.set()
        taken: list[ToolRequest] = []
        while not taken:
            taken = hook.take()
            client.join(0.001)
        taken[0].finish({"ok": True, "output": "note a"})
        client.join()
    finally:
        release.set()
        hook.close()

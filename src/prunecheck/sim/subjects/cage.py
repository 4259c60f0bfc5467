"""User policies run in a cage: one worker process per policy, a pipe and a watchdog.

A policy loaded from a user's module or file (list functions and the
LangChain adapter included) never runs inside prunecheck's own process.
:func:`caged` starts a worker (:mod:`.cage_worker`) that imports the policy
and answers ``select`` calls; :class:`CagedPolicy` sends it a *copy* of the
view and reads back a proposal, which the runtime validates again as if the
policy had returned it directly.  A message the worker already holds is sent
as its id only (messages are immutable: the same object is the same
message), so a call costs about the messages that changed, not the context.
A question asked before — the same messages, pending calls, budget, usage,
time, turn and need — is answered from the worker's memo of its answers
without a round trip (a search replays the same prefixes many times over),
but only while the policy is proven a pure function of its view: its worker
snapshots what the policy can keep state in after every call
(:mod:`.cage_state`) and says when it moved, and the first
``VERIFY_HITS`` answers from memory are asked again and compared.  A
policy that keeps state (a counter, its own random draws, a cache) or
answers one question two ways has its memo off for good from that call on,
so it is asked exactly as its runtime would ask it.  So whatever a policy
does —

- exit (``sys.exit``, ``os._exit``), raise any ``BaseException``, crash,
- hang or busy-loop (the watchdog stops it after its time limit),
- exhaust memory (the worker runs under an address-space limit),
- print (its standard output is prunecheck's standard error),
- mutate what it is given, by any means (it holds a copy),

— prunecheck reports it as that policy's :class:`PolicyError` (one
paragraph naming the policy and what it did), never as a verdict, and the
runtime's accounting cannot be touched.  A worker that hung or died stays
dead: every later call fails at once with the first failure's words, so a
search that shrinks a hang does not wait the time limit again and again.

Built-in policies stay in-process (the fast path).  Set
``PRUNECHECK_CAGE=0`` to run user policies in-process too (for a debugger);
``PRUNECHECK_POLICY_MEMORY_MB`` sets the worker's memory limit (default
4096; 0 for none).
"""

from __future__ import annotations

import atexit
import contextlib
import copy
import json
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from prunecheck.model.actions import Action, Clear, Summarize
from prunecheck.model.context import Message
from prunecheck.model.errors import PolicyError, PolicyTimeout
from prunecheck.model.policies import ContextView
from prunecheck.model.provider import Provider
from prunecheck.sim.support.environment import memory_limit_mb

__all__ = [
    "LOAD_TIMEOUT",
    "MAX_WORKERS",
    "MEMO_SIZE",
    "VERIFY_HITS",
    "CagedPolicy",
    "Dead",
    "Worker",
    "caged",
    "call_limit",
    "close_all",
    "failed_for_good",
    "set_deadline",
    "worker_for",
]

#: Seconds a policy's module may take to import in its worker.
LOAD_TIMEOUT = 60.0
#: Policy workers one process keeps (the one used longest ago is closed).
MAX_WORKERS = 8
#: Answers a worker's memo holds (the oldest go first).
MEMO_SIZE = 8192
#: Answers from memory a worker is asked again for, and compared with (a
#: policy answering one question two ways has its memo off from then on).
VERIFY_HITS = 32
#: Largest answer (bytes) a worker may send; a bigger one is the policy's error.
_MAX_ANSWER = 64 * 2**20
_HEADER = struct.Struct(">I")


def _memory_limit() -> int:
    return memory_limit_mb() * 2**20


#: A :func:`time.monotonic` instant no call into a worker may wait past
#: (``--time-limit``); None: no limit.
_DEADLINE: list[float | None] = [None]


def set_deadline(deadline: float | None) -> None:
    """Make every later call into a worker (policy or runtime) stop waiting
    at ``deadline`` (a :func:`time.monotonic` instant, from ``--time-limit``),
    however long its own time limit; None lifts it."""
    _DEADLINE[0] = deadline


def call_limit(timeout: float) -> tuple[float | None, bool]:
    """Seconds one call may wait — its ``timeout`` (0: none) or what is left
    of the ``--time-limit``, whichever is less — and whether the time limit
    is what bounds it."""
    own = timeout if timeout > 0 else None
    deadline = _DEADLINE[0]
    if deadline is None:
        return own, False
    left = max(0.05, deadline - time.monotonic())
    if own is None or left < own:
        return left, True
    return own, False


class Dead(Exception):
    """The worker is gone (exited, crashed, stopped by the watchdog)."""


_Dead = Dead


@dataclass(slots=True)
class Worker:
    """One policy's (or runtime's) worker process and its pipes; owned by
    one process.  The worker leads its own process group: stopping it stops
    whatever it started."""

    spec: str
    proc: subprocess.Popen[bytes]
    req: int
    resp: int
    name: str = ""
    format: str | None = None
    failure: PolicyError | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: The messages the worker holds copies of, by id: the same (immutable)
    #: object again is sent as its id only.
    sent: dict[str, Message] = field(default_factory=dict)
    #: Its answers by question (see :func:`_question`), at most ``MEMO_SIZE``.
    answers: dict[tuple[Any, ...], dict[str, Any]] = field(default_factory=dict)
    #: Whether the policy kept state or answered one question two ways: no memo.
    stateful: bool = False
    #: Answers from memory asked again and compared so far (``VERIFY_HITS``).
    verified: int = 0

    def recall(self, question: tuple[Any, ...]) -> tuple[dict[str, Any] | None, bool]:
        """The remembered answer to ``question`` (None: none, or no memo for
        this worker) and whether it must be asked again to compare."""
        if self.stateful or self.failure is not None:
            return None, False
        found = self.answers.get(question)
        if found is None or self.verified >= VERIFY_HITS:
            return found, False
        self.verified += 1
        return found, True

    def learn(
        self, question: tuple[Any, ...], answer: dict[str, Any], before: dict[str, Any] | None
    ) -> None:
        """Take in the worker's ``answer`` to ``question`` (``before``: the
        remembered one it is compared with): keep it, or turn the memo off
        for good if the policy is stateful or answered two ways."""
        if answer.get("stateful") or (before is not None and before != answer):
            self.stateful = True
            self.answers.clear()
        elif "raised" not in answer and not self.stateful:
            self.remember(question, answer)

    def remember(self, question: tuple[Any, ...], answer: dict[str, Any]) -> None:
        """Keep ``answer`` to ``question`` (forgetting the oldest beyond
        ``MEMO_SIZE``; none kept when it is 0)."""
        answers = self.answers
        if len(answers) >= MEMO_SIZE:
            if not answers:
                return
            del answers[next(iter(answers))]
        answers[question] = answer

    # ------------------------------------------------------------ transport
    def send(self, payload: bytes) -> None:
        data = _HEADER.pack(len(payload)) + payload
        try:
            while data:
                data = data[os.write(self.req, data) :]
        except OSError:
            raise _Dead from None

    def receive(self, timeout: float | None) -> dict[str, Any]:
        """One answer; TimeoutError after ``timeout`` seconds, _Dead on EOF."""
        deadline = None if timeout is None else time.monotonic() + timeout
        head = self._exactly(_HEADER.size, deadline)
        size = _HEADER.unpack(head)[0]
        if size > _MAX_ANSWER:
            self.stop()
            raise PolicyError(
                f"policy {self.name!r}",
                f"answered with {size} bytes, over the "
                f"{_MAX_ANSWER // 2**20} MiB limit of one proposal.",
                "return message ids or actions, not data.",
            )
        try:
            answer = json.loads(self._exactly(size, deadline))
        except (ValueError, RecursionError):
            answer = None
        if not isinstance(answer, dict):
            self.stop()
            raise PolicyError(
                f"policy {self.name!r}",
                "its worker sent a malformed answer.",
                "a policy must not write to file descriptors it did not open.",
            )
        return answer

    def _exactly(self, n: int, deadline: float | None) -> bytes:
        chunks: list[bytes] = []
        while n:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self.resp], [], [], wait)
            if not ready:
                raise TimeoutError
            chunk = os.read(self.resp, min(n, 1 << 20))
            if not chunk:
                raise _Dead
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)

    # ------------------------------------------------------------ lifecycle
    def how_it_ended(self) -> str:
        code = self._reap(2.0)
        if code < 0:
            try:
                sig = signal.Signals(-code).name
            except ValueError:
                sig = f"signal {-code}"
            extra = " (out of memory, or killed)" if sig == "SIGKILL" else ""
            return f"its process was killed by {sig}{extra}"
        return f"its process exited with status {code} (os._exit, or a crash)"

    def retire(self, subject: str) -> None:
        """Close it for good because its file changed and was loaded anew:
        a caller still holding it gets that error, not a dead pipe."""
        with self.lock:
            if self.failure is None:
                self.failure = PolicyError(
                    subject,
                    "its file changed and was loaded again; this older load is closed.",
                    "load the spec again to use the new content.",
                )
            self.close()

    def stop(self) -> None:
        self._kill_group()
        self.close()

    def close(self) -> None:
        for fd in (self.req, self.resp):
            with contextlib.suppress(OSError):
                os.close(fd)
        self.req = self.resp = -1
        self._reap(2.0)  # what the policy forked must not outlive its worker

    def _reap(self, timeout: float) -> int:
        """Wait for the worker to end (SIGKILL after ``timeout`` seconds),
        stop what is left of its process group while the worker is a zombie
        (its id, the group's, cannot be reused until it is reaped: a group
        id killed after that may be another program's), then reap it."""
        if self.proc.returncode is not None:
            return self.proc.returncode
        if not _ended(self.proc.pid, timeout):
            self._kill_group()
            if not _ended(self.proc.pid, None):  # no waitid: reaped below as before
                return self.proc.wait()
        self._kill_group()
        return self.proc.wait()

    def _kill_group(self) -> None:
        """SIGKILL the worker's process group (the worker and every process
        it started that did not leave the group) — only while the worker is
        not reaped, so that the group id is still its own."""
        if self.proc.returncode is not None:
            return
        with contextlib.suppress(OSError):
            os.killpg(self.proc.pid, signal.SIGKILL)


def _ended(pid: int, timeout: float | None) -> bool:
    """Whether child ``pid`` has ended (without reaping it), waiting up to
    ``timeout`` seconds (None: until it ends); False also where
    :func:`os.waitid` cannot wait without reaping."""
    waitid = getattr(os, "waitid", None)
    nowait = getattr(os, "WNOWAIT", None)
    if waitid is None or nowait is None:
        return False
    flags = os.WEXITED | nowait
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        try:
            done = waitid(os.P_PID, pid, flags | (os.WNOHANG if deadline is not None else 0))
        except ChildProcessError:
            return True  # reaped already
        except OSError:
            return False
        if done is not None:
            return True
        if deadline is not None and time.monotonic() >= deadline:
            return False
        time.sleep(0.005)


_WORKERS: dict[tuple[int, str], Worker] = {}
_REGISTRY_LOCK = threading.Lock()


def _start(spec: str, kind: str = "policy") -> Worker:
    memory = _memory_limit()  # a bad setting is refused before anything starts
    req_r, req_w = os.pipe()
    resp_r, resp_w = os.pipe()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    try:
        stdout: int | None = sys.__stderr__.fileno() if sys.__stderr__ is not None else None
    except (AttributeError, ValueError, OSError):
        stdout = None
    proc = subprocess.Popen(
        [sys.executable, "-m", "prunecheck.sim.subjects.cage_worker", str(req_r), str(resp_w)],
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=stdout,
        pass_fds=(req_r, resp_w),
        env=env,
        start_new_session=True,
    )
    os.close(req_r)
    os.close(resp_w)
    worker = Worker(spec, proc, req_w, resp_r)
    subject = f"{kind} spec {spec!r}"
    try:
        worker.send(pickle.dumps((spec, list(sys.path), memory, kind)))
        hello = worker.receive(LOAD_TIMEOUT)
    except TimeoutError:
        worker.stop()
        raise PolicyError(
            subject,
            f"importing it did not finish within {LOAD_TIMEOUT:g} s.",
            f"a {kind} module must not block or loop at import time.",
        ) from None
    except _Dead:
        raise PolicyError(
            subject,
            f"importing it ended the process: {worker.how_it_ended()}.",
            f"a {kind} module must not exit at import time.",
        ) from None
    for key in ("error", "raised"):
        if key in hello:
            worker.close()
            err = hello[key]
            raise PolicyError(
                str(err.get("subject", subject)), str(err["rule"]), str(err.get("hint", ""))
            )
    worker.name = str(hello.get("name", spec))
    fmt = hello.get("format")
    worker.format = fmt if isinstance(fmt, str) else None
    return worker


def worker_for(spec: str, kind: str = "policy", *, fresh: bool = False) -> Worker:
    """This process's worker for ``spec`` (started on first use; with
    ``fresh``, started again if it failed for good: a new command loads anew).

    Workers do not pile up: starting one for a policy file that changed
    closes the worker of its old content, and beyond ``MAX_WORKERS`` policy
    workers the one used longest ago is closed (it starts again if its
    policy is asked again)."""
    key = _key(spec, kind)
    with _REGISTRY_LOCK:
        found = _WORKERS.pop(key, None)
        if found is not None and fresh and found.failure is not None:
            found.stop()
            found = None
        if found is None:
            _retire_others(key)
            found = _start(spec, kind)
        _WORKERS[key] = found  # the most recently used last
        return found


def _retire_others(key: tuple[int, str]) -> None:
    """Close the workers a new one for ``key`` replaces: the same spec's
    worker of an older content, and the least recently used policy workers
    beyond ``MAX_WORKERS`` (a runtime's worker holds its instances: it is
    closed only when its file changed)."""
    pid, name = key
    kind, spec, _digest = name.split("\0")
    for other in list(_WORKERS):
        other_kind, other_spec, _ = other[1].split("\0")
        if other[0] == pid and (other_kind, other_spec) == (kind, spec):
            _WORKERS.pop(other).retire(f"{kind} {spec!r}")
    if kind != "policy":
        return
    mine = [k for k in _WORKERS if k[0] == pid and k[1].startswith("policy\0")]
    for other in mine[: max(0, len(mine) - MAX_WORKERS + 1)]:
        worker = _WORKERS[other]
        if worker.lock.acquire(blocking=False):  # never one in the middle of a call
            try:
                _WORKERS.pop(other).close()
            finally:
                worker.lock.release()


def _worker(spec: str) -> Worker:
    return worker_for(spec)


def _key(spec: str, kind: str) -> tuple[int, str]:
    """A worker's registry key: this process, the spec and its source's digest
    (a policy file changed since it was loaded gets a new worker)."""
    return (os.getpid(), f"{kind}\0{spec}\0{_digest(spec)}")


#: Per spec: its source file, that file's (mtime, size, inode) and digest.
_DIGESTS: dict[str, tuple[Any, tuple[int, int, int] | None, str]] = {}


def _digest(spec: str) -> str:
    """:func:`~.digest.policy_digest` of ``spec``, read again only when its
    file's modification time, size or inode changed (it is asked every call),
    or when it was modified in the last two seconds (a clock tick may hold
    two edits: git's "racy" rule)."""
    from prunecheck.sim.subjects.digest import policy_digest, source_of

    known = _DIGESTS.get(spec)
    path = known[0] if known is not None else source_of(spec)
    try:
        st = os.stat(path) if path is not None else None
        stamp = None if st is None else (st.st_mtime_ns, st.st_size, st.st_ino)
    except OSError:
        stamp = None
    if (
        known is not None
        and stamp is not None
        and known[1] == stamp
        and time.time_ns() - stamp[0] > 2_000_000_000
    ):
        return known[2]
    digest = policy_digest(spec)
    _DIGESTS[spec] = (path, stamp, digest)
    return digest


def _found(spec: str, kind: str = "policy") -> Worker | None:
    return _WORKERS.get(_key(spec, kind))


def close_all() -> None:
    """Stop every worker this process started (also run at exit)."""
    with _REGISTRY_LOCK:
        mine = [k for k in _WORKERS if k[0] == os.getpid()]
        for key in mine:
            _WORKERS.pop(key).close()


atexit.register(close_all)


def _actions(answer: dict[str, Any]) -> list[str | Action]:
    out: list[str | Action] = [str(m) for m in answer.get("evict", ())]  # an id: evict
    out.extend(Clear(str(m)) for m in answer.get("clear", ()))
    for ids, tokens, text in answer.get("summarize", ()):
        out.append(Summarize(tuple(str(m) for m in ids), int(tokens), str(text)))
    return out


def _question(view: ContextView, need: int) -> tuple[Any, ...]:
    """What a call asks, as a key: all a worker is sent (messages by value)."""
    return (
        tuple(view.messages),
        frozenset(view.pending_calls),
        view.budget,
        view.used,
        view.now,
        view.turn,
        need,
    )


@dataclass(frozen=True, slots=True)
class CagedPolicy:
    """A user policy served by its worker process (see the module docs).

    Attributes
    ----------
    spec: the spec it was loaded from; the worker loads it again from this.
    name: the policy's name, as its worker reports it.
    format: for a list function, the provider format of its messages.
    timeout: seconds one call may take (0: no limit).
    """

    spec: str
    name: str
    format: Provider | None = None
    timeout: float = 10.0

    def with_timeout(self, timeout: float) -> CagedPolicy:
        return replace(self, timeout=timeout)

    def failed_for_good(self) -> bool:
        """Whether its worker hung or died: every later call fails at once."""
        return failed_for_good(self)

    def select(self, view: ContextView, need: int) -> Iterable[str | Action]:
        worker = _worker(self.spec)
        question = _question(view, need)
        with worker.lock:
            answer, again = worker.recall(question)
            if answer is None or again:
                before = answer
                answer = self._ask(worker, view, need)
                if answer is not None:
                    worker.learn(question, answer, before)
        if answer is None:  # one raise site: a search sees the same failure every time
            failure = worker.failure
            assert failure is not None
            raise copy.copy(failure)  # same type and fields, a fresh traceback
        subject = f"policy {self.name!r}"
        if "raised" in answer:
            worker.sent = {}  # it may have spoilt its copies: send whole messages next time
            raised = answer["raised"]
            raise PolicyError(
                subject, str(raised.get("rule", "failed.")), str(raised.get("hint", ""))
            )
        try:
            return _actions(answer)
        except (TypeError, ValueError):
            raise PolicyError(subject, "its worker sent a malformed answer.") from None

    def _ask(self, worker: Worker, view: ContextView, need: int) -> dict[str, Any] | None:
        """The worker's answer, or None when it has failed for good (then
        ``worker.failure`` says how; later calls fail at once)."""
        if worker.failure is not None:
            return None
        subject = f"policy {self.name!r}"
        messages = tuple(view.messages)
        sent = worker.sent
        delta = [m.id if sent.get(m.id) is m else m for m in messages]
        worker.sent = {m.id: m for m in messages}
        payload = pickle.dumps(
            (
                delta,
                frozenset(view.pending_calls),
                view.budget,
                view.used,
                view.now,
                view.turn,
                need,
            ),
            protocol=pickle.HIGHEST_PROTOCOL,
        )
        what = f"select(view, need={need})"
        wait, by_time_limit = call_limit(self.timeout)
        try:
            worker.send(payload)
            return worker.receive(wait)
        except TimeoutError:
            worker.stop()
            within = (
                f"before --time-limit ran out ({wait:.2g} s left)"
                if by_time_limit
                else f"within {self.timeout:g} s"
            )
            worker.failure = PolicyTimeout(
                subject,
                f"{what} did not return {within} (context of "
                f"{len(messages)} messages); its process was stopped, so later calls fail at "
                "once.",
                "make select() faster or raise --policy-timeout.",
            )
        except _Dead:
            worker.failure = PolicyError(
                subject,
                f"{what} did not return: {worker.how_it_ended()}; later calls fail at once.",
                "a policy must return its proposal, never end the process.",
            )
            worker.close()
        except PolicyError as exc:
            worker.failure = exc
        return None


def failed_for_good(policy: object) -> bool:
    """Whether ``policy`` is caged and its worker hung or died (every later
    call fails at once): drivers stop instead of retrying or shrinking."""
    for _ in range(4):  # look through wrappers (a guard, check's tripwire)
        if isinstance(policy, CagedPolicy):
            break
        policy = getattr(policy, "inner", None)
    if not isinstance(policy, CagedPolicy):
        return False
    found = _found(policy.spec)
    return found is not None and found.failure is not None


def caged(spec: str, timeout: float = 10.0) -> CagedPolicy:
    """The policy ``spec`` names, loaded in its own worker process.

    Raises
    ------
    PolicyError
        if the spec cannot be loaded (the worker's words), or importing it
        exits, crashes or hangs.
    """
    worker = _worker(spec)
    fmt = Provider(worker.format) if worker.format else None
    return CagedPolicy(spec, worker.name, fmt, timeout)

"""Conversations that share one trace, told apart by their message lineage.

When no span names a conversation (no ``gen_ai.conversation.id``,
``session.id`` or thread), the reader groups a span's request by its
trace.  A trace may hold several conversations — a batch job running two
threads under one parent span, a graph fanning out — and their requests,
diffed as one, read as prunes that never happened.  A request belongs to
the conversation it continues: the one whose requests and responses hold
messages it holds again (a tool result by its call id, an assistant
message by its calls, any other message by its role and content; system
prompts are shared by every thread and do not count).  A request that
continues none starts a conversation of its own.

O(requests × messages).
"""

from __future__ import annotations

from collections.abc import Iterable

from prunecheck.model.context import Role
from prunecheck.sim.ingest.records import LoggedMessage, LoggedRequest

__all__ = ["split_by_lineage"]


def _ids(messages: Iterable[LoggedMessage]) -> set[str]:
    """The call ids messages hold (calls and results): unique to a thread."""
    return {m.answers for m in messages if m.answers is not None} | {
        c.id for m in messages for c in m.calls
    }


def _keys(messages: Iterable[LoggedMessage]) -> set[tuple[str, str]]:
    return {(m.role.value, m.digest) for m in messages if m.role is not Role.SYSTEM}


class _Thread:
    def __init__(self) -> None:
        self.ids: set[str] = set()
        self.tail: set[tuple[str, str]] = set()  # the latest response's messages
        self.requests: list[LoggedRequest] = []

    def score(self, request: LoggedRequest) -> int:
        """How much of this thread ``request`` continues: the call ids it
        holds again, or the latest response it holds (0: none)."""
        held = request.messages
        return 2 * len(_ids(held) & self.ids) + len(_keys(held) & self.tail)

    def add(self, request: LoggedRequest) -> None:
        self.requests.append(request)
        self.ids |= _ids(request.messages) | _ids(request.reply or ())
        self.tail = _keys(request.reply or ()) or _keys(request.messages[-1:])


def split_by_lineage(
    name: str, requests: list[LoggedRequest]
) -> list[tuple[str, list[LoggedRequest]]]:
    """The conversations ``requests`` (of one trace, in time order) hold:
    ``[(name, requests)]`` when they are one, else ``(f"{name} thread N", …)``
    for each, in the order they start.  A request continues the thread whose
    call ids it holds again, or whose latest response it holds; a request
    that continues none starts a thread (over-splitting a conversation whose
    runtime dropped everything but a new question is the safe mistake:
    merging two would invent prunes).

    >>> from prunecheck.model.context import Role
    >>> from prunecheck.model.provider import Provider
    >>> from prunecheck.sim.ingest.records import LogFormat, Source
    >>> def r(*texts, reply=None):
    ...     sent = tuple(LoggedMessage(Role.USER if x.islower() else Role.ASSISTANT, x)
    ...                  for x in texts)
    ...     answer = (LoggedMessage(Role.ASSISTANT, reply),) if reply else None
    ...     return LoggedRequest("t", None, Source("log"), Provider.OPENAI,
    ...                          LogFormat.OPENAI_CHAT, sent, answer)
    >>> threads = split_by_lineage("trace 1", [r("a", reply="A"), r("a", reply="B"),
    ...                                        r("a", "A", "c")])
    >>> [(n, len(rs)) for n, rs in threads]
    [('trace 1 thread 1', 2), ('trace 1 thread 2', 1)]
    """
    threads: list[_Thread] = []
    for request in requests:
        scores = [(t.score(request), n) for n, t in enumerate(threads)]
        best = max(scores, default=(0, -1))
        if not request.messages and threads:
            thread = threads[-1]  # nothing to tell it by: the latest thread's
        elif best[0] > 0:
            thread = threads[best[1]]
        else:
            thread = _Thread()
            threads.append(thread)
        thread.add(request)
    if len(threads) <= 1:
        return [(name, requests)]
    return [(f"{name} thread {n}", t.requests) for n, t in enumerate(threads, 1)]

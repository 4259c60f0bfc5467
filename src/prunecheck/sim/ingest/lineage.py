"""Conversations no span or run names, told apart by their message lineage.

When no span names a conversation (no ``gen_ai.conversation.id``,
``session.id`` or thread) and no LangSmith run names a thread, a request is
known only by its trace.  A trace may hold several conversations — a batch
job running two threads under one parent span, a graph fanning out — and a
conversation may span several traces (one per turn, or one per model call
as LangSmith's ``wrap_openai`` records them); diffed by trace, they read as
prunes that never happened, or hide the ones that did.  A request belongs to
the conversation it continues: the one whose requests and responses hold
the call ids it holds again, or whose latest response it holds (system
prompts are shared by every thread and do not count); see
:func:`threads_of` for a request that continues none.

O(requests × messages).
"""

from __future__ import annotations

from collections.abc import Iterable

from prunecheck.model.context import Role
from prunecheck.sim.ingest.records import LoggedMessage, LoggedRequest

__all__ = ["threads_of"]


def _ids(messages: Iterable[LoggedMessage]) -> set[str]:
    """The call ids messages hold (calls and results): unique to a thread."""
    return {m.answers for m in messages if m.answers is not None} | {
        c.id for m in messages for c in m.calls
    }


def _keys(messages: Iterable[LoggedMessage]) -> set[tuple[str, str]]:
    return {(m.role.value, m.digest) for m in messages if m.role is not Role.SYSTEM}


class _Thread:
    def __init__(self, number: int, request: LoggedRequest) -> None:
        self.number = number
        self.provider = request.provider
        self.tail: set[tuple[str, str]] = set()  # the latest response's messages
        self.requests: list[LoggedRequest] = []


class _Threads:
    """The threads so far, indexed by the call ids they hold and the latest
    response of each: a request finds the threads it continues in
    O(its messages)."""

    def __init__(self) -> None:
        self.all: list[_Thread] = []
        self.ids: dict[str, _Thread] = {}
        self.tails: dict[tuple[str, str], set[int]] = {}
        self.openings: set[frozenset[tuple[str, str]]] = set()  # first requests' messages

    def of(self, request: LoggedRequest) -> _Thread:
        """The thread ``request`` continues (the most call ids it holds again,
        else its latest response), or a new one."""
        scores: dict[int, int] = {}
        for cid in _ids(request.messages):
            owner = self.ids.get(cid)
            if owner is not None:
                scores[owner.number] = scores.get(owner.number, 0) + 2
        for key in _keys(request.messages):
            for number in self.tails.get(key, ()):
                scores[number] = scores.get(number, 0) + 1
        fits = [(s, n) for n, s in scores.items() if self.all[n].provider is request.provider]
        if fits:
            return self.all[max(fits)[1]]
        opening = frozenset(_keys(request.messages))
        latest = next((t for t in reversed(self.all) if t.provider is request.provider), None)
        if latest is not None and opening not in self.openings:
            return latest  # continues nothing, starts nothing seen: the runtime dropped it all
        thread = _Thread(len(self.all), request)
        self.all.append(thread)
        self.openings.add(opening)
        return thread

    def add(self, thread: _Thread, request: LoggedRequest) -> None:
        thread.requests.append(request)
        for cid in _ids(request.messages) | _ids(request.reply or ()):
            self.ids.setdefault(cid, thread)
        for key in thread.tail:
            self.tails.get(key, set()).discard(thread.number)
        thread.tail = _keys(request.reply or ()) or _keys(request.messages[-1:])
        for key in thread.tail:
            self.tails.setdefault(key, set()).add(thread.number)


def threads_of(requests: list[LoggedRequest]) -> list[list[LoggedRequest]]:
    """The conversations ``requests`` (in time order, of traces no span or
    run names a conversation of) hold, in the order they start.  A request
    continues the thread whose call ids it holds again, or whose latest
    response it holds.  A request that continues none starts a thread when
    it opens as a thread before it opened (the same messages: a second run
    of the same job), else it continues the latest thread, whose runtime
    dropped everything but the new question.  Threads that run interleaved
    and open differently are told apart only by their call ids.

    >>> from prunecheck.model.context import Role
    >>> from prunecheck.model.provider import Provider
    >>> from prunecheck.sim.ingest.records import LogFormat, Source
    >>> def r(*texts, reply=None):
    ...     sent = tuple(LoggedMessage(Role.USER if x.islower() else Role.ASSISTANT, x)
    ...                  for x in texts)
    ...     answer = (LoggedMessage(Role.ASSISTANT, reply),) if reply else None
    ...     return LoggedRequest("t", None, Source("log"), Provider.OPENAI,
    ...                          LogFormat.OPENAI_CHAT, sent, answer)
    >>> [len(t) for t in threads_of([r("a", reply="A"), r("a", reply="B"), r("a", "A", "c")])]
    [2, 1]
    >>> [len(t) for t in threads_of([r("a", reply="A"), r("b", reply="B")])]
    [2]
    """
    threads = _Threads()
    for request in requests:
        threads.add(threads.of(request), request)
    return [t.requests for t in threads.all]

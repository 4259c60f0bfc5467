"""Diffing consecutive requests of a conversation into what happened between them.

Request k and k+1 are aligned by identity: a tool result by the call id it
answers, an assistant message by the ids of the calls it holds, any other
message by its role and a digest of its content (the n-th copy of the same
content is the n-th).  What k+1 holds and nothing before did is new — the
model's answer (from the logged response, or inferred from k+1), the
results that arrived, the user's next message.  What was there and is gone
was removed; a result whose content changed was rewritten (cleared); a new
message standing where removed ones stood is their summary.

Some things a request log cannot show, and the differ says so instead of
guessing (:attr:`Step.gaps`): a result that never appears (it never arrived
or the runtime dropped it: the trace delivers it, 1 token, and removes it),
calls known only from their results (the assistant message holding them was
removed before any request showed it), a message sent again after it was
removed (the trace cannot put it back), a rewrite that made a message
larger.

O(total messages of the log).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from prunecheck.model.context import Role
from prunecheck.sim.ingest.records import LoggedCall, LoggedMessage, LoggedRequest

__all__ = ["Diff", "Item", "Step", "diff_requests", "unit_of"]

_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]")


@dataclass(eq=False, slots=True)
class Item:
    """One message as the conversation's context holds it across requests.

    ``label`` is unique in the conversation and reads as its own ids: ``#CALLID``
    for a result, ``#calls.CALLID`` for an assistant message holding calls,
    ``#ROLE-N`` for the N-th other message of that role (``#user-2``: the
    conversation's second user message), never a digest;
    ``inferred`` says the log never showed it (see the module notes).
    """

    label: str
    message: LoggedMessage
    first: int  # the request (1-based) before whose check it was appended
    inferred: str = ""
    removed_at: int | None = None
    cleared: bool = False
    replied: bool = False  # read from the logged response to the request before


@dataclass(slots=True)
class Step:
    """What happened before request ``number`` (1-based) was sent."""

    number: int
    appended: list[Item] = field(default_factory=list)
    evicted: list[Item] = field(default_factory=list)
    cleared: list[tuple[Item, int]] = field(default_factory=list)
    summaries: list[tuple[Item, list[Item]]] = field(default_factory=list)
    gaps: list[str] = field(default_factory=list)

    @property
    def trigger(self) -> Item | None:
        """The newest message before the check: where the removals fire."""
        return self.appended[-1] if self.appended else None

    def removed(self) -> list[Item]:
        return [*self.evicted, *(i for _, group in self.summaries for i in group)]


def _safe(text: str) -> str:
    return _UNSAFE.sub("_", text)[:48] or "_"


class _Labels:
    def __init__(self) -> None:
        self.used: set[str] = set()

    def new(self, base: str) -> str:
        label, n = base, 1
        while label in self.used:
            n += 1
            label = f"{base}.{n}"
        self.used.add(label)
        return label


def _key(m: LoggedMessage) -> tuple[str, ...]:
    if m.answers is not None:
        return ("result", m.answers)
    if m.calls:
        return ("calls", *(c.id for c in m.calls))
    return (m.role.value, m.digest)


def unit_of(item: Item, batches: dict[str, Item]) -> Item:
    """The batch item whose unit ``item`` belongs to (itself if none)."""
    if item.message.answers is not None:
        return batches.get(item.message.answers, item)
    return item


class _Differ:
    def __init__(self, ran: Mapping[str, int]) -> None:
        self.ran = ran  # call id -> characters of output its tool span records
        self.labels = _Labels()
        self.by_key: dict[tuple[str, ...], Item] = {}
        self.batches: dict[str, Item] = {}  # call id -> the batch item holding it
        self.results: dict[str, Item] = {}  # call id -> its result item
        self.call_labels: dict[str, str] = {}  # call id -> its result's label
        self.context: list[Item] = []
        self.seen: dict[str, int] = {}  # role -> messages of it labelled so far
        self.by_content: dict[tuple[str, ...], list[Item]] = {}  # text messages, oldest first
        self.copies = 0

    def item(self, m: LoggedMessage, key: tuple[str, ...], number: int, inferred: str = "") -> Item:
        if m.answers is not None:
            base = self.call_label(m.answers)
        elif m.calls:
            base = "#calls." + _safe(m.calls[0].id)
        else:
            self.seen[m.role.value] = self.seen.get(m.role.value, 0) + 1
            base = f"#{m.role.value}-{self.seen[m.role.value]}"
        label = base if m.answers is not None else self.labels.new(base)
        item = Item(label, m, number, inferred)
        self.by_key[key] = item
        if m.answers is None and not m.calls:
            self.by_content.setdefault(_key(m), []).append(item)
        for call in m.calls:
            self.batches[call.id] = item
            self.call_label(call.id)
        if m.answers is not None:
            self.results[m.answers] = item
        return item

    def call_label(self, call_id: str) -> str:
        """The label of ``call_id``'s result (also the call's path in the trace)."""
        if call_id not in self.call_labels:
            self.call_labels[call_id] = self.labels.new("#" + _safe(call_id))
        return self.call_labels[call_id]

    def step(self, number: int, request: LoggedRequest, reply: Sequence[LoggedMessage]) -> Step:
        step = Step(number)
        new: list[Item] = []
        for m in reply:
            key = _key(m)
            if m.answers is None and not m.calls:
                self.copies += 1  # the model's words are new even when it said them before
                key = (*key, f"reply {self.copies}")
            if key not in self.by_key:
                new.append(self.item(m, key, number))
                new[-1].replied = True
        present: list[Item] = []
        used: set[int] = set()  # text items this request already holds
        pending_orphans: list[LoggedMessage] = []

        def flush_orphans() -> None:
            if not pending_orphans:
                return
            calls = tuple(LoggedCall(o.answers or "", "") for o in pending_orphans)
            batch = LoggedMessage(Role.ASSISTANT, "", calls)
            inferred = (
                f"the assistant message holding {_calls(calls)} is in no logged request "
                "or response: the calls are known only from their results"
            )
            new.append(self.item(batch, _key(batch), number, inferred))
            for o in pending_orphans:
                item = self.item(o, _key(o), number)
                new.append(item)
                present.append(item)
            pending_orphans.clear()

        for m in request.messages:
            key = _key(m)
            known = self.by_key.get(key)
            if m.answers is None and not m.calls:
                known = self._copy_of(key, used)
                if known is None:
                    self.copies += 1
                    key = (*key, f"copy {self.copies}")
                else:
                    used.add(id(known))
            if known is None and m.answers is not None and m.answers not in self.batches:
                if all(o.answers != m.answers for o in pending_orphans):
                    pending_orphans.append(m)
                continue
            flush_orphans()
            whole = self._whole_of(m) if known is None else None
            if whole is not None:
                kept = ", ".join(c.id for c in m.calls)
                step.gaps.append(
                    f"request {number} keeps only {kept} of {whole.message.describe()}: "
                    "prunecheck cannot keep part of an assistant message, so the trace "
                    "removes it whole"
                )
                continue
            if known is None and any(c.id in self.batches for c in m.calls):
                twice = [c for c in m.calls if c.id in self.batches]
                step.gaps.append(
                    f"request {number} holds {_calls(tuple(twice))} in a second assistant "
                    "message: the trace keeps the first"
                )
                m = LoggedMessage(m.role, m.text, tuple(c for c in m.calls if c not in twice))
                key = _key(m)
                known = self.by_key.get(key)
                if known is None and not m.calls and not m.text:
                    continue
            if known is None:
                known = self.item(m, key, number)
                new.append(known)
                if m.role is Role.ASSISTANT and reply:
                    step.gaps.append(
                        f"request {number} holds {m.describe()}, which no logged response "
                        f"produced: a model call between request {number - 1} and {number} is "
                        "missing from the log (a lost span or line?)"
                    )
            elif known.removed_at is not None:
                step.gaps.append(
                    f"request {number} sends {known.message.describe()} again, removed "
                    f"before request {known.removed_at}: the trace cannot put it back"
                )
                continue
            elif m.digest != known.message.digest and known.message.answers is not None:
                if m.tokens <= known.message.tokens:
                    step.cleared.append((known, m.tokens))
                else:
                    step.gaps.append(
                        f"request {number} sends {known.message.describe()} rewritten larger "
                        f"({known.message.tokens} → {m.tokens} tokens): the trace keeps its "
                        "old size"
                    )
                known.message = m
            present.append(known)
        flush_orphans()
        new = self._answer_calls(new, number)
        step.appended = new
        self._removals(step, present)
        return step

    def _copy_of(self, key: tuple[str, ...], used: set[int]) -> Item | None:
        """The item a text message of a request is: the oldest one with its
        words still in the context, else the oldest removed one (sent
        again), else None (new words).  An assistant that says the same
        words twice said them twice: its second answer is a reply item of
        its own, and a request holding those words holds the live one."""
        candidates = [i for i in self.by_content.get(key, []) if id(i) not in used]
        live = [i for i in candidates if i.removed_at is None]
        found = live or candidates
        return found[0] if found else None

    def _whole_of(self, m: LoggedMessage) -> Item | None:
        """The known assistant message of which ``m`` holds only some calls."""
        owners = {
            id(self.batches[c.id]): self.batches[c.id] for c in m.calls if c.id in self.batches
        }
        if len(owners) != 1 or any(c.id not in self.batches for c in m.calls):
            return None
        (owner,) = owners.values()
        return owner if len(owner.message.calls) > len(m.calls) else None

    def _answer_calls(self, new: list[Item], number: int) -> list[Item]:
        """Deliver (inferred) results a batch never got in the log, before
        the model speaks again: the model is invoked only once all are in."""
        out: list[Item] = []
        open_batches = [i for i in self.context if i.message.calls]
        waiting = {i.message.answers: i for i in new if i.message.answers is not None}
        done: set[int] = set()

        def flush() -> None:
            for batch in open_batches:
                for call in batch.message.calls:
                    result = waiting.get(call.id)
                    if result is not None and id(result) not in done:
                        out.append(result)  # before the model speaks again
                        done.add(id(result))
                    elif call.id not in self.results:
                        m = LoggedMessage(Role.TOOL, "", answers=call.id)
                        why = (
                            f"the result of {call.id} is in no logged request: it never "
                            "arrived or the runtime dropped it (the log cannot tell which); "
                            "the trace delivers it (1 token) and the runtime removes it"
                        )
                        if call.id in self.ran:  # a tool span says it arrived
                            why = (
                                f"the result of {call.id} is in no logged request, though "
                                f"its tool ran (a tool span records {self.ran[call.id]:,} "
                                "characters of output for it): the runtime dropped it before "
                                "any request carried it; the trace delivers it (1 token) and "
                                "the runtime removes it"
                            )
                        out.append(self.item(m, _key(m), number, why))
            open_batches.clear()

        for item in new:
            if id(item) in done:
                continue
            if item.message.role is Role.ASSISTANT:
                flush()
            out.append(item)
            done.add(id(item))
            if item.message.calls:
                open_batches.append(item)
        flush()
        return out

    def _removals(self, step: Step, present: list[Item]) -> None:
        kept = {id(i) for i in present}
        before = [*self.context, *step.appended]
        gone = [i for i in before if id(i) not in kept]
        inserted = [i for i in step.appended if id(i) in kept and not _tail(i, present, kept)]
        order = {id(i): n for n, i in enumerate(before)}
        for summary in inserted:
            at = present.index(summary)
            after = next((order[id(i)] for i in present[at + 1 :] if id(i) in order), len(before))
            earlier = [order[id(i)] for i in present[:at] if id(i) in order and i in self.context]
            start = max(earlier, default=-1)
            group = [i for i in gone if start < order[id(i)] < after and i not in step.removed()]
            if group:
                step.summaries.append((summary, group))
            else:
                step.gaps.append(
                    f"request {step.number} holds {summary.message.describe()} before "
                    "messages sent earlier: the trace appends it at the end"
                )
        summarized = {id(i) for _, g in step.summaries for i in g}
        step.evicted = [i for i in gone if id(i) not in summarized]
        for i in step.removed():
            i.removed_at = step.number
        for i, _ in step.cleared:
            i.cleared = True
        self.context = [i for i in before if id(i) in kept]


def _tail(item: Item, present: list[Item], kept: set[int]) -> bool:
    """Whether every message after ``item`` in the request is new too (a
    message appended at the end, not inserted among older ones)."""
    at = present.index(item)
    return all(i.first == item.first for i in present[at + 1 :])


def _calls(calls: tuple[LoggedCall, ...]) -> str:
    ids = [c.id for c in calls]
    return "call " + ids[0] if len(ids) == 1 else "calls " + ", ".join(ids)


@dataclass(frozen=True, slots=True)
class Diff:
    """The steps of a conversation, the batch item of every call id, and
    the label of every call's result."""

    steps: list[Step]
    batches: dict[str, Item]
    call_labels: dict[str, str]


def diff_requests(requests: Sequence[LoggedRequest], ran: Mapping[str, int] | None = None) -> Diff:
    """Each request's :class:`Step` (in order); the first step appends the
    first request's messages.  ``ran``: call id -> characters of output of the
    tool runs the log's tool spans record (a result no request carries is
    then known to have arrived)."""
    differ = _Differ(ran or {})
    steps = []
    for n, request in enumerate(requests):
        reply = (requests[n - 1].reply or ()) if n > 0 else ()
        steps.append(differ.step(n + 1, request, reply))
    return Diff(steps, differ.batches, differ.call_labels)

"""Judging a runtime under test against ground truth.

The harness knows what really happened — which calls were issued, which are
pending, which results and chunks were produced, which messages are still
streaming, what each file's version is — from a *shadow*: the model runtime
fed the same events with nothing pruned.  After every stimulus the judge
reads the runtime's request (its message list) and executions and reports
the same incident classes the model reports about itself:

* ``invalid_prune``: a message that was in the request is gone (or its
  content replaced) while another message of its unit stays, while it was
  still streaming, or while its unit has a pending call;
* ``orphaned_result`` / ``unanswered_call``: a result without its call, a
  completed call without its result, in the request;
* ``truncated_payload``: a completed stream whose message lacks its first
  chunks (or never reached the request after its message was evicted);
* ``provider_rejection``: at an invocation, the request breaks the
  provider's tool pairing (OpenAI's rules and texts);
* ``duplicated_side_effect``: an execution re-ran a write, or a read whose
  file changed since the call first ran;
* ``synthesized_result``: a result that no tool produced;
* costs: ``hard_ceiling_overrun`` (request over the ceiling) and what the
  runtime reports with ``costs()``.

Messages are recognised by the markers in their text (:mod:`.stimuli`) and
results by ``tool_call_id``.  O(request size) per step.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prunecheck.model.incidents import Incident, IncidentKind
from prunecheck.model.provider import Provider, validate
from prunecheck.model.state import CallStatus, RuntimeState
from prunecheck.sim.subjects.runtimes.stimuli import Execution

__all__ = ["Judge", "Observed", "observe"]

_MARK = re.compile(r"⟦(r?[mc]\d+)(?:\.(\d+|x))?⟧")

_Key = tuple[str, str]  # ("msg", m3) | ("call", m5) | ("result", c2)


@dataclass(frozen=True, slots=True)
class _Seen:
    key: _Key
    chunks: frozenset[int]  # chunk markers of its own base
    marked: bool  # any marker of its own (chunk, plain or error)
    calls: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Observed:
    """A request as the judge reads it."""

    seen: dict[_Key, _Seen]
    order: tuple[_Key, ...]
    calls: dict[str, _Key]  # call id -> the assistant message issuing it
    results: frozenset[str]  # call ids answered by a tool message
    tokens: int


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(p.get("text", "") if isinstance(p, Mapping) else str(p) for p in content)
    return ""


def _label(key: _Key) -> str:
    return f"the result of {key[1]}" if key[0] == "result" else key[1]


@functools.lru_cache(maxsize=1 << 14)
def _scan(text: str) -> tuple[int, tuple[str, frozenset[int]] | None]:
    """A message text's tokens (its words), and the base of its first
    message marker with the chunks marked for that base (None: no message
    marker).  A request sends the same texts step after step: each is
    scanned once (pure functions, memoized)."""
    bases = [(b, x) for b, x in _MARK.findall(text) if b.startswith("m")]
    if not bases:
        return len(text.split()), None
    base = bases[0][0]
    chunks = frozenset(int(x) for b, x in bases if b == base and x and x.isdigit())
    return len(text.split()), (base, chunks)


@functools.lru_cache(maxsize=1 << 14)
def _own_chunks(cid: str, text: str) -> tuple[frozenset[int], bool]:
    """The chunks a result's text marks for its call ``cid``, and whether it
    carries any marker of its own."""
    own = [idx for base, idx in _MARK.findall(text) if base == cid]
    return frozenset(int(x) for x in own if x.isdigit()), bool(own)


def observe(request: Sequence[Mapping[str, Any]], shadow: RuntimeState) -> Observed:
    """Read a request: which known messages, results and calls it holds."""
    seen: dict[_Key, _Seen] = {}
    order: list[_Key] = []
    calls: dict[str, _Key] = {}
    results: set[str] = set()
    tokens = 0
    for i, message in enumerate(request):
        text = _text(message.get("content"))
        words, mark = _scan(text)
        tokens += words
        role = message.get("role")
        key: _Key
        if role == "tool":
            cid = str(message.get("tool_call_id"))
            results.add(cid)
            key = ("result", cid)
            item = _Seen(key, *_own_chunks(cid, text))
        elif role == "assistant" and message.get("tool_calls"):
            ids = tuple(str(c.get("id")) for c in message["tool_calls"])
            record = shadow.calls.get(ids[0])
            key = ("call", record.batch if record is not None else "r:" + ids[0])
            item = _Seen(key, frozenset(), True, ids)
            for cid in ids:
                calls[cid] = key
        elif mark is None:
            key = ("foreign", str(i))
            item = _Seen(key, frozenset(), False)
        else:
            key = ("msg", mark[0])
            item = _Seen(key, mark[1], True)
        if key in seen:  # the same message twice: keep the first, note both chunks
            old = seen[key]
            item = _Seen(
                key, old.chunks | item.chunks, old.marked or item.marked, old.calls or item.calls
            )
        else:
            order.append(key)
        seen[key] = item
    return Observed(seen, tuple(order), calls, frozenset(results), tokens)


class Judge:
    """The incidents of one runtime under test, step by step."""

    def __init__(self, hard_ceiling: int) -> None:
        self.ceiling = hard_ceiling
        self.prev = Observed({}, (), {}, frozenset(), 0)
        self.reported: set[tuple[str, str]] = set()
        self.world: dict[str, int] = {}
        self.version: dict[str, int] = {}
        self.cursor = 0
        self.costs: dict[str, int] = {}
        self.lost: set[_Key] = set()  # streams whose message was removed while open
        self.over = False
        self.rejected: tuple[str, ...] | None = None
        self.incidents: list[Incident] = []
        self.step = 0
        self.tokens = 0
        #: Ids of the messages that left the request (or lost their content) this step.
        self.left: list[str] = []
        self.forms: dict[str, bool] = {}  # call -> its result last seen with output (True)
        #: Results without their call, calls without their result: now.
        self.broken: tuple[set[str], set[str]] = (set(), set())

    # ------------------------------------------------------------ bookkeeping
    def _add(
        self,
        kind: IncidentKind,
        ids: tuple[str, ...],
        detail: str,
        reason: str = "",
        text: str = "",
    ) -> None:
        self.incidents.append(Incident(kind, self.step, ids, detail, reason, text))

    def _once(self, kind: IncidentKind, key: str, ids: tuple[str, ...], detail: str) -> None:
        if (kind.value, key) not in self.reported:
            self.reported.add((kind.value, key))
            self._add(kind, ids, detail)

    def copy(self) -> Judge:
        """An independent copy (observations are never mutated, only replaced)."""
        twin = copy.copy(self)
        twin.reported, twin.world, twin.version = (
            set(self.reported),
            dict(self.world),
            dict(self.version),
        )
        twin.costs, twin.lost, twin.forms = dict(self.costs), set(self.lost), dict(self.forms)
        twin.incidents = []
        return twin

    def key(self) -> tuple[Any, ...]:
        """What of the judge decides future verdicts (for the explorer)."""
        return (
            tuple(sorted(self.reported)),
            tuple(sorted(self.world.items())),
            tuple(sorted(self.version.items())),
            self.rejected,
            self.over,
            tuple(sorted(self.lost)),
            tuple(sorted(self.forms.items())),
        )

    # ----------------------------------------------------------------- steps
    def new_session(self) -> None:
        """A fresh session: the context goes (not a prune) and incidents may
        be met again; the world carries over."""
        self.prev = Observed({}, (), {}, frozenset(), 0)
        self.reported, self.lost, self.forms = set(), set(), {}
        self.rejected, self.over = None, False

    def external_write(self, path: str) -> None:
        self.world[path] = self.world.get(path, 0) + 1

    def judge(
        self,
        step: int,
        shadow: RuntimeState,
        request: Sequence[Mapping[str, Any]],
        executions: Sequence[Execution],
        *,
        completed: tuple[str, str] | None,
        failed: str | None,
        invoked: bool,
        costs: Mapping[str, int] | None,
        appended: tuple[str, str, int] | None = None,
    ) -> list[Incident]:
        """Judge the state after one step.

        ``completed`` names a stream that completed at this step (``("call",
        c)`` or ``("msg", m)``); ``failed`` a call that failed (its partial
        result may go); ``invoked`` says the model was invoked (not blocked).
        ``appended`` names the message (kind, id, chunk) this step's stimulus
        added: if it is not in the request now, the runtime pruned it within
        the step.
        """
        self.step, self.incidents = step, []
        now = observe(request, shadow)
        self.tokens = now.tokens
        if failed is not None and ("result", failed) in self.prev.seen:
            seen = dict(self.prev.seen)  # its partial result may go with the failure
            del seen[("result", failed)]
            self.prev = Observed(
                seen, self.prev.order, self.prev.calls, self.prev.results, self.prev.tokens
            )
        if appended is not None:
            self._expect(*appended)
        self._pruned(shadow, now)
        self._pairing(shadow, now)
        if completed is not None:
            self._truncation(now, completed)
        if invoked:
            self._invocation(shadow, request)
        self._executions(executions)
        if costs is not None:
            self._costs(costs)
        if now.tokens > self.ceiling:
            if not self.over:
                self.over = True
                self._add(
                    IncidentKind.HARD_CEILING_OVERRUN,
                    (),
                    f"request holds {now.tokens} tokens, over the hard ceiling {self.ceiling}",
                )
        else:
            self.over = False
        self.prev = now
        return self.incidents

    def _expect(self, kind: str, ident: str, chunk: int) -> None:
        key: _Key = (kind, ident)
        old = self.prev.seen.get(key)
        if old is None and chunk > 0:
            return  # a chunk of a stream whose message is gone: nothing to expect
        chunks = old.chunks if old is not None else frozenset()
        if chunk >= 0:
            chunks = chunks | {chunk}
        seen = dict(self.prev.seen)
        seen[key] = _Seen(key, chunks, True, old.calls if old is not None else ())
        self.prev = Observed(
            seen, self.prev.order, self.prev.calls, self.prev.results, self.prev.tokens
        )

    def _unit(self, key: _Key, shadow: RuntimeState) -> str:
        kind, ident = key
        if kind == "result":
            record = shadow.calls.get(ident)
            return record.batch if record is not None else "r:" + ident
        return ident

    def _is_open(self, key: _Key, shadow: RuntimeState) -> bool:
        kind, ident = key
        if kind == "result":
            record = shadow.calls.get(ident)
            return record is not None and record.status is CallStatus.PENDING and record.chunks > 0
        stream = shadow.assistant_stream
        return kind == "msg" and stream is not None and stream.batch == ident

    def _pruned(self, shadow: RuntimeState, now: Observed) -> None:
        touched: dict[str, list[tuple[_Key, bool]]] = {}
        for key, before in self.prev.seen.items():
            if key[0] == "foreign" or not before.marked:
                continue
            after = now.seen.get(key)
            if after is not None and after.marked:
                continue
            touched.setdefault(self._unit(key, shadow), []).append((key, after is None))
        self.left = [_label(k) for keys in touched.values() for k, _ in keys]
        for unit, keys in touched.items():
            removed = {k for k, gone in keys if gone}
            stays = [
                k
                for k in now.seen
                if k not in removed and k[0] != "foreign" and self._unit(k, shadow) == unit
            ]
            ids = tuple(k[1] for k, _ in keys)
            if removed and stays:
                self._add(
                    IncidentKind.INVALID_PRUNE,
                    (unit, *ids),
                    f"prune applied that splits unit {unit}: keeps {', '.join(map(_label, stays))}",
                    reason="split_unit",
                )
            opened = [k for k, _ in keys if self._is_open(k, shadow)]
            if opened:
                self.lost.update(opened)  # its first chunks are gone for good
                self._add(
                    IncidentKind.INVALID_PRUNE,
                    (unit, *(k[1] for k in opened)),
                    f"prune applied that touches open (streaming) message "
                    f"{', '.join(k[1] for k in opened)} of unit {unit}",
                    reason="open_message",
                )
            pending = sorted(shadow.context.pending_in(unit), key=lambda c: (len(c), c))
            if pending:
                self._add(
                    IncidentKind.INVALID_PRUNE,
                    (unit, *pending),
                    f"prune applied that "
                    f"touches unit {unit} while call {', '.join(pending)} is pending",
                    reason="pending_unit",
                )

    def _pairing(self, shadow: RuntimeState, now: Observed) -> None:
        self.broken = (set[str](), set[str]())
        for key in now.order:
            if key[0] != "result":
                continue
            cid = key[1]
            if cid not in now.calls:
                self.broken[0].add(cid)
                self._once(
                    IncidentKind.ORPHANED_RESULT,
                    cid,
                    (cid,),
                    f"result for call {cid} "
                    "is in the request but the assistant message that issued it is not",
                )
            marked = now.seen[key].marked
            restored = self.forms.get(cid) is False  # it left cleared, it came back cleared
            if not marked and key not in self.prev.seen and not restored:
                self._once(
                    IncidentKind.SYNTHESIZED_RESULT,
                    cid,
                    (cid,),
                    f"result for call {cid} holds no output of the tool: the runtime invented it",
                )
        for key in now.order:
            if key[0] == "result":
                self.forms[key[1]] = now.seen[key].marked
        for cid, key in now.calls.items():
            record = shadow.calls.get(cid)
            done = record is None or record.status is not CallStatus.PENDING
            if done and cid not in now.results:
                self.broken[1].add(cid)
                self._once(
                    IncidentKind.UNANSWERED_CALL,
                    cid,
                    (key[1], cid),
                    f"call {cid} of {key[1]} has completed but no result for it is in the request",
                )

    def _truncation(self, now: Observed, completed: tuple[str, str]) -> None:
        kind, ident = completed
        key: _Key = ("result", ident) if kind == "call" else ("msg", ident)
        item = now.seen.get(key)
        what = "result" if kind == "call" else "assistant text"
        if item is not None and item.chunks and 0 not in item.chunks:
            self._once(
                IncidentKind.TRUNCATED_PAYLOAD,
                ident,
                (ident,),
                f"{what} {ident} holds "
                f"chunks from {min(item.chunks) + 1} on: its first chunks are missing",
            )
        elif (item is None or not item.marked) and key in self.lost:
            self._once(
                IncidentKind.TRUNCATED_PAYLOAD,
                ident,
                (ident,),
                f"{what} {ident} was "
                "produced but did not reach the request (its message was evicted "
                "mid-stream)",
            )

    def _invocation(self, shadow: RuntimeState, request: Sequence[Mapping[str, Any]]) -> None:
        errors = validate(list(request), Provider.OPENAI, source="request")
        if not errors:
            self.rejected = None
            return
        first = errors[0]
        self.rejected = tuple(
            dict.fromkeys(shadow.calls[c].batch for c in first.ids if c in shadow.calls)
        )
        calls = sorted({c for e in errors for c in e.ids})
        self._add(
            IncidentKind.PROVIDER_REJECTION,
            tuple(calls),
            f"the provider answers HTTP {first.status} to the invocation",
            reason=first.kind,
            text=first.text,
        )

    def _executions(self, executions: Sequence[Execution]) -> None:
        for e in executions[self.cursor :]:
            before = self.world.get(e.path, 0)
            original = e.retry_of if e.retry_of is not None else e.call
            if original in self.version:
                if e.effect == "write":
                    self._add(
                        IncidentKind.DUPLICATED_SIDE_EFFECT,
                        (original, e.path),
                        f"re-ran write {e.tool}({e.path}) of call {original}",
                        reason="write",
                    )
                elif before != self.version[original]:
                    self._add(
                        IncidentKind.DUPLICATED_SIDE_EFFECT,
                        (original, e.path),
                        f"re-ran {e.tool}({e.path}) of call {original} against changed "
                        f"state: it saw v{self.version[original]}, now v{before}",
                        reason="changed_state",
                    )
            if e.effect == "write":
                self.world[e.path] = before + 1
            self.version[e.call] = self.world.get(e.path, 0)
        self.cursor = len(executions)

    def _costs(self, costs: Mapping[str, int]) -> None:
        for kind in (IncidentKind.DEFERRAL, IncidentKind.SPILL, IncidentKind.REINJECTION):
            name = kind.value
            more = costs.get(name, 0) - self.costs.get(name, 0)
            for _ in range(max(0, more)):
                self._add(kind, (), f"the runtime reports a {kind.label}")
            self.costs[name] = costs.get(name, 0)


def request_digest(request: Sequence[Mapping[str, Any]]) -> str:
    return json.dumps(list(request), sort_keys=True, default=str)

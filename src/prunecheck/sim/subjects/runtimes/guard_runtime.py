"""A reference runtime built on :class:`prunecheck.guard.CommitGuard`.

It is the plainest runtime that deploys the guard: OpenAI message dicts, a
budget check after every append, tools run at once when a batch is issued,
results streamed into their message, the naive retry (re-run the batch the
provider named) — and every prune decided by the guard wrapping a policy or
list function.  ``runtime:guard:POLICY`` drives it through the protocol, so
``search``, ``explore`` and the simulator test the guard as real code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from prunecheck.guard import CommitGuard, HardCeilingExceeded, Plan, SpillStore
from prunecheck.model.events import (
    AssistantChunk,
    BudgetCheck,
    IssueBatch,
    NewSession,
    ResultChunk,
    Retry,
    SystemPrompt,
    ToolFailure,
    UserMessage,
)
from prunecheck.model.incidents import IncidentKind
from prunecheck.model.policies import Policy
from prunecheck.sim.subjects.runtimes.stimuli import (
    Call,
    Execution,
    Rejected,
    Stimulus,
    count_tokens,
)

__all__ = ["GuardedRuntime"]


class GuardedRuntime:
    """OpenAI dicts + CommitGuard(policy) + a spill store in memory."""

    def __init__(
        self,
        policy: Policy | object,
        budget: int,
        hard_ceiling: int,
        store: SpillStore | None = None,
        execs: list[Execution] | None = None,
    ) -> None:
        self.guard = CommitGuard(
            policy,
            budget=budget,
            hard_ceiling=hard_ceiling,
            store=store if store is not None else SpillStore(":memory:"),
        )
        self.messages: list[dict[str, Any]] = []
        self.by_id: dict[str, dict[str, Any]] = {}
        self.batches: dict[str, tuple[Call, ...]] = {}
        self.execs: list[Execution] = execs if execs is not None else []
        self.rejected: tuple[str, ...] = ()
        self.batch_of: dict[str, str] = {}  # call id -> its assistant message id

    # ------------------------------------------------------------------ feed
    def feed(self, stimulus: Stimulus | Rejected) -> None:
        g = self.guard
        if isinstance(stimulus, Rejected):
            self.rejected = stimulus.calls
            return
        event = stimulus.event
        if isinstance(event, SystemPrompt | UserMessage):
            role = "system" if isinstance(event, SystemPrompt) else "user"
            message = self._append(stimulus.id, {"role": role, "content": stimulus.text})
            g.message(stimulus.id, role, count_tokens(stimulus.text), message)
        elif isinstance(event, AssistantChunk):
            self._stream(stimulus)
        elif isinstance(event, IssueBatch):
            self._calls(stimulus)
        elif isinstance(event, ResultChunk):
            self._result(stimulus)
        elif isinstance(event, ToolFailure):
            call = stimulus.id
            mid = f"result:{call}"
            if mid in self.by_id:  # drop the partial result, answer with the error
                self._remove([mid])
                g.removed([mid])
            message = self._answer(
                call, {"role": "tool", "tool_call_id": call, "content": stimulus.text}
            )
            g.result_complete(call, count_tokens(stimulus.text), mid, message)
        elif isinstance(event, Retry):
            self._retry()
            return
        elif isinstance(event, NewSession):  # a fresh context and spill store
            fresh = GuardedRuntime(g.trimmer, g.budget, g.hard_ceiling, execs=self.execs)
            self.guard, self.messages, self.by_id = fresh.guard, fresh.messages, fresh.by_id
            self.batches, self.batch_of, self.rejected = {}, {}, ()
            return
        elif not isinstance(event, BudgetCheck):
            return  # an invocation, a file changed: nothing to append
        self._check()

    def _stream(self, st: Stimulus) -> None:
        g, tokens = self.guard, count_tokens(st.text)
        message = self.by_id.get(st.id)
        if message is None:
            message = self._append(st.id, {"role": "assistant", "content": st.text})
            g.stream_opened(st.id, "assistant", tokens, message)
        else:
            message["content"] += " " + st.text
            g.stream_chunk(st.id, tokens)
        if st.last:
            g.stream_closed(st.id)

    def _calls(self, st: Stimulus) -> None:
        paths = [c.arguments.get("path", "") for c in st.calls]
        message = {
            "role": "assistant",
            "content": st.text,
            "tool_calls": [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.tool, "arguments": _json(c.arguments)},
                }
                for c in st.calls
            ],
        }
        for unit in self.guard.calls(
            st.id,
            [c.id for c in st.calls],
            count_tokens(st.text),
            message,
            resources=[p for p in paths if p],
        ):
            for mid, payload in zip(unit.ids, unit.payloads, strict=True):
                assert isinstance(payload, dict)
                self._append(mid, payload)
        self._append(st.id, message)
        self.batches[st.id] = st.calls
        self.batch_of.update((c.id, st.id) for c in st.calls)
        for c in st.calls:
            self.execs.append(Execution(c.id, c.tool, c.arguments.get("path", ""), c.effect))

    def _result(self, st: Stimulus) -> None:
        call = st.id
        g, mid, tokens = self.guard, f"result:{call}", count_tokens(st.text)
        message = self.by_id.get(mid)
        if message is None:
            message = self._answer(call, {"role": "tool", "tool_call_id": call, "content": st.text})
            g.result_chunk(call, tokens, mid, message)
        else:
            message["content"] += " " + st.text
            g.result_chunk(call, tokens, mid)
        if st.last:
            g.result_complete(call)

    def _retry(self) -> None:
        """The naive retry: re-run every call of the batches the provider named."""
        named = set(self.rejected)
        for calls in self.batches.values():
            if named & {c.id for c in calls}:
                for c in calls:
                    self.execs.append(
                        Execution(c.id, c.tool, c.arguments.get("path", ""), c.effect)
                    )
        self.rejected = ()

    # ----------------------------------------------------------------- check
    def _check(self) -> None:
        try:
            plan = self.guard.check()
        except HardCeilingExceeded as exc:  # fail loudly: recoverable, context intact
            plan = exc.plan
        self._apply(plan)

    def _apply(self, plan: Plan) -> None:
        if plan.is_empty():
            return
        for mid in plan.clear:
            message = self.by_id[mid]
            words = min(count_tokens(message["content"]), 8)
            message["content"] = " ".join(["[cleared]"] + ["~"] * (words - 1))
        for group in plan.summarize:
            summary = {
                "role": "user",
                "content": " ".join(["[summary]"] + ["~"] * (group.tokens - 1)),
            }
            at = self.messages.index(self.by_id[group.message_ids[0]])
            self.messages.insert(at, summary)
            self.by_id[group.summary_id] = summary
            self.guard.attach(group.summary_id, summary)
        self._remove(plan.remove)

    def _append(self, mid: str, message: dict[str, Any]) -> dict[str, Any]:
        self.messages.append(message)
        self.by_id[mid] = message
        return message

    def _answer(self, call: str, message: dict[str, Any]) -> dict[str, Any]:
        """A result goes right after its call message and the results before
        it (OpenAI's rule), even when a user message arrived meanwhile."""
        batch = self.batch_of.get(call)
        siblings = {
            id(self.by_id[m])
            for m in (batch, *(f"result:{c}" for c, b in self.batch_of.items() if b == batch))
            if m is not None and m in self.by_id
        }
        at = max((i for i, m in enumerate(self.messages) if id(m) in siblings), default=None)
        self.by_id[f"result:{call}"] = message
        if at is None:
            self.messages.append(message)
        else:
            self.messages.insert(at + 1, message)
        return message

    def _remove(self, ids: Sequence[str]) -> None:
        gone = {id(self.by_id.pop(m)) for m in ids if m in self.by_id}
        self.messages = [m for m in self.messages if id(m) not in gone]

    # ----------------------------------------------------------------- reads
    def request(self) -> Sequence[Mapping[str, Any]]:
        return self.messages

    def executions(self) -> Sequence[Execution]:
        return self.execs

    def costs(self) -> Mapping[str, int]:
        st = self.guard.stats
        return {
            IncidentKind.DEFERRAL.value: st.deferred,
            IncidentKind.SPILL.value: st.spills,
            IncidentKind.REINJECTION.value: st.reinjections,
        }

    def copy(self) -> GuardedRuntime:
        """An independent copy (the explorer branches runtimes).  O(n)."""
        fresh = {id(m): dict(m) for m in self.messages}
        fresh.update((id(m), dict(m)) for m in self.by_id.values() if id(m) not in fresh)
        twin = object.__new__(GuardedRuntime)
        twin.guard = self.guard.copy(lambda p: fresh.get(id(p), p))
        twin.messages = [fresh[id(m)] for m in self.messages]
        twin.by_id = {k: fresh[id(v)] for k, v in self.by_id.items()}
        twin.batches, twin.execs = dict(self.batches), list(self.execs)
        twin.rejected, twin.batch_of = self.rejected, dict(self.batch_of)
        return twin

    def state_key(self) -> tuple[object, ...]:
        return tuple(self.guard.spilled)


def _json(arguments: Mapping[str, str]) -> str:
    import json

    return json.dumps(dict(arguments))

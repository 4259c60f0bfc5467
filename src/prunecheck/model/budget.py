"""The budget check: when it fires, the policy call, the gate, spill,
re-injection and the hard ceiling.

These are the steps between a context over its budget and the context
after the prune: :func:`after_append` fires the check where the runtime's
``check_at`` knob puts it, :func:`budget_check` asks the policy
(:func:`ask_policy`), lets the gate decide (:func:`~.gates.decide`), applies
what it decided (:func:`apply_proposal`), defers or spills, and
:func:`ceiling` reports a hard-ceiling overrun.  Each takes the
:class:`~.engine.EventWork` of the event being applied, whose bookkeeping
(incidents, notes, counters, unit structure) they use.

Examples
--------
A context over budget: the check asks the policy, the gate lets its
proposal through, and the context is back under budget.

>>> from prunecheck.model.config import RuntimeConfig
>>> from prunecheck.model.context import Role
>>> from prunecheck.model.policies import builtin_policy
>>> from prunecheck.model.state import initial_state
>>> work = EventWork(initial_state(RuntimeConfig(budget=100, hard_ceiling=200),
...                                builtin_policy("recency")))
>>> for _ in range(3):
...     _ = work.plain(Role.USER, 60, "hello")
>>> budget_check(work)
>>> work.ctx.used <= 100, work.state.counters["checks"]
(True, 1)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from .actions import PLACEHOLDER_TOKENS, Proposal, proposal_from
from .config import CheckAt
from .context import Message, Role
from .engine import EventWork
from .errors import PolicyError
from .gates import Gate, decide, spill_plan
from .incidents import IncidentKind
from .notes import NoteKind
from .policies import ContextView
from .state import CounterName

__all__ = [
    "after_append",
    "apply_proposal",
    "ask_policy",
    "budget_check",
    "ceiling",
    "reinject",
    "spill",
]


def after_append(work: EventWork, unit_done: bool) -> None:
    """The runtime's own budget check after an append, per ``check_at``.

    Parameters
    ----------
    work : EventWork
        The event being applied.
    unit_done : bool
        Whether the append completed its unit (a batch's last result), which
        is when an ``after_batch`` runtime checks.
    """
    when = work.state.config.check_at
    if when is CheckAt.AFTER_APPEND or (when is CheckAt.AFTER_BATCH and unit_done):
        budget_check(work)


def _protected(work: EventWork) -> Callable[[Message], bool]:
    """What no prune may touch: the system prompt and the last user message."""
    state = work.state
    return lambda message: message.role is Role.SYSTEM or message.id == state.last_user


def budget_check(work: EventWork) -> None:
    """One budget check: if the context is over budget, defer (a deferring
    gate with calls pending or open messages in the way) or prune; under the
    spill gate, spill what is still over the hard ceiling; then report a
    hard-ceiling overrun.

    Parameters
    ----------
    work : EventWork
        The event being applied.
    """
    state, ctx, cfg = work.state, work.ctx, work.state.config
    work.bump(CounterName.CHECKS)
    need = ctx.used - cfg.budget
    state.deferred = False
    if ctx.has_open():
        work.bump(CounterName.OPEN_CHECKS)
    if need > 0:
        work.bump(CounterName.PRESSED_CHECKS)
        if _is_live(work):
            work.bump(CounterName.LIVE_PRESSED_CHECKS)
        if cfg.gate.defers and state.pending:
            state.deferred = True
            work.bump(CounterName.DEFERRED_CHECKS)
            calls = tuple(state.pending)
            work.incident(
                IncidentKind.DEFERRAL,
                calls,
                f"over budget by {need} tokens; deferred while {len(calls)} call(s) pending",
                reason="pending_call",
            )
            if state.record:
                work.note(
                    NoteKind.DEFER,
                    f"deferred: {len(calls)} call(s) pending "
                    f"({', '.join(calls)}); over budget by {need}",
                    calls,
                )
        else:
            _prune(work, need)
            need = ctx.used - cfg.budget
            if need > 0 and cfg.gate.defers and ctx.has_open():
                state.deferred = True
                work.bump(CounterName.DEFERRED_CHECKS)
                opened = ctx.open_ids()
                work.incident(
                    IncidentKind.DEFERRAL,
                    opened,
                    f"over budget by {need} tokens; the rest would touch open message(s)",
                    reason="open_message",
                )
                work.note(
                    NoteKind.DEFER,
                    f"deferred: budget cannot be met without touching open {', '.join(opened)}",
                    opened,
                )
        if cfg.gate is Gate.SPILL and ctx.used > cfg.hard_ceiling:
            spill(work, ctx.used - cfg.budget)
    ceiling(work, "budget check")


def ceiling(work: EventWork, at: str, used: int | None = None) -> None:
    """Report a hard-ceiling overrun (once, until the context is under the
    ceiling again); the context is left intact.

    Parameters
    ----------
    work : EventWork
        The event being applied.
    at : str
        Where the ceiling was checked, for the incident's text.
    used : int, optional
        The tokens to judge (the context the model sees when the provider's
        server holds or edits part of it); default: the client's context.
    """
    state, limit = work.state, work.state.config.hard_ceiling
    used = work.ctx.used if used is None else used
    if used > limit:
        if not state.over_ceiling:
            state.over_ceiling = True
            work.incident(
                IncidentKind.HARD_CEILING_OVERRUN,
                (),
                f"{used} tokens in context at {at}, over the hard ceiling {limit}",
            )
            work.note(
                NoteKind.OVERRUN,
                f"hard ceiling overrun: {used} > {limit} — fail "
                "loudly (recoverable), context left intact",
            )
    else:
        state.over_ceiling = False


def ask_policy(work: EventWork, need: int) -> Proposal:
    """Call the policy on a read-only view of the context and read its answer.

    Parameters
    ----------
    work : EventWork
        The event being applied.
    need : int
        Tokens over budget: what the policy is asked to free.

    Returns
    -------
    Proposal
        What the policy proposed, read by :func:`~.actions.proposal_from`.

    Raises
    ------
    PolicyError
        if the policy raised or returned something that is not a proposal,
        placed at the step (counted from 1).
    """
    state = work.state
    view = ContextView(
        work.ctx,
        pending_calls=frozenset(state.pending),
        budget=state.config.budget,
        now=state.now,
        turn=state.turn,
    )
    name = state.policy.name
    work.bump(CounterName.POLICY_CALLS)
    try:
        result = state.policy.select(view, need)
        return proposal_from(result, work.ctx, name, state.step_index + 1)
    except PolicyError as exc:
        if exc.step is not None:  # placed already (by proposal_from)
            raise
        raise exc.at_step(state.step_index + 1) from None
    except (Exception, SystemExit, GeneratorExit) as exc:  # sys.exit in-process too
        said = f"called sys.exit({exc.code!r})" if isinstance(exc, SystemExit) else ""
        raise PolicyError(
            f"policy {name!r}",
            f"select(view, need={need}) " + (said or f"raised {type(exc).__name__}: {exc}") + ".",
            "fix the policy; prunecheck records this as a policy error for the run.",
            step=state.step_index + 1,
        ) from exc


def _prune(work: EventWork, need: int) -> None:
    """Ask the policy, let the gate decide, record what it found, apply."""
    state = work.state
    proposal = ask_policy(work, need)
    live = _is_live(work)
    if not proposal.is_empty():
        work.bump(CounterName.PROPOSALS)
        if live:
            work.bump(CounterName.LIVE_PROPOSALS)
    decision = decide(state.config.gate, work.ctx, proposal, _protected(work))
    for v in decision.violations:
        work.incident(
            IncidentKind.INVALID_PRUNE,
            (v.unit_id, *v.ids),
            f"prune applied that {v.describe()}",
            reason=v.reason.value,
        )
    if decision.refused:
        work.bump(CounterName.REFUSED_PRUNES)
        work.note(
            NoteKind.REFUSE,
            "refused prune: " + "; ".join(v.describe() for v in decision.refused),
            proposal.removed(),
        )
    if state.record:  # the notes below cost string work on every prune
        if decision.grown or decision.shrunk:
            work.note(
                NoteKind.CHECK,
                f"gate {state.config.gate}: grew "
                f"{list(decision.grown)}, shrank {list(decision.shrunk)}",
            )
        work.note(
            NoteKind.CHECK,
            f"budget check: {work.ctx.used} used > budget "
            f"{state.config.budget}; policy {state.policy.name} "
            f"proposed {_proposal_text(proposal)}",
        )
    if live and not decision.apply.is_empty():
        work.bump(CounterName.LIVE_PRUNES)
    apply_proposal(work, decision.apply)


def _is_live(work: EventWork) -> bool:
    """Whether a call is pending or a message open: the state the
    commit-boundary invariant is about."""
    return bool(work.state.pending) or work.ctx.has_open()


def apply_proposal(work: EventWork, proposal: Proposal) -> None:
    """Apply what the gate let through: clear, evict, summarize.

    Parameters
    ----------
    work : EventWork
        The event being applied.
    proposal : Proposal
        What to apply (the gate's decision, not the policy's raw proposal).
    """
    ctx = work.ctx
    if proposal.is_empty():
        return
    work.bump(CounterName.PRUNES)
    touched: list[Message] = []
    # Which side removed what, when the provider's server keeps a side too.
    who = "" if work.state.server is None else "client "
    partial = dict(proposal.clear_to)
    for mid in proposal.clear:
        message = ctx.get(mid)
        if message is None or message.cleared:
            continue
        if message.closed:
            left = partial.get(mid, PLACEHOLDER_TOKENS)
            new = replace(message, tokens=min(message.tokens, left), cleared=True, text="[cleared]")
        else:  # a streaming message loses what it had so far
            new = replace(
                message, tokens=0, first_chunk=message.first_chunk + message.chunks, chunks=0
            )
        ctx.update(new)
        work.note(
            NoteKind.CLEAR, f"{who}cleared {mid} ({message.tokens} → {new.tokens} tokens)", (mid,)
        )
    if proposal.evict:
        removed = ctx.remove(proposal.evict)
        work.bump(CounterName.EVICTED, len(removed))
        touched.extend(removed)
        work.note(NoteKind.EVICT, f"{who}evicted " + ", ".join(proposal.evict), proposal.evict)
    for group in proposal.summarize:
        ids = tuple(m for m in group.message_ids if m in ctx)
        if not ids:
            continue
        total = sum(ctx[m].tokens for m in ids)
        sid = work.new_message_id()
        summary = Message(
            sid,
            Role.USER,
            group.tokens or max(1, total // 10),
            work.state.turn,
            work.state.now,
            unit_id=sid,
            summary_of=ids,
            text=group.text or f"summary of {len(ids)} messages",
        )
        removed = ctx.summarize(ids, summary)
        touched.extend(removed)
        work.note(
            NoteKind.SUMMARIZE,
            f"{who}summarized {', '.join(ids)} into {sid} ({total} → {summary.tokens} tokens)",
            (*ids, sid),
        )
    work.forget_removed(touched)


def spill(work: EventWork, excess: int) -> None:
    """Move whole closed units to the side store until ``excess`` tokens
    are freed (the spill gate's last resort over the hard ceiling).

    Parameters
    ----------
    work : EventWork
        The event being applied.
    excess : int
        Tokens to free.
    """
    state = work.state
    for ids in spill_plan(work.ctx, excess, _protected(work)):
        unit = work.ctx[ids[0]].unit_id
        removed = work.ctx.remove(ids)
        state.spilled[unit] = tuple(removed)
        work.forget_removed(removed)
        work.bump(CounterName.SPILLS)
        work.incident(
            IncidentKind.SPILL,
            ids,
            f"spilled unit {unit} ({sum(m.tokens for m in removed)} tokens) to the side store",
        )
        work.note(NoteKind.SPILL, f"spilled unit {unit} ({', '.join(ids)})", ids)


def reinject(work: EventWork, paths: set[str]) -> None:
    """Bring back every spilled unit whose calls touched one of ``paths``
    (a new batch reads them again).

    Parameters
    ----------
    work : EventWork
        The event being applied.
    paths : set of str
        The paths the new batch's calls touch.
    """
    state = work.state
    for unit, messages in list(state.spilled.items()):
        batch = state.batches.get(unit)
        if batch is None or not any(state.calls[c].spec.path in paths for c in batch.calls):
            continue
        del state.spilled[unit]
        for message in messages:
            work.ctx.append(message)
        work.recheck(unit)
        ids = tuple(m.id for m in messages)
        work.bump(CounterName.REINJECTIONS)
        work.incident(IncidentKind.REINJECTION, ids, f"re-injected spilled unit {unit}")
        work.note(NoteKind.REINJECT, f"re-injected unit {unit} ({', '.join(ids)})", ids)


def _proposal_text(p: Proposal) -> str:
    parts = []
    if p.evict:
        parts.append("evict " + ", ".join(p.evict))
    if p.clear:
        parts.append("clear " + ", ".join(p.clear))
    for g in p.summarize:
        parts.append("summarize " + ", ".join(g.message_ids))
    return "; ".join(parts) or "nothing"

"""The server-side events and the context an invocation really sends.

:func:`server_view` is what an invocation asks first: the *effective
context* the model sees (what the client sent, plus what the server held,
minus what the server cleared) when the provider keeps state on its side,
or None when the model sees the client's copy (every runtime without
server-side state: that path costs nothing).  :func:`hold_output` keeps a
stored response's output items on the server as the model produces them;
:func:`on_compaction` and :func:`on_clear_tool_uses` are the handlers of
the two server events.  Every note says which side removed what: the
client's copy, or the server's.

A client-side trim of items the server holds is an ``ineffective_trim``: an
incident, so that verdicts and JSON carry it, and not a violation, because
the model's context is whole and honest (it sees more than the client
thinks, never less); what fails is the budget the trim was for, which is
what the cost kinds count.  Pure: no I/O.
"""

from __future__ import annotations

from .boundary import check_prune
from .context import Context, Message, Role
from .engine import EventWork
from .errors import TraceError
from .events import ClearToolUses, Compaction, Invoke
from .incidents import IncidentKind
from .notes import NoteKind
from .server import RESPONSES, ServerState, compactable, held_trims, tool_uses_to_clear

__all__ = ["hold_output", "on_clear_tool_uses", "on_compaction", "server_view", "store_response"]


def _ids(messages: list[Message] | tuple[str, ...]) -> str:
    ids = [m if isinstance(m, str) else m.id for m in messages]
    return ", ".join(ids) if len(ids) <= 8 else f"{', '.join(ids[:8])} and {len(ids) - 8} more"


def _stores(work: EventWork) -> bool:
    return work.state.config.provider == RESPONSES


def server_view(work: EventWork, event: Invoke) -> Context | None:
    """The context the model sees at this invocation, or None when it is the
    client's copy.  The server stores nothing yet (:func:`store_response`
    does, once the request is accepted: a rejected request makes no response).

    Raises
    ------
    TraceError
        if the invocation is chained but the provider is not OpenAI
        Responses, or no response is stored to chain to.
    """
    state = work.state
    server = state.server
    if event.chained:
        if not _stores(work):
            raise TraceError(
                work.where(),
                f"a chained invocation (previous_response_id) under provider "
                f"{state.config.provider}: only OpenAI Responses keeps responses to chain to.",
                f'set "provider": "{RESPONSES}" in the trace\'s config, or drop "chained".',
            )
        if server is None or not server.response:
            raise TraceError(
                work.where(),
                "a chained invocation (previous_response_id) with no stored response "
                "before it: there is nothing on the server to chain to.",
                "invoke once without chained first; its response is what the next one names.",
            )
        return _chained(work, server)
    if _stores(work):
        return work.ctx.copy()
    if server is not None and server.blocks:
        view = _compacted(work, server)
        return _edited(work, server.edit, view) if server.edit is not None else view
    if server is not None and server.edit is not None:
        return _edited(work, server.edit, work.ctx.copy())
    return None


def _server(work: EventWork) -> ServerState:
    if work.state.server is None:
        work.state.server = ServerState()
    return work.state.server


def store_response(work: EventWork, view: Context | None, event: Invoke) -> None:
    """The server stores the accepted response (what the model saw, under a
    new number) when the provider keeps responses; a later request may
    chain to it.  ``view`` is :func:`server_view`'s answer."""
    if view is None or not _stores(work):
        return
    server = _server(work)
    server.response += 1
    server.held = view
    if event.chained:
        server.seen.update(view.ids())
        return
    server.seen = set(view.ids())
    server.told = set()
    work.note(
        NoteKind.SERVER,
        f"server stores response {server.label}: the {len(view)} item(s) "
        "the client sent (a later request may chain to it)",
    )


def _chained(work: EventWork, server: ServerState) -> Context:
    client = work.ctx
    before = server.label
    sent = [m for m in client if m.id not in server.seen]
    trimmed = held_trims(server, client, sent)
    view = server.held.copy()
    for m in sent:
        view.append(m)
        if m.role is Role.TOOL and m.call_id is not None:
            view.resolve(m.unit_id, m.call_id)
    work.note(
        NoteKind.SERVER,
        f"request names previous_response_id {before}: the server holds {len(server.held)} "
        f"item(s), the client sends {len(sent)} ({_ids(sent) or 'none'}); the client's own "
        f"copy has {len(client)} messages, {client.used} tokens",
        tuple(m.id for m in sent),
    )
    if trimmed:
        ids = tuple(m.id for m in trimmed)
        server.told.update(ids)
        tokens = sum(m.tokens for m in trimmed) - sum(
            client[m.id].tokens for m in trimmed if m.id in client
        )
        work.incident(
            IncidentKind.INEFFECTIVE_TRIM,
            ids,
            f"this trim had no effect: the server holds those items ({_ids(trimmed)}), "
            f"trimmed from the client's copy, in response {before}, which the request names "
            f"by previous_response_id; the model still sees them ({tokens} tokens)",
            reason="server_holds",
        )
    return view


def _compacted(work: EventWork, server: ServerState) -> Context:
    """The client's copy less what the Anthropic compaction blocks it sends
    replaced; a message the client trimmed among those is an ineffective
    trim (the server already ignored it)."""
    client = work.ctx
    ignored = server.ignored(client)
    view = client.copy()
    view.remove([mid for mid in ignored if mid in view])
    gone = tuple(mid for mid in ignored if mid not in client and mid not in server.told)
    if gone:
        server.told.update(gone)
        blocks = ", ".join(b for b, ids in server.blocks.items() if set(ids) & set(gone))
        work.incident(
            IncidentKind.INEFFECTIVE_TRIM,
            gone,
            f"this trim had no effect: the server's compaction block {blocks} already "
            f"replaced those messages ({_ids(gone)}); the model sees the block's summary, "
            "not them, whether the client keeps them or not",
            reason="server_compacted",
        )
    return view


def _edited(work: EventWork, edit: ClearToolUses, view: Context) -> Context:
    calls = work.state.calls
    cleared, freed = tool_uses_to_clear(
        view, edit, lambda cid: calls[cid].spec.tool if cid in calls else ""
    )
    if not cleared:
        return view
    for m in cleared:
        view.update(m)
    work.note(
        NoteKind.SERVER,
        f"server clears {_ids([m for m in cleared])} to a placeholder (clear_tool_uses: "
        f"{freed} tokens freed, the model sees {view.used}); the client's copy is unchanged",
        tuple(m.id for m in cleared),
    )
    return view


def hold_output(work: EventWork, message: Message) -> None:
    """Keep (or update) a model output item on the server, as part of the
    stored response, when the provider stores responses.  O(1)."""
    server = work.state.server
    if server is None or not server.response or message.role is not Role.ASSISTANT:
        return
    held = server.held
    if message.id in held:
        held.update(message)
    elif message.id not in server.seen:
        held.append(message)
        server.seen.add(message.id)
        for cid in message.tool_calls:
            held.mark_pending(message.unit_id, cid)


def on_compaction(work: EventWork, event: Compaction) -> None:
    """The server replaces the assistant messages, calls and results it holds
    by one compaction item, judged as any summary is: a summary of whole,
    closed, non-pending units is sound; one that takes a call whose result
    the server has not received is an invalid prune (by the server)."""
    state = work.state
    server = state.server
    if state.config.provider == "anthropic":
        _anthropic_compaction(work, event)
        return
    if not _stores(work) or server is None or not server.response:
        raise TraceError(
            work.where(),
            "a server compaction with no stored response: compaction acts on the items "
            f"an OpenAI Responses server holds, or on an Anthropic conversation (provider "
            f"{state.config.provider}).",
            f'use provider "{RESPONSES}" and invoke before the compaction, or provider '
            '"anthropic".',
        )
    held = server.held
    ids = compactable(held)
    if not ids:
        work.note(NoteKind.SERVER, f"server compaction of {server.label}: nothing to compact")
        return
    for v in check_prune(held, ids):
        work.incident(
            IncidentKind.INVALID_PRUNE,
            (v.unit_id, *v.ids),
            f"server compaction of response {server.label} {v.describe()}",
            reason=v.reason.value,
        )
    total = sum(held[m].tokens for m in ids)
    sid = work.new_message_id()
    item = Message(
        sid,
        Role.ASSISTANT,
        event.tokens,
        state.turn,
        state.now,
        unit_id=sid,
        summary_of=ids,
        text=event.text or "compaction item (encrypted)",
    )
    units = dict.fromkeys(held[m].unit_id for m in ids)
    held.summarize(ids, item)
    for unit in units:  # the compaction took the calls: the server waits on none of them
        for cid in held.pending_in(unit):
            held.resolve(unit, cid)
    server.seen.add(sid)
    server.told.add(sid)  # the server's own item: never the client's to trim
    work.note(
        NoteKind.SERVER,
        f"server compaction of response {server.label}: {_ids(ids)} replaced by compaction "
        f"item {sid} ({total} → {event.tokens} tokens); the client's copy is unchanged",
        (*ids, sid),
    )


def _anthropic_compaction(work: EventWork, event: Compaction) -> None:
    """Anthropic's server compaction: the response carries a compaction block
    (its summary) that the client keeps; every message before it but the
    system prompt is replaced for the model from then on, judged as any
    summary is (one that takes a call whose result has not arrived is an
    invalid prune, by the server)."""
    state, server, client = work.state, _server(work), work.ctx
    done = set(server.ignored(client))
    ids = tuple(m.id for m in client if m.role is not Role.SYSTEM and m.id not in done)
    if not ids:
        work.note(NoteKind.SERVER, "server compaction (Anthropic): nothing to compact")
        return
    for v in check_prune(client, ids):
        work.incident(
            IncidentKind.INVALID_PRUNE,
            (v.unit_id, *v.ids),
            f"server compaction (Anthropic) {v.describe()}",
            reason=v.reason.value,
        )
    total = sum(client[m].tokens for m in ids)
    sid = work.new_message_id()
    block = Message(
        sid,
        Role.ASSISTANT,
        event.tokens,
        state.turn,
        state.now,
        unit_id=sid,
        summary_of=ids,
        text=event.text or "compaction block (the server's summary)",
    )
    client.append(block)
    server.blocks[sid] = ids
    work.note(
        NoteKind.SERVER,
        f"server compaction (Anthropic): the response carries compaction block {sid}, which "
        f"replaces {_ids(ids)} for the model from now on ({total} → {event.tokens} tokens); "
        "the client keeps them, and the server ignores them while the client sends the block",
        (*ids, sid),
    )


def on_clear_tool_uses(work: EventWork, event: ClearToolUses) -> None:
    """The client sends Anthropic's ``clear_tool_uses`` edit with every
    request from now on."""
    provider = work.state.config.provider
    if provider != "anthropic":
        raise TraceError(
            work.where(),
            f"clear_tool_uses is Anthropic's server-side context editing; the trace's "
            f"provider is {provider}.",
            'set "provider": "anthropic" in the trace\'s config.',
        )
    _server(work).edit = event
    excluded = f", exclude_tools {list(event.exclude_tools)}" if event.exclude_tools else ""
    inputs = ", clear_tool_inputs" if event.clear_tool_inputs else ""
    work.note(
        NoteKind.SERVER,
        f"every request carries context_management clear_tool_uses (trigger {event.trigger}, "
        f"keep {event.keep}, clear_at_least {event.clear_at_least}{excluded}{inputs}): the "
        "server clears old tool results before the model sees them",
    )

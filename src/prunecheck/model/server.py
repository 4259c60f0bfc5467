"""Server-side state: what the provider holds and edits on its side.

The client's context is not always what the model sees.  Three provider
features change it on the server, out of the client's sight:

* an OpenAI Responses request chained by ``previous_response_id`` sends
  only the items the server does not hold: the model sees the server's
  stored items plus the new ones, so a client-side trim of an item the
  server already holds has no effect;
* a Responses server-side compaction replaces the stored assistant
  messages, calls and results by one compaction item (user messages stay);
* Anthropic context editing (``clear_tool_uses``) replaces old tool
  results by a placeholder before the model sees a request; the client's
  copy stays whole;
* an Anthropic server compaction (``context_management`` edit
  ``compact_20260112``) answers with a ``compaction`` block that the client
  keeps in its history: from then on the server ignores every message
  before the block (the model sees the block's summary instead), as long
  as the client sends the block.

The *effective context* of an invocation is what the client sent, plus
what the server held, minus what the server cleared or compacted.
:class:`ServerState` is the server's side of one conversation; the
functions here compute on it without touching the runtime (the handlers
that note and judge live in :mod:`.server_events`).  Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from .actions import PLACEHOLDER_TOKENS
from .context import Context, Message, Role
from .events import ClearToolUses

__all__ = [
    "RESPONSES",
    "SERVER_PLACEHOLDER",
    "ServerState",
    "compactable",
    "held_trims",
    "is_paired",
    "tool_uses_to_clear",
]

#: The provider value whose server stores every response (``store`` is true
#: by default in the Responses API) and accepts ``previous_response_id``.
RESPONSES = "openai-responses"

#: The text a server-cleared tool result keeps: an honest placeholder by the
#: project's rule (:mod:`prunecheck.sim.subjects.loops.placeholder`).  The
#: narrative, not this text, says the server cleared it.
SERVER_PLACEHOLDER = "[tool result cleared to save context]"


@dataclass(slots=True)
class ServerState:
    """The provider's side of one conversation.

    Attributes
    ----------
    response : int
        Number of the last response the server stored (``r1``, ``r2`` …);
        0: none stored.
    held : Context
        The items the server holds for that response, in order: the
        context the model saw, then the response's output items.
    seen : set of str
        Ids of every item the server holds or compacted in this chain: what
        a chained request does not send again.
    edit : ClearToolUses or None
        The Anthropic context editing the client sends with each request.
    told : set of str
        Ids already reported as an ineffective trim (reported once), and
        the server's own items (compaction items), which the client never had.
    blocks : dict of str to tuple of str
        Anthropic compaction blocks: the block's message id -> the ids of
        the messages it replaced, which the server ignores while the client
        sends the block.
    """

    response: int = 0
    held: Context = field(default_factory=Context)
    seen: set[str] = field(default_factory=set)
    edit: ClearToolUses | None = None
    told: set[str] = field(default_factory=set)
    blocks: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def copy(self) -> ServerState:
        """An independent copy (messages are immutable and shared).  O(n)."""
        return ServerState(
            self.response,
            self.held.copy(),
            set(self.seen),
            self.edit,
            set(self.told),
            dict(self.blocks),
        )

    def ignored(self, client: Context) -> tuple[str, ...]:
        """The messages the Anthropic server ignores in a request of
        ``client``: those the compaction blocks the client still sends
        replaced.  O(messages replaced)."""
        return tuple(mid for block, ids in self.blocks.items() if block in client for mid in ids)

    @property
    def label(self) -> str:
        """The stored response's name, as narratives say it."""
        return f"r{self.response}"


def held_trims(server: ServerState, client: Context, sent: list[Message]) -> list[Message]:
    """The server's items that the client trimmed from its copy: evicted,
    cleared or summarized there, still whole on the server.  Items reported
    before are left out.  O(size of the server's items).

    Parameters
    ----------
    server : ServerState
        The server's side, before the chained request adds to it.
    client : Context
        The client's copy at the request.
    sent : list of Message
        The items the request sends (a client summary among them names the
        items it replaced).

    Returns
    -------
    list of Message
        The server's versions of those items, in the server's order.
    """
    summarized = {mid for m in sent for mid in m.summary_of}
    out = []
    for held in server.held:
        if held.id in server.told:
            continue
        mine = client.get(held.id)
        gone = mine is None or held.id in summarized
        if gone or (mine is not None and mine.cleared and not held.cleared):
            out.append(held)
    return out


def is_paired(view: Context) -> bool:
    """Whether every call in ``view`` has its result and every result its
    call: then no provider has a pairing error to find, and the invocation
    need not ask (the client's side knows this from its index; a view the
    server assembled is read whole).  O(n).

    >>> ctx = Context()
    >>> ctx.append(Message("m1", Role.ASSISTANT, 5, 1, 0.0, tool_calls=("c1",), unit_id="m1"))
    >>> is_paired(ctx)
    False
    >>> ctx.append(Message("m2", Role.TOOL, 5, 1, 0.0, call_id="c1", unit_id="m1"))
    >>> is_paired(ctx)
    True
    """
    calls: set[str] = set()
    answered: set[str] = set()
    for m in view:
        if m.summary_of:
            continue
        if m.role is Role.TOOL and m.call_id is not None:
            answered.add(m.call_id)
        elif m.role is Role.ASSISTANT:
            calls.update(m.tool_calls)
    return calls == answered


def compactable(held: Context) -> tuple[str, ...]:
    """What a Responses compaction replaces: every assistant message, call
    and result the server holds (earlier compaction items too); user
    messages and the instructions stay.  In order."""
    return tuple(m.id for m in held if m.role is Role.ASSISTANT or m.role is Role.TOOL)


def tool_uses_to_clear(
    view: Context, edit: ClearToolUses, tool_of: Callable[[str], str]
) -> tuple[list[Message], int]:
    """The tool results ``clear_tool_uses`` clears in ``view``, and the
    tokens that frees; nothing when the request is at or under the trigger,
    or when it would free fewer than ``clear_at_least`` tokens.

    The oldest results go first; the ``keep`` most recent results of tools
    not excluded stay, and results of a tool in ``exclude_tools`` are never
    cleared.  With ``clear_tool_inputs``, an assistant message whose every
    call's result is cleared loses its inputs as well.

    Parameters
    ----------
    view : Context
        The request the server received.
    edit : ClearToolUses
        The edit's settings.
    tool_of : callable
        The tool a call id ran.

    Returns
    -------
    (list of Message, int)
        The cleared versions of the messages to replace, and the tokens freed.
    """
    if view.used <= edit.trigger:
        return [], 0
    results = [
        m
        for m in view
        if m.role is Role.TOOL
        and m.closed
        and not m.cleared
        and m.call_id is not None
        and tool_of(m.call_id) not in edit.exclude_tools
    ]
    chosen = results[: max(0, len(results) - edit.keep)]
    out = [_placeholder(m) for m in chosen]
    if edit.clear_tool_inputs:
        done = {m.call_id for m in chosen}
        for m in view:
            if m.role is Role.ASSISTANT and m.tool_calls and done.issuperset(m.tool_calls):
                out.append(_placeholder(m))
    freed = sum(view[m.id].tokens - m.tokens for m in out)
    if freed < max(1, edit.clear_at_least):
        return [], 0
    return out, freed


def _placeholder(m: Message) -> Message:
    return replace(
        m, tokens=min(m.tokens, PLACEHOLDER_TOKENS), cleared=True, text=SERVER_PLACEHOLDER
    )

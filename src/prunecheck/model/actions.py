"""What a policy may propose: evict, clear, summarize — and how a proposal
is read from whatever a policy returned.

A policy's ``select(view, need)`` returns an iterable whose items are
message ids (``str``, meaning *evict*) or typed actions:

>>> p = proposal_from(["m3", Clear("m5"), Summarize(("m1", "m2"))], {"m1", "m2", "m3", "m5"},
...                   "demo", 0)
>>> p.evict, p.clear, p.removed()
(('m3',), ('m5',), ('m3', 'm1', 'm2'))
"""

from __future__ import annotations

from collections.abc import Container, Iterable
from dataclasses import dataclass

from .errors import PolicyError

__all__ = [
    "PLACEHOLDER_TOKENS",
    "Action",
    "Clear",
    "Evict",
    "Proposal",
    "Summarize",
    "proposal_from",
]

#: Tokens a cleared message keeps (its placeholder), in the model and the guard.
PLACEHOLDER_TOKENS = 8


@dataclass(frozen=True, slots=True)
class Evict:
    """Remove a message from the context."""

    message_id: str


@dataclass(frozen=True, slots=True)
class Clear:
    """Replace a message's content with a short placeholder; the message stays.

    ``tokens`` > 0 is a *partial* clear: the content is shortened to that
    many tokens (a trimmer that truncates a long tool result), judged like a
    clear — the message has lost content — but sized as what is left.
    """

    message_id: str
    tokens: int = 0


@dataclass(frozen=True, slots=True)
class Summarize:
    """Replace messages with one summary message of ``tokens`` tokens
    (0: a tenth of what it replaces)."""

    message_ids: tuple[str, ...]
    tokens: int = 0
    text: str = ""


Action = Evict | Clear | Summarize


@dataclass(frozen=True, slots=True)
class Proposal:
    """A normalized proposal: ids to evict, ids to clear, groups to summarize.

    ``clear_to`` holds the partial clears: ``(id, tokens left)`` for the ids of
    ``clear`` that are shortened rather than cleared to a placeholder.
    """

    evict: tuple[str, ...] = ()
    clear: tuple[str, ...] = ()
    summarize: tuple[Summarize, ...] = ()
    clear_to: tuple[tuple[str, int], ...] = ()

    def removed(self) -> tuple[str, ...]:
        """Every id the proposal takes out of the context (evicted or summarized)."""
        out = list(self.evict)
        for group in self.summarize:
            out.extend(group.message_ids)
        return tuple(dict.fromkeys(out))

    def is_empty(self) -> bool:
        return not (self.evict or self.clear or self.summarize)


def proposal_from(result: object, known: Container[str], policy: str, step: int) -> Proposal:
    """Read a policy's return value into a :class:`Proposal`.

    Raises
    ------
    PolicyError
        naming the policy and the step, if the value is not an iterable of
        ids and actions, or names a message that is not in the context.
    """
    if type(result) is list and all(type(mid) is str for mid in result):
        chosen = dict.fromkeys(result)  # the common answer, ids to evict: read it quickly
        if all(mid in known for mid in chosen):
            return Proposal(evict=tuple(chosen))
    subject = f"policy {policy!r}"
    if isinstance(result, str | bytes | dict) or not isinstance(result, Iterable):
        raise PolicyError(
            subject,
            f"select() must return an iterable of message ids or actions, "
            f"got {type(result).__name__}.",
            "return e.g. a list of ids to evict; an empty list proposes nothing.",
            step=step,
        )
    evict: dict[str, None] = {}
    clear: dict[str, int] = {}
    groups: list[Summarize] = []

    def known_id(mid: object) -> str:
        if not isinstance(mid, str):
            raise PolicyError(
                subject,
                f"select() returned {mid!r} ({type(mid).__name__}), which is neither a "
                "message id nor an action.",
                "yield message ids (str) from view.messages, or Evict/Clear/Summarize.",
                step=step,
            )
        if mid not in known:
            raise PolicyError(
                subject,
                f"select() returned unknown message id {mid!r}; it is not in the context.",
                "propose only ids taken from view.messages at this call.",
                step=step,
            )
        return mid

    def size(item: Clear | Summarize) -> int:
        tokens = item.tokens
        kind = type(item).__name__
        if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
            raise PolicyError(
                subject,
                f"select() returned {kind}(..., tokens={tokens!r}); tokens must be a whole "
                "number, 0 or more.",
                f"give {kind} the size of what it leaves, in tokens (0 for a placeholder).",
                step=step,
            )
        return tokens

    for item in result:
        if isinstance(item, Evict):
            evict[known_id(item.message_id)] = None
        elif isinstance(item, Clear):
            clear[known_id(item.message_id)] = size(item)
        elif isinstance(item, Summarize):
            if not item.message_ids:
                raise PolicyError(subject, "Summarize() needs at least one message id.", step=step)
            ids = tuple(dict.fromkeys(known_id(m) for m in item.message_ids))
            groups.append(Summarize(ids, size(item), item.text))
        else:
            evict[known_id(item)] = None
    taken = set(evict)
    kept_groups = []
    for group in groups:
        ids = tuple(m for m in group.message_ids if m not in taken)
        taken.update(ids)
        if ids:
            kept_groups.append(Summarize(ids, group.tokens, group.text))
    return Proposal(
        evict=tuple(evict),
        clear=tuple(m for m in clear if m not in taken),
        summarize=tuple(kept_groups),
        clear_to=tuple((m, n) for m, n in clear.items() if n and m not in taken),
    )

"""What a budget check decides: the records the guard hands back."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the rules load only for a guard told its providers (.preview)
    from prunecheck.model.provider.rule import ProviderError

__all__ = ["Deferral", "Plan", "Restored", "SummaryGroup"]


class Deferral(StrEnum):
    """Why a check deferred instead of pruning (the domain document's
    "cannot prune safely", distinct from "budget exceeded")."""

    PENDING_CALL = "pending_call"
    OPEN_MESSAGE = "open_message"
    #: The trimmer's (grown or shrunk) proposal would leave a history that a
    #: provider the guard was told of (``provider=``) rejects, where it
    #: accepted the history before: the guard refused the proposal
    #: (``Plan.rejections`` names the provider, rule and text).
    PROVIDER_REJECTION = "provider_rejection"


@dataclass(frozen=True, slots=True)
class SummaryGroup:
    """Messages the trimmer summarized: replace them by one message whose id
    the guard now tracks as ``summary_id`` (``tokens`` tokens)."""

    message_ids: tuple[str, ...]
    summary_id: str
    tokens: int
    text: str = ""


@dataclass(frozen=True, slots=True)
class Plan:
    """What one budget check decided.  Apply it to your message list.

    Attributes
    ----------
    evict: message ids to remove (whole, closed units only).
    clear: message ids whose content to replace by a placeholder.
    summarize: groups to replace by one summary message each.
    spill: message ids already committed to the spill store: remove them.
    deferred: why the check deferred (None if it did not).
    grown, shrunk: units the guard grew to whole / dropped from the proposal.
    used: tokens in the context after the plan.
    rejections: what the preview found, for a guard told its providers
        (``provider=``): for each provider that would reject the history the
        refused proposal (or spill) would have left, where it accepted the
        history before, its first such error — the same
        :class:`~prunecheck.model.provider.ProviderError` its validator
        answers (``provider``, ``rule`` id, the verbatim ``text``, the
        request location ``path``, ``ids``, ``status``).  Nothing it names
        was applied.
    """

    evict: tuple[str, ...] = ()
    clear: tuple[str, ...] = ()
    summarize: tuple[SummaryGroup, ...] = ()
    spill: tuple[str, ...] = ()
    deferred: Deferral | None = None
    grown: tuple[str, ...] = ()
    shrunk: tuple[str, ...] = ()
    used: int = 0
    rejections: tuple[ProviderError, ...] = ()

    @property
    def remove(self) -> tuple[str, ...]:
        """Every message id that leaves the list: evicted, summarized, spilled."""
        summarized = tuple(m for g in self.summarize for m in g.message_ids)
        return (*self.evict, *summarized, *self.spill)

    def is_empty(self) -> bool:
        return not (self.evict or self.clear or self.summarize or self.spill)


@dataclass(frozen=True, slots=True)
class Restored:
    """A spilled unit brought back because a new call names one of its
    resources: put ``payloads`` back (in order) before the new call message."""

    unit: str
    ids: tuple[str, ...]
    payloads: tuple[object, ...]

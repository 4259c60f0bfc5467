"""Notes: the runtime's own account of what one event did, for narratives
and timelines.  Recorded only when a state asks for them (``record``), so
the simulator's hot path pays nothing."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["Note", "NoteKind"]


class NoteKind(StrEnum):
    APPEND = "append"
    CHUNK = "chunk"
    CHECK = "check"
    EVICT = "evict"
    CLEAR = "clear"
    SUMMARIZE = "summarize"
    REFUSE = "refuse"
    DEFER = "defer"
    SPILL = "spill"
    REINJECT = "reinject"
    OVERRUN = "overrun"
    INVOKE = "invoke"
    REJECT = "reject"
    BLOCK = "block"
    RETRY = "retry"
    REPAIR = "repair"
    WORLD = "world"
    STREAM_LOST = "stream_lost"
    SESSION = "session"
    #: What the provider's server holds, clears or compacts (server-side state).
    SERVER = "server"


@dataclass(frozen=True, slots=True)
class Note:
    """One line of narrative, with the ids it concerns."""

    kind: NoteKind
    text: str
    ids: tuple[str, ...] = ()

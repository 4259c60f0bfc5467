"""The observed policy: the prunes a production log showed, replayed.

A trace imported from a log (``prunecheck import``) has no heuristic to
run: the runtime that wrote the log already decided what to remove, and the
log shows it (a message in request k is gone from request k+1).  This
policy proposes exactly those removals again, at the same place, so that
the trace's replay reproduces the incident — and the same events can be
replayed against another policy (the fix) with ``--policy``.

Messages are named by **labels**, not by the runtime's ids (``m7``), so
that a shrunk trace — fewer events, other ids — still removes the same
messages: a label is the first word of a message's text that starts with
``#`` (the importer writes ``#`` and a digest at the head of each message's
text, and names each call's path after the logged call id, so a result's
text ``read_file #call_4 @v0`` holds its label).  A removal fires at the
first budget check where its **trigger** (the newest message before the
request that shows the removal) is in the context.

Spec syntax (the text after ``observed:``), entries separated by ``;``::

    @TRIGGER evict L1 L2
    @TRIGGER clear L3=40             # L3's content cut to 40 tokens
    @TRIGGER summarize L4 L5 as S=120  # L4, L5 replaced by one 120-token message

>>> policy = parse_observed("@#u2 evict #calls.c_1 ; @#u3 clear #c_2=8")
>>> [(e.trigger, e.verb.value, e.targets) for e in policy.entries]
[('#u2', 'evict', ('#calls.c_1',)), ('#u3', 'clear', ('#c_2=8',))]
>>> policy.spec() == "observed:@#u2 evict #calls.c_1; @#u3 clear #c_2=8"
True
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from .actions import Action, Clear, Evict, Summarize
from .context import Message
from .errors import PolicyError
from .policies import ContextView

__all__ = [
    "OBSERVED_PREFIX",
    "ObservedEntry",
    "ObservedPolicy",
    "Verb",
    "label_of",
    "parse_observed",
]

#: What starts the spec of an observed policy.
OBSERVED_PREFIX = "observed:"
_LABEL = re.compile(r"#[A-Za-z0-9_.\-]+")
_SIZED = re.compile(r"(#[A-Za-z0-9_.\-]+)=(\d+)")


class Verb(StrEnum):
    """What an observed removal did."""

    EVICT = "evict"
    CLEAR = "clear"
    SUMMARIZE = "summarize"


def label_of(message: Message) -> str | None:
    """A message's label: the first word of its text that starts with ``#``.

    >>> from prunecheck.model.context import Role
    >>> label_of(Message("m3", Role.TOOL, 10, 1, 0.0, text="read_file #call_4 @v0"))
    '#call_4'
    """
    for word in message.text.split():
        if _LABEL.fullmatch(word):
            return word
    return None


@dataclass(frozen=True, slots=True)
class ObservedEntry:
    """One observed removal: at the check where ``trigger`` is in context,
    ``verb`` the ``targets`` (labels; ``L=N`` for a clear's size, and for a
    summary the last target is ``S=N``, the summary's label and size)."""

    trigger: str
    verb: Verb
    targets: tuple[str, ...]

    def text(self) -> str:
        if self.verb is Verb.SUMMARIZE:
            *ids, summary = self.targets
            return f"@{self.trigger} summarize {' '.join(ids)} as {summary}"
        return f"@{self.trigger} {self.verb} {' '.join(self.targets)}"


@dataclass(frozen=True, slots=True)
class ObservedPolicy:
    """Replays observed removals (see the module notes).  Stateless: the
    same object replays any number of traces, shrunk or not."""

    entries: tuple[ObservedEntry, ...]
    name: str = "observed"

    def spec(self) -> str:
        """The spec text that :func:`parse_observed` reads back."""
        return OBSERVED_PREFIX + "; ".join(e.text() for e in self.entries)

    def select(self, view: ContextView, need: int) -> list[Action]:
        present: dict[str, str] = {}
        for m in view.messages:
            label = label_of(m)
            if label is not None:
                present.setdefault(label, m.id)
        out: list[Action] = []
        taken: set[str] = set()
        for entry in self.entries:
            if entry.trigger not in present:
                continue
            if entry.verb is Verb.EVICT:
                for label in entry.targets:
                    mid = present.get(label)
                    if mid is not None and mid not in taken:
                        taken.add(mid)
                        out.append(Evict(mid))
            elif entry.verb is Verb.CLEAR:
                for target in entry.targets:
                    label, size = _sized(target)
                    mid = present.get(label)
                    if mid is not None and mid not in taken:
                        taken.add(mid)
                        out.append(Clear(mid, size))
            else:
                *labels, summary = entry.targets
                label, size = _sized(summary)
                ids = tuple(present[x] for x in labels if x in present and present[x] not in taken)
                if ids and label not in present:
                    taken.update(ids)
                    out.append(Summarize(ids, size, f"{label} summary of {len(ids)} messages"))
        return out


def _sized(target: str) -> tuple[str, int]:
    match = _SIZED.fullmatch(target)
    if match is None:
        return target, 0
    return match.group(1), int(match.group(2))


def parse_observed(text: str) -> ObservedPolicy:
    """Read the spec text after ``observed:`` (or the whole spec).

    Raises
    ------
    PolicyError
        naming the entry that is not ``@TRIGGER VERB LABEL ...``.
    """
    body = text[len(OBSERVED_PREFIX) :] if text.startswith(OBSERVED_PREFIX) else text
    entries = []
    for i, raw in enumerate(p.strip() for p in body.split(";")):
        if not raw:
            continue
        words = raw.split()
        problem = _problem(words)
        if problem:
            raise PolicyError(
                f"observed policy entry {i + 1} ({raw!r})",
                problem,
                "an entry reads '@#TRIGGER evict #L1 #L2', '@#T clear #L=40' or "
                "'@#T summarize #L1 #L2 as #S=120'; prunecheck import writes them.",
            )
        verb = Verb(words[1])
        targets = [w for w in words[2:] if w != "as"]
        entries.append(ObservedEntry(words[0][1:], verb, tuple(targets)))
    return ObservedPolicy(tuple(entries))


def _problem(words: list[str]) -> str:
    if len(words) < 3 or not words[0].startswith("@") or not _LABEL.fullmatch(words[0][1:]):
        return "does not start with @ and a #label, followed by a verb and labels."
    if words[1] not in {v.value for v in Verb}:
        return f"has the verb {words[1]!r}; the verbs are evict, clear and summarize."
    rest = words[2:]
    if words[1] == Verb.SUMMARIZE:
        if len(rest) < 3 or rest[-2] != "as" or not _SIZED.fullmatch(rest[-1]):
            return "is a summary without 'as #S=N' at its end."
        rest = rest[:-2]
    for word in rest:
        pattern = _SIZED if words[1] == Verb.CLEAR else _LABEL
        if not (pattern.fullmatch(word) or _LABEL.fullmatch(word)):
            return f"names {word!r}, which is not a #label."
    return ""

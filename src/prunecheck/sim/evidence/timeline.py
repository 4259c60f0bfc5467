"""The timeline picture of a trace: one lane per message, steps left to
right, each cell coloured by what the message was after that step
(closed, open / streaming, in a unit with a pending call, cleared,
orphaned), a cross where it left the context (evicted, summarized, spilled,
dropped) and a red band at each step with a violation.  Steps are labelled
1, 2, … as in the narrative.

matplotlib with the Agg backend, through its object API (no pyplot global
state), imported only when a timeline is drawn; the PNG carries no date or
version, so a trace always gives the same bytes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from prunecheck.model.actions import Action
from prunecheck.model.context import Message, Role
from prunecheck.model.events import Event, IssueBatch, ResultChunk, ToolFailure
from prunecheck.model.model_system import ModelSystem
from prunecheck.model.notes import NoteKind
from prunecheck.model.policies import ContextView, Policy
from prunecheck.model.state import RuntimeState
from prunecheck.model.system import System, replay
from prunecheck.model.trace import Trace
from prunecheck.sim.support.outputs import make_folder, replacing

__all__ = ["Cell", "Lanes", "draw_timeline", "lanes_of"]


class Cell(StrEnum):
    """What one message was after one step."""

    CLOSED = "closed"
    OPEN = "open (streaming)"
    PENDING = "unit has a pending call"
    CLEARED = "cleared"
    ORPHAN = "orphaned / unanswered"


_COLOURS = {
    Cell.CLOSED: "#4c78a8",
    Cell.OPEN: "#f58518",
    Cell.PENDING: "#eeca3b",
    Cell.CLEARED: "#bab0ac",
    Cell.ORPHAN: "#e45756",
}
_GONE = {
    NoteKind.EVICT: "evicted",
    NoteKind.SUMMARIZE: "summarized",
    NoteKind.SPILL: "spilled",
    NoteKind.REPAIR: "dropped by repair",
}


@dataclass(slots=True)
class Lanes:
    """The picture's data: per message, its label and its cells by step."""

    labels: dict[str, str] = field(default_factory=dict)
    cells: dict[str, dict[int, Cell]] = field(default_factory=dict)
    gone: dict[str, tuple[int, str]] = field(default_factory=dict)
    ticks: list[str] = field(default_factory=list)
    violations: dict[int, list[str]] = field(default_factory=dict)


def _label(m: Message) -> str:
    if m.role is Role.ASSISTANT and m.tool_calls:
        return f"{m.id} calls {','.join(m.tool_calls)}"
    if m.role is Role.TOOL:
        return f"{m.id} result {m.call_id}"
    if m.is_summary:
        return f"{m.id} summary"
    return f"{m.id} {m.role.value}"


def _tick(event: Event) -> str:
    if isinstance(event, IssueBatch):
        return f"batch×{len(event.calls)}"
    if isinstance(event, ResultChunk):
        return f"{'result' if event.last else 'chunk'} {event.call}"
    if isinstance(event, ToolFailure):
        return f"fail {event.call}"
    names = {
        "system": "system",
        "user": "user",
        "assistant": "text",
        "check": "check",
        "invoke": "invoke",
        "retry": "retry",
        "write": "write",
        "session": "new session",
    }
    name = names.get(event.kind, event.kind)  # an event kind added later still draws
    if event.kind == "assistant" and not getattr(event, "last", True):
        name = "text chunk"
    return name


def _cell(m: Message, pending: bool, broken: bool) -> Cell:
    if broken:
        return Cell.ORPHAN
    if not m.closed:
        return Cell.OPEN
    if pending:
        return Cell.PENDING
    return Cell.CLEARED if m.cleared else Cell.CLOSED


def _state_cell(state: RuntimeState, m: Message) -> Cell:
    broken = m.id in state.orphans or any(c in state.unanswered for c in m.tool_calls)
    return _cell(m, bool(state.context.pending_in(m.unit_id)), broken)


@dataclass(slots=True)
class _Watch:
    """The policy, watched: what it was shown, so that a message appended and
    evicted within one step still gets its cell."""

    inner: Policy
    name: str
    seen: dict[str, tuple[Message, bool]] = field(default_factory=dict)

    def select(self, view: ContextView, need: int) -> Iterable[str | Action]:
        pending = view.pending_calls
        for m in view.messages:
            live = (m.call_id in pending) or any(c in pending for c in m.tool_calls)
            self.seen[m.id] = (m, live)
        return self.inner.select(view, need)


@dataclass(frozen=True, slots=True)
class _FreesNothing:
    name: str

    def select(self, view: ContextView, need: int) -> Iterable[str | Action]:
        return ()


def lanes_of(trace: Trace, system: System[Any]) -> Lanes:
    """Replay ``trace`` (with notes) and collect what the picture shows.

    The picture is the model's: the model runtime running the system's
    policy, watched; for any other system (a runtime under test) a policy
    that frees nothing, so that it shows every message produced, not the
    runtime's list."""
    lanes = Lanes()
    policy = system.policy if isinstance(system, ModelSystem) else _FreesNothing(system.name)
    watch = _Watch(policy, system.name)
    present: set[str] = set()
    for item, state in replay(trace, ModelSystem(watch, system.name), record=True):
        step = item.index
        lanes.ticks.append(f"{step + 1}: {_tick(item.event)}")
        now = set()
        for m in state.context:
            now.add(m.id)
            lanes.labels.setdefault(m.id, _label(m))
            lanes.cells.setdefault(m.id, {})[step] = _state_cell(state, m)
        how: dict[str, str] = {}
        for note in item.result.notes:
            if note.kind in _GONE:
                how.update(dict.fromkeys(note.ids, _GONE[note.kind]))
        for mid, (m, live) in watch.seen.items():
            if mid not in now and mid not in present and mid not in lanes.labels:
                lanes.labels[mid] = _label(m)
                lanes.cells[mid] = {step: _cell(m, live, False)}
                present.add(mid)
        watch.seen.clear()
        for mid in present - now:
            lanes.gone[mid] = (step, how.get(mid, "dropped"))
        present = now
        bad = [i.kind.label for i in item.result.incidents if i.is_violation]
        if bad:
            lanes.violations[step] = list(dict.fromkeys(bad))
    return lanes


def draw_timeline(trace: Trace, system: System[Any], path: Path) -> Path:
    """Draw the timeline of ``trace`` to the PNG file ``path``; return it.

    Readable for about 10–40 steps and as many messages.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch, Rectangle

    lanes = lanes_of(trace, system)
    order = sorted(lanes.labels, key=lambda mid: int(mid[1:]))
    steps = len(lanes.ticks)
    fig = Figure(figsize=(max(7.5, 0.42 * steps + 5.8), max(3.2, 0.36 * len(order) + 2.4)), dpi=110)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    for step in lanes.violations:
        ax.axvspan(step - 0.5, step + 0.5, color="#e45756", alpha=0.12, zorder=0)
        ax.plot([step], [-0.75], marker="v", markersize=7, color="#b22222", zorder=3)
    for row, mid in enumerate(order):
        for step, cell in lanes.cells[mid].items():
            ax.add_patch(
                Rectangle(
                    (step - 0.45, row - 0.35),
                    0.9,
                    0.7,
                    facecolor=_COLOURS[cell],
                    edgecolor="white",
                    zorder=2,
                    hatch="///" if cell is Cell.OPEN else None,
                )
            )
        if mid in lanes.gone:
            step, how = lanes.gone[mid]
            ax.plot([step], [row], marker="X", markersize=11, color="#b22222", zorder=3)
            ax.text(step + 0.3, row, how, va="center", fontsize=7, color="#b22222", zorder=3)
    ax.set_xlim(-0.6, steps - 0.4 + 1.2)
    ax.set_ylim(len(order) - 0.4, -1.1)
    ax.set_yticks(range(len(order)), [lanes.labels[m] for m in order], fontsize=8)
    ax.set_xticks(range(steps), lanes.ticks, rotation=55, ha="right", fontsize=7)
    ax.grid(axis="x", color="#dddddd", zorder=1)
    ax.set_axisbelow(True)
    legend = [
        Patch(facecolor=c, label=k.value, hatch="///" if k is Cell.OPEN else None)
        for k, c in _COLOURS.items()
    ]
    legend.append(Patch(facecolor="#e45756", alpha=0.2, label="step with a violation"))
    ax.legend(
        handles=legend,
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        fontsize=7,
        frameon=False,
        title="✕ = left the context",
        title_fontsize=7,
    )
    listed = [f"step {step + 1}: {', '.join(kinds)}" for step, kinds in lanes.violations.items()]
    if len(listed) > 14:
        listed = [*listed[:13], f"… and {len(listed) - 13} more steps"]
    ax.text(
        1.02,
        0.42,
        "▼ violations\n" + ("\n".join(listed) or "none"),
        transform=ax.transAxes,
        va="top",
        ha="left",
        fontsize=7,
        color="#b22222",
    )
    cfg = trace.config
    ax.set_title(
        f"{trace.policy} · gate {cfg.gate} · checks {cfg.check_at} · budget {cfg.budget}",
        fontsize=9,
        loc="left",
    )
    fig.tight_layout()
    make_folder(path.parent, private=True)
    with replacing(path, private=True) as tmp:  # a bundle's: its owner's only
        fig.savefig(tmp, format="png", metadata={"Software": None})
    return path

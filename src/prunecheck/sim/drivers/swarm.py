"""Swarm shapes and openings: each generated run draws its own bounds
(Groce et al., "Swarm Testing", ISSTA 2012) and opens as a real session does.

A :class:`~.shape.Shape` is the widest a driver may go.  One run of the
search or of the random walk narrows it (:func:`narrow`): its own batch
width, number of turns, chunks per stream, batches, whether it resumes
from a persisted history (and whether that history was cut off by a crash),
and how much time may pass between two events: no gaps at all, or gaps of
up to one of the shape's ``time_steps`` (half a minute, five minutes, half
an hour) — the run's ``time_steps`` are cut to the widest it may use
(:func:`max_gap` reads it), so a shrinking run tends to no gaps.
Most draws are small, so that shrinking stays short, but every bound of the
shape is reached by some runs: batches of 8 calls, sessions of a dozen
turns, contexts of 60 and more messages, single outputs larger than the
budget.

Every generated history opens as a real one does (:func:`opening`): the
system prompt, then the user's first message — or a persisted history
(:func:`persisted_history`): a session of earlier turns, each a user message,
a batch whose results all came back and the assistant's answer, loaded
before the run goes on.  A history cut off by a crash ends with a batch
whose calls were issued and never answered: they stay pending, and the
resumed runtime may answer them, time them out or carry on around them.

Examples
--------
>>> shape = Shape.for_budget(1000, max_resume=2)
>>> [e.kind for e in opening(shape)]
['system', 'user']
>>> [e.kind for e in persisted_history(shape, rounds=1, crashed=True)]
['system', 'user', 'batch', 'result', 'assistant', 'user', 'batch']
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace

from prunecheck.model.events import (
    AssistantChunk,
    CallSpec,
    Event,
    IssueBatch,
    ResultChunk,
    SystemPrompt,
    UserMessage,
)
from prunecheck.sim.drivers.shape import Shape, Usage, user_text

__all__ = [
    "DrawInt",
    "max_gap",
    "narrow",
    "opening",
    "opening_usage",
    "persisted_history",
    "random_draw",
]

#: ``draw(low, high)``: an integer in [low, high], small ones likelier (the
#: search passes a Hypothesis draw, the random walk :func:`random_draw`).
DrawInt = Callable[[int, int], int]


def random_draw(rng: random.Random) -> DrawInt:
    """Integers skewed toward ``low``: half the time ``low`` or one more,
    else uniform over the range (so the top of every bound is reached)."""

    def draw(low: int, high: int) -> int:
        if high <= low:
            return low
        if rng.random() < 0.5:
            return min(high, low + rng.randrange(2))
        return rng.randint(low, high)

    return draw


def narrow(shape: Shape, draw: DrawInt) -> Shape:
    """One run's own bounds within ``shape`` (the shape itself unless it
    has ``swarm`` set).  The resume and crash draws are in the result's
    ``max_resume`` (rounds to resume, 0 for a fresh session) and ``crashed``;
    the time draw in its ``time_steps``, cut to the widest gap the run may
    draw (empty: no gaps; drawn last, so that the draws before it are those
    of a shape without time)."""
    if not shape.swarm:
        return replace(shape, max_resume=0, crashed=False)
    resume = draw(0, shape.max_resume) if shape.max_resume else 0
    steps = shape.time_steps
    narrowed = replace(
        shape,
        max_calls=draw(1, shape.max_calls),
        max_batches=draw(1, shape.max_batches),
        max_users=draw(1, shape.max_users),
        max_chunks=draw(1, shape.max_chunks),
        max_texts=draw(0, shape.max_texts),
        max_resume=resume,
        crashed=bool(resume) and draw(0, 1) == 1,
        swarm=False,
    )
    return replace(narrowed, time_steps=steps[: draw(0, len(steps))]) if steps else narrowed


def max_gap(shape: Shape) -> int:
    """The widest gap (seconds) a run of ``shape`` may let pass between two
    events, besides the second each takes: its largest time step (0: none).

    >>> max_gap(Shape(time_steps=(30, 300))), max_gap(Shape())
    (300, 0)
    """
    return shape.time_steps[-1] if shape.time_steps else 0


def opening(shape: Shape) -> tuple[Event, ...]:
    """How a fresh session opens: the system prompt, then the user's first
    message (the smallest user size of the shape)."""
    return (
        SystemPrompt(shape.system_tokens, "You are a coding agent."),
        UserMessage(min(shape.user_sizes), user_text(1)),
    )


def persisted_history(shape: Shape, rounds: int, crashed: bool) -> tuple[Event, ...]:
    """A session resumed from a persisted history of ``rounds`` earlier turns
    (smallest sizes; batches of one or two calls), then the user's next
    message; ``crashed``: the history ends with a batch issued just before a
    crash, its calls never answered (they stay pending)."""
    events: list[Event] = list(opening(shape))
    small_batch, small_result = min(shape.batch_sizes), min(shape.result_sizes)
    small_text = min(shape.text_sizes)
    call = 1
    for turn in range(1, rounds + 1):
        if turn > 1:
            events.append(UserMessage(min(shape.user_sizes), user_text(turn)))
        calls = _calls(shape.calls, turn)
        events.append(IssueBatch(calls, small_batch))
        events.extend(ResultChunk(f"c{call + k}", small_result) for k in range(len(calls)))
        call += len(calls)
        events.append(AssistantChunk(small_text))
    if rounds:
        events.append(UserMessage(min(shape.user_sizes), user_text(rounds + 1)))
    if crashed:
        events.append(IssueBatch(_calls(shape.calls, rounds + 1), small_batch))
    return tuple(events)


def _calls(specs: tuple[CallSpec, ...], turn: int) -> tuple[CallSpec, ...]:
    """One or two calls of the shape's specs, varying by turn (reads first)."""
    reads = [c for c in specs if not c.background] or list(specs)
    first = reads[turn % len(reads)]
    return (first,) if turn % 2 else (first, reads[(turn + 1) % len(reads)])


def opening_usage() -> Usage:
    """What an opening uses of a run's bounds: its first user message only
    (a persisted history's turns are not the run's)."""
    return Usage(users=1)

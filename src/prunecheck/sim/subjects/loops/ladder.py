"""The ladder a search climbs until the user's code changes the history.

A trimmer with a budget of 8,000 tokens never fires on tool outputs of 45
characters.  When a scenario class's search of an agent that trims ends
with the user's code never having removed or rewritten anything
(:class:`.reach.Watch`), the search is run again on the next rung: wider
parallel batches (8, then 16 calls), larger tool outputs (thousands, then
tens of thousands of characters) and longer schedules (32, then 48 steps,
more for a budget counted in messages).  With a budget read from the
configuration (:func:`.reach.budget_of`), the outputs are sized to it.

A trimmer that keeps the newest messages that fit its budget cuts between a
call and its result only when the kept suffix (the result and what follows
it) fits while the call's message added does not: a window as wide as the
call's message, a few hundred characters.  Outputs of an eighth, a third or
the whole budget land in it by chance at best; so every rung also holds
outputs just under the budget at a spread of fine offsets
(:data:`_NEAR_STEP` tokens apart, :data:`_NEAR` of them), one of which
leaves, for any remainder of up to their span, a result that fits and a
call that does not.  A threshold on one tool output (a tool-output hook's:
:attr:`.reach.Budget.per_output`) fires only on an output longer than it,
so its rungs hold outputs just under it, just over it and twice it (then
four times).  The sizes are a function of the budget alone: the same seed
draws the same schedules.
"""

from __future__ import annotations

from dataclasses import dataclass

from .reach import CHARS_PER_TOKEN, Budget
from .scenarios import LoopShape

__all__ = ["Rung", "ladder", "near", "over"]


@dataclass(frozen=True, slots=True)
class Rung:
    """One step of the ladder: the shape a search grows to, and its steps."""

    shape: LoopShape
    steps: int

    def text(self) -> str:
        most = max(self.shape.sizes, default=0) * CHARS_PER_TOKEN
        return (
            f"batches of up to {self.shape.width} calls, tool outputs up to {most:,} "
            f"characters, {self.steps} steps"
        )


#: Token sizes of the tool outputs of each rung when no budget is known:
#: thousands, then tens of thousands of characters.
_SIZES: tuple[tuple[int, ...], ...] = ((500, 2_000, 5_000), (1_000, 4_000, 10_000))


#: Outputs just under a known budget, each :data:`_NEAR_STEP` tokens
#: (:data:`~.reach.CHARS_PER_TOKEN` characters each) shorter than the previous:
#: the spread of offsets covers remainders up to 32 × 12 tokens (1,536
#: characters) at a step narrower than a call's message.
_NEAR = 32
_NEAR_STEP = 12

#: Steps of a schedule at most on the ladder (a budget of many messages).
_MAX_STEPS = 96

#: Tokens of one tool output at most (100,000 characters): a budget larger
#: than that is grown to as if unknown.
_LARGEST = 25_000


def ladder(budget: Budget | None) -> tuple[Rung, ...]:
    """The shapes a search grows through until the user's code changes the
    history: wider batches (8, then 16 calls), larger outputs, longer
    schedules (32, then 48 steps).  With a budget in tokens or characters,
    the outputs are sized to it: one output an eighth, a third or the whole
    of it (a few of them go past it), and outputs just under it at fine
    offsets (:func:`near`); a threshold on one output, about it and past
    it (:func:`over`)."""
    sizes = _SIZES
    if budget is not None and budget.per_output and 0 < budget.tokens <= _LARGEST:
        sizes = (over(budget.tokens), tuple(min(_LARGEST, s) for s in over(2 * budget.tokens)))
    elif budget is not None and 0 < budget.tokens <= _LARGEST:
        b = budget.tokens
        aimed = (max(16, b // 8), max(32, b // 3), max(64, b))
        sizes = (aimed + near(b), tuple(min(_LARGEST, 2 * s) for s in aimed) + near(b))
    widths, steps = (8, 16), (32, 48)
    if budget is not None and budget.counts:  # messages, outputs: short outputs, long schedules
        sizes = ((50, 200, 500), (50, 200, 500))
        steps = (max(32, min(_MAX_STEPS, budget.amount + 8)),
                 max(48, min(_MAX_STEPS, 2 * budget.amount + 8)))  # fmt: skip
    return tuple(
        Rung(LoopShape(width=w, sizes=s), n) for w, s, n in zip(widths, sizes, steps, strict=True)
    )


def over(tokens: int) -> tuple[int, ...]:
    """Output sizes about a threshold of ``tokens`` on one output: a third of
    it, just under it, just over it (by a thirty-second, at least a token:
    :data:`~.reach.CHARS_PER_TOKEN` characters past a threshold in characters
    that ``tokens`` rounds down) and twice it."""
    return (max(16, tokens // 3), max(16, tokens - 1), tokens + max(1, tokens // 32), 2 * tokens)


def near(tokens: int) -> tuple[int, ...]:
    """Output sizes just under a budget of ``tokens``: ``tokens - k × step``
    for k = 1 … :data:`_NEAR`, the step :data:`_NEAR_STEP` tokens (less for a
    small budget: the offsets span at most a quarter of it); none under 16."""
    step = max(1, min(_NEAR_STEP, tokens // (4 * _NEAR)))
    return tuple(s for k in range(1, _NEAR + 1) if (s := tokens - k * step) >= 16)

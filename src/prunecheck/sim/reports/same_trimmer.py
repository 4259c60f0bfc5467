"""The same trimmer in two reports, and why their verdicts differ.

A verdict holds for the runtime it names.  ``reports/frameworks.md`` checks a
framework's trimmer *alone*: prunecheck's model runtime calls it at a check
placement and sends what it returns, so a cut it makes is the request.
``reports/loops.md`` checks an agent *inside its framework's own loop*: the
framework calls the trimmer at its own hook and may change what it returned
before a request leaves (pydantic-ai repairs the history its processors
return).  The same trimmer can then be UNSAFE alone and safe in the loop.
Where the two pages differ, each names the other and says why
(:data:`SAME_TRIMMER`); ``tests/test_same_trimmer.py`` holds the table to
the committed pages (both rows exist, the verdicts do differ, the two
trimmers are the same code).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SAME_TRIMMER", "SameTrimmer", "for_loop", "for_policy"]


@dataclass(frozen=True, slots=True)
class SameTrimmer:
    """One trimmer shown in both reports with different verdicts.

    Attributes
    ----------
    policy : str
        Its spec in ``reports/frameworks.md`` (checked alone).
    loop : str
        The agent of ``reports/loops.md`` that runs it at its framework's hook.
    alone : str
        The verdict alone, as ``reports/frameworks.md`` gives it.
    in_loop : str
        The verdict of the trimming class in the loop, as ``reports/loops.md`` gives it.
    why : str
        What the framework's loop does that the model runtime does not.
    """

    policy: str
    loop: str
    alone: str
    in_loop: str
    why: str


SAME_TRIMMER: tuple[SameTrimmer, ...] = (
    SameTrimmer(
        policy="pydantic-ai:processor=examples/frameworks/pydantic_ai_history.py:"
        "keep_recent_messages",
        loop="loop:examples/loops/pydantic_ai_keep_last.py:agent",
        alone="UNSAFE",
        in_loop="safe",
        why="pydantic-ai repairs the history its processors return before every request, so "
        "the cut the processor makes alone (a tool return kept without its call) never "
        "reaches the provider inside pydantic-ai's own loop",
    ),
)


def for_policy(spec: str) -> SameTrimmer | None:
    """The entry of ``spec`` as ``reports/frameworks.md`` names it, or None."""
    return next((s for s in SAME_TRIMMER if s.policy == spec), None)


def for_loop(spec: str) -> SameTrimmer | None:
    """The entry of the agent ``spec`` as ``reports/loops.md`` names it, or None."""
    return next((s for s in SAME_TRIMMER if s.loop == spec), None)

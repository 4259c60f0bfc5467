"""The error types of prunecheck: one root, a few subclasses.

Every user-facing error names the bad input, the rule it broke and a hint,
so that the command line can print it as one paragraph and exit 2.
"""

from __future__ import annotations

from typing import Any, Self

__all__ = [
    "ConfigError",
    "PolicyError",
    "PolicyTimeout",
    "PrunecheckError",
    "TraceError",
    "TranscriptError",
]


class PrunecheckError(Exception):
    """Root of every error prunecheck raises on purpose.

    Parameters
    ----------
    subject:
        The bad input, named the way the user wrote it (a file, a policy spec,
        an argument, an event).
    rule:
        What that input must satisfy and does not.
    hint:
        What to do next.
    """

    def __init__(self, subject: str, rule: str, hint: str = "") -> None:
        self.subject = subject
        self.rule = rule
        self.hint = hint
        super().__init__(self.paragraph())

    def paragraph(self) -> str:
        """The error as one paragraph: subject, rule, hint."""
        text = f"{self.subject}: {self.rule}"
        if self.hint:
            text += f" Hint: {self.hint}"
        return text

    def __reduce__(self) -> tuple[Any, ...]:  # copy and pickle rebuild it from its fields
        return (type(self), (self.subject, self.rule, self.hint))


class TraceError(PrunecheckError):
    """A trace file or an event in it is malformed or impossible."""


class TranscriptError(PrunecheckError):
    """A provider transcript is not JSON or not a message list."""


class PolicyError(PrunecheckError):
    """A policy cannot be loaded, raised, timed out or returned something invalid.

    ``step`` is the 1-based step of the run at which the policy failed, or
    None when it failed outside a step (loading it, say); when given, the
    subject the user reads ends in "at step N".

    >>> err = PolicyError("policy 'mine'", "raised KeyError.")
    >>> err.step is None, err.at_step(4).subject
    (True, "policy 'mine' at step 4")
    >>> err.at_step(4).step, err.at_step(4).bare_subject
    (4, "policy 'mine'")
    """

    def __init__(self, subject: str, rule: str, hint: str = "", step: int | None = None) -> None:
        self.bare_subject = subject
        self.step = step
        super().__init__(subject if step is None else f"{subject} at step {step}", rule, hint)

    def at_step(self, step: int) -> Self:
        """The same error (same type, rule and hint), placed at ``step``."""
        return type(self)(self.bare_subject, self.rule, self.hint, step)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.bare_subject, self.rule, self.hint, self.step))


class PolicyTimeout(PolicyError):
    """A policy call did not return within its time limit.

    Its own type, so that callers (the search's tripwire) tell a hang from
    other failures by ``isinstance``, never by reading the message.
    """


class ConfigError(PrunecheckError):
    """A runtime configuration value or a command-line argument is invalid."""

"""The error types of prunecheck: one root, a few subclasses.

Every user-facing error names the bad input, the rule it broke and a hint,
so that the command line can print it as one paragraph and exit 2.
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "PolicyError",
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


class TraceError(PrunecheckError):
    """A trace file or an event in it is malformed or impossible."""


class TranscriptError(PrunecheckError):
    """A provider transcript is not JSON or not a message list."""


class PolicyError(PrunecheckError):
    """A policy cannot be loaded, raised, timed out or returned something invalid."""


class ConfigError(PrunecheckError):
    """A runtime configuration value or a command-line argument is invalid."""

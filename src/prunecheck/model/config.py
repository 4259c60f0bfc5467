"""The runtime's configuration: budget, hard ceiling, gate and knobs.

Every knob is an enum with a string value, so a configuration reads and
writes as plain JSON and a bad value is a :class:`ConfigError` naming it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from .errors import ConfigError
from .gates import Gate
from .provider import Provider

__all__ = [
    "DEFAULT_MAX_RETRIES",
    "CheckAt",
    "Repair",
    "RetryMode",
    "RuntimeConfig",
    "StreamLoss",
    "parse_knob",
]


class CheckAt(StrEnum):
    """When the runtime fires its budget check."""

    AFTER_APPEND = "after_append"
    AFTER_BATCH = "after_batch"
    BEFORE_INVOKE = "before_invoke"


class RetryMode(StrEnum):
    """What a retry after a rejection does with the implicated batch."""

    RERUN_BATCH = "rerun_batch"
    IDEMPOTENT = "idempotent"


class StreamLoss(StrEnum):
    """What a stream does when its message was evicted mid-stream."""

    REAPPEND = "reappend"
    DROP = "drop"
    ERROR = "error"


class Repair(StrEnum):
    """The repair layer run on the history before each invocation."""

    NONE = "none"
    DROP_ORPHANS = "drop_orphans"
    SYNTHESIZE = "synthesize"


#: Retries after a rejection before a runtime gives up (the simulator's
#: agents retried twice before this became a runtime knob).
DEFAULT_MAX_RETRIES = 2
_INTEGERS = ("budget", "hard_ceiling", "max_retries")

_KNOBS: dict[str, type[StrEnum]] = {
    "gate": Gate,
    "check_at": CheckAt,
    "retry": RetryMode,
    "on_stream_loss": StreamLoss,
    "repair": Repair,
    "provider": Provider,
}


@dataclass(frozen=True, slots=True)
class RuntimeConfig:
    """The runtime's rules: budget, gate and knobs."""

    budget: int = 32_000
    hard_ceiling: int = 40_000
    gate: Gate = Gate.NONE
    check_at: CheckAt = CheckAt.AFTER_APPEND
    retry: RetryMode = RetryMode.RERUN_BATCH
    on_stream_loss: StreamLoss = StreamLoss.REAPPEND
    repair: Repair = Repair.NONE
    provider: Provider = Provider.ANTHROPIC
    #: Retries after a rejected invocation before the runtime gives up: the
    #: next rejection ends the session (a ``session_abort``).
    max_retries: int = DEFAULT_MAX_RETRIES

    def __post_init__(self) -> None:
        if (
            isinstance(self.max_retries, bool)
            or not isinstance(self.max_retries, int)
            or self.max_retries < 0
        ):
            raise ConfigError(
                "max_retries",
                f"must be a non-negative integer, got {self.max_retries!r}.",
                "it counts retries after a rejected invocation, e.g. 2.",
            )
        if self.budget <= 0:
            raise ConfigError("budget", f"must be a positive token count, got {self.budget}.")
        if self.hard_ceiling < self.budget:
            raise ConfigError(
                "hard_ceiling",
                f"({self.hard_ceiling}) must be at least the budget ({self.budget}).",
                "the hard ceiling is where deferral must fail loudly; set it above the budget.",
            )

    def to_json(self) -> dict[str, Any]:
        """Every setting; ``max_retries`` only when it is not the default, so
        files written before it existed stay byte-identical."""
        data: dict[str, Any] = {
            "budget": self.budget,
            "hard_ceiling": self.hard_ceiling,
            **{name: getattr(self, name).value for name in _KNOBS},
        }
        if self.max_retries != DEFAULT_MAX_RETRIES:
            data["max_retries"] = self.max_retries
        return data

    @classmethod
    def from_json(cls, data: object, where: str = "config") -> RuntimeConfig:
        """Parse and validate; raises :class:`ConfigError` naming the field."""
        if not isinstance(data, dict):
            raise ConfigError(where, "must be a JSON object of runtime settings.")
        unknown = set(data) - {*_INTEGERS, *_KNOBS}
        if unknown:
            raise ConfigError(
                where,
                f"unknown setting(s) {sorted(unknown)}.",
                f"settings are budget, hard_ceiling, max_retries, {', '.join(_KNOBS)}.",
            )
        kwargs: dict[str, Any] = {}
        for name in _INTEGERS:  # max_retries may be missing (traces before it): default
            if name in data:
                value = data[name]
                if not isinstance(value, int) or isinstance(value, bool):
                    raise ConfigError(f"{where}.{name}", f"must be an integer, got {value!r}.")
                kwargs[name] = value
        for name in _KNOBS:
            if name in data:
                kwargs[name] = parse_knob(name, data[name], where)
        return cls(**kwargs)


def parse_knob(name: str, value: object, where: str = "config") -> Any:
    """One knob's enum value from its string; :class:`ConfigError` if unknown."""
    enum = _KNOBS[name]
    try:
        if not isinstance(value, str):
            raise ValueError(value)
        return enum(value)
    except ValueError:
        choices = ", ".join(m.value for m in enum)
        raise ConfigError(f"{where}.{name}", f"must be one of {choices}; got {value!r}.") from None

"""LangChain's ``trim_messages`` as a list policy: a real trimmer, checked as it is.

``langchain_core.messages.trim_messages`` trims a chat history to a token
budget by strategy (keep the ``last`` or the ``first`` messages), optionally
cutting so the kept history starts or ends on given message types and
keeping the system message.  It knows nothing of tool calls being in flight.
This module wraps it as an OpenAI-format list function: our rendered dicts
are converted with ``convert_to_messages``, trimmed, and mapped back by
identity to the very dicts given, so the adapter judges what it kept.

Settings (the text after ``langchain:`` in a spec, comma-separated ``k=v``):

* ``strategy``: ``last`` (default) or ``first``;
* ``start_on`` / ``end_on``: message types joined by ``+`` (``human``,
  ``ai``, ``tool``, ``system``), e.g. ``end_on=human+tool``;
* ``include_system``: ``true`` or ``false`` (default);
* ``counter``: ``tokens`` (default: our model's tokens per message, and
  ``max_tokens`` is what the runtime asks the context to fit) or ``len``
  (each message counts 1, and ``max`` messages are kept);
* ``max``: with ``counter=len``, the number of messages (default 6).

Needs the optional extra: ``pip install 'prunecheck[langchain]'``; runs
offline.  Example: ``prunecheck check "langchain:strategy=last,start_on=human"``.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from types import ModuleType
from typing import Any

from prunecheck.model.errors import PolicyError
from prunecheck.sim.subjects.frameworks.spec import format_value
from prunecheck.sim.subjects.frameworks.spec import parse_settings as _parse
from prunecheck.sim.subjects.lists import ListPolicy, list_policy

__all__ = ["MESSAGE_TYPES", "TrimSettings", "langchain_policy", "make_trimmer", "parse_settings"]

#: The message types ``start_on`` / ``end_on`` may name.
MESSAGE_TYPES = ("human", "ai", "tool", "system")


@dataclass(frozen=True, slots=True)
class TrimSettings:
    """How ``trim_messages`` is called (see the module notes)."""

    strategy: str = field(
        default="last",
        metadata={"choices": ("last", "first"), "help": "keep the last or the first messages"},
    )
    start_on: tuple[str, ...] = field(
        default=(),
        metadata={"choices": MESSAGE_TYPES, "help": "types the kept history may start on"},
    )
    end_on: tuple[str, ...] = field(
        default=(), metadata={"choices": MESSAGE_TYPES, "help": "types the kept history may end on"}
    )
    include_system: bool = field(default=False, metadata={"help": "always keep the system"})
    counter: str = field(
        default="tokens",
        metadata={"choices": ("tokens", "len"), "help": "count tokens (budget) or messages (max)"},
    )
    max: int = field(default=6, metadata={"min": 1, "help": "with counter=len: messages"})

    def spec(self) -> str:
        """The canonical spec: ``langchain:`` and the settings that differ
        from the defaults, in a fixed order."""
        default = TrimSettings()
        parts = [f"strategy={self.strategy}"]
        for f in fields(self):
            value, base = getattr(self, f.name), getattr(default, f.name)
            if f.name == "strategy" or value == base:
                continue
            if f.name == "max" and self.counter != "len":
                continue
            parts.append(f"{f.name}={format_value(value)}")
        return "langchain:" + ",".join(parts)


def parse_settings(text: str | Mapping[str, object]) -> TrimSettings:
    """Read ``k=v,k=v`` settings (or keywords, from Python) with the one
    adapter spec parser (:mod:`.frameworks.spec`); a :class:`PolicyError`
    names a bad one.

    >>> parse_settings("strategy=last,start_on=human,end_on=human+tool").spec()
    'langchain:strategy=last,start_on=human,end_on=human+tool'
    """
    settings = _parse(TrimSettings, "langchain", text)
    if settings.include_system and settings.strategy != "last":
        raise PolicyError(
            f"langchain settings {text!r}",
            "include_system=true works only with "
            "strategy=last (trim_messages raises ValueError otherwise).",
            "drop include_system or use strategy=last.",
        )
    return settings


def _langchain(subject: str) -> ModuleType:
    try:
        return importlib.import_module("langchain_core.messages")
    except ImportError:
        raise PolicyError(
            subject,
            "needs langchain-core, which is not installed.",
            "pip install 'prunecheck[langchain]' (it runs offline).",
        ) from None


def make_trimmer(settings: TrimSettings) -> Any:
    """An OpenAI-format list function that runs ``trim_messages`` with
    ``settings`` and returns the very dicts it kept."""
    lc = _langchain(settings.spec())

    def trim(
        messages: list[dict[str, Any]], max_tokens: int, token_counter: Any
    ) -> list[dict[str, Any]]:
        converted = lc.convert_to_messages(messages)
        origin = {id(c): m for c, m in zip(converted, messages, strict=True)}
        if settings.counter == "len":
            counter: Any = len
            limit = settings.max
        else:
            sizes = {id(c): int(token_counter(m)) for c, m in zip(converted, messages, strict=True)}

            def counter(batch: list[Any]) -> int:
                return sum(sizes.get(id(x), 0) for x in batch)

            limit = max_tokens
        kept = lc.trim_messages(
            converted,
            max_tokens=limit,
            token_counter=counter,
            strategy=settings.strategy,
            start_on=list(settings.start_on) or None,
            end_on=list(settings.end_on) or None,
            include_system=settings.include_system,
        )
        back = lc.convert_to_openai_messages
        return [origin[id(x)] if id(x) in origin else back(x) for x in kept]

    trim.__name__ = trim.__qualname__ = "trim_messages"
    return trim


def langchain_policy(text: str | Mapping[str, object]) -> ListPolicy:
    """The policy of ``langchain:<settings>``, named by its canonical spec.

    Raises
    ------
    PolicyError
        if a setting is malformed or langchain-core is not installed.
    """
    settings = parse_settings(text)
    return list_policy(make_trimmer(settings), "openai", name=settings.spec())

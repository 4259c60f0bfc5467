"""What every framework adapter needs: lazy imports, an event loop, user
objects named by a path, the system prompt set aside, and token limits.

Each adapter is an OpenAI-format list function
``trim(messages, max_tokens, token_counter) -> messages``: it converts the
rendered dicts (realistic content, see :mod:`..sized_content`) into its library's
message objects, runs the library's trimmer, and returns the very dicts of
what the library kept plus, for what the library wrote itself (a summary, a
shortened result), new dicts — read back by :mod:`..list_actions`.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
from collections.abc import Coroutine
from types import ModuleType
from typing import Any, TypeVar

from prunecheck.model.errors import PolicyError
from prunecheck.sim.subjects.policy_spec import split_reference
from prunecheck.sim.subjects.user_code import find_object

from .spec import BUDGET

__all__ = ["Msgs", "load_object", "need", "resolve_limit", "run_sync", "split_system"]

Msgs = list[dict[str, Any]]
T = TypeVar("T")


def need(module: str, extra: str, subject: str) -> ModuleType:
    """Import ``module`` of an optional extra, or a PolicyError saying how
    to install it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise PolicyError(
            subject,
            f"needs {module.split('.')[0]}, which is not installed ({exc}).",
            f"pip install 'prunecheck[{extra}]' (it runs offline).",
        ) from None


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a library's coroutine to completion (a fresh loop per call)."""
    return asyncio.run(coro)


def resolve_limit(limit: int, max_tokens: int) -> int:
    """A :data:`~.spec.Limit` setting at one budget check (at least 1)."""
    return max(1, max_tokens if limit == BUDGET else limit)


def split_system(messages: Msgs) -> tuple[Msgs, Msgs]:
    """The leading system prompt (frameworks hold it apart from the history
    they trim, and always send it) and the history."""
    at = 0
    while at < len(messages) and messages[at].get("role") == "system":
        at += 1
    return messages[:at], messages[at:]


def load_object(ref: str, subject: str) -> Any:
    """The object ``module:attr`` or ``path/file.py:attr`` names."""
    where, attr = split_reference(ref)
    if not where or not attr:
        raise PolicyError(
            subject,
            f"{ref!r} does not name an object as module:attr or file.py:attr.",
            "for example my_context.py:KeepLast.",
        )
    return find_object(where, attr, subject)

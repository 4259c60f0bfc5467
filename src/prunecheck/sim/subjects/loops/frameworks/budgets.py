"""Budgets the user's configuration states, and the frameworks' own token counters.

Read only where a framework's own trimmer states its budget in an
attribute (cheap, exact): LangChain's ``SummarizationMiddleware``
(``trigger``, or the older ``max_tokens_before_summary``) and
``ContextEditingMiddleware`` (a ``ClearToolUsesEdit``'s ``trigger``);
AutoGen's ``TokenLimitedChatCompletionContext`` (``token_limit``),
``BufferedChatCompletionContext`` (``buffer_size``) and
``HeadAndTailChatCompletionContext`` (``head_size + tail_size``); the
OpenAI Agents SDK's ``SessionSettings.limit``; a count of items the
Agents SDK's ``call_model_input_filter`` starts cutting at is found by
probing the filter with inputs of short items, and of items 40 times as
long (the same count both times: a count; else a size, not read):
:func:`probe_count`.  Any
other budget in the user's own function (a history processor's constant, a
closure) is not read: the search grows until the history changes instead
(:mod:`prunecheck.sim.subjects.loops.ladder`).  Each adapter's ``budget`` and
``count_tokens`` call these.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ..reach import Budget, attribute_budget

__all__ = [
    "PROBE_LIMIT",
    "autogen_budget",
    "autogen_tokens",
    "langchain_budget",
    "langchain_tokens",
    "openai_agents_budget",
    "openai_agents_limit",
    "probe_count",
]


def _clause(trigger: object) -> tuple[str, int] | None:
    """The first ("tokens" | "messages", N) of a ``SummarizationMiddleware`` trigger."""
    clauses: Iterable[object]
    if isinstance(trigger, tuple) and len(trigger) == 2:
        clauses = [trigger]
    elif isinstance(trigger, Mapping):
        clauses = list(trigger.items())
    elif isinstance(trigger, list):
        clauses = trigger
    else:
        return None
    for clause in clauses:
        if isinstance(clause, Mapping):
            found = _clause(clause)
        elif isinstance(clause, tuple) and len(clause) == 2:
            kind, value = clause
            ok = kind in ("tokens", "messages") and isinstance(value, int)
            found = (str(kind), int(value)) if ok else None
        else:
            found = None
        if found is not None:
            return found
    return None


def langchain_budget(middleware: Sequence[Any]) -> Budget | None:
    """The budget of the first LangChain middleware that states one."""
    for m in middleware:
        name = type(m).__name__
        if name == "SummarizationMiddleware":
            legacy = getattr(m, "max_tokens_before_summary", None)
            found = _clause(getattr(m, "trigger", None))
            if found is None and isinstance(legacy, int):
                found = ("tokens", legacy)
            if found is not None:
                return Budget(found[1], found[0], f"{name}(trigger=({found[0]!r}, {found[1]}))")
        if name == "ContextEditingMiddleware":
            for edit in getattr(m, "edits", ()) or ():
                trigger = getattr(edit, "trigger", None)
                if isinstance(trigger, int):
                    where = f"{name}'s {type(edit).__name__}(trigger={trigger})"
                    return Budget(trigger, "tokens", where)
    return None


def langchain_tokens(messages: list[Mapping[str, object]]) -> int:
    """LangChain's ``count_tokens_approximately`` of OpenAI chat messages."""
    from langchain_core.messages import convert_to_messages
    from langchain_core.messages.utils import count_tokens_approximately

    return int(count_tokens_approximately(convert_to_messages([dict(m) for m in messages])))


def autogen_budget(context: Any) -> Budget | None:
    """The budget of an AutoGen model context: one of AutoGen's own, else an
    attribute of the user's own context whose name says it is a budget
    (``self.max_chars = 16_000``: :func:`.reach.attribute_budget`)."""
    name = type(context).__name__
    if name == "TokenLimitedChatCompletionContext":
        limit = getattr(context, "_token_limit", None)
        if isinstance(limit, int):
            return Budget(limit, "tokens", f"{name}(token_limit={limit})")
    if name == "BufferedChatCompletionContext":
        size = getattr(context, "_buffer_size", None)
        if isinstance(size, int):
            return Budget(size, "messages", f"{name}(buffer_size={size})")
    if name == "HeadAndTailChatCompletionContext":
        head, tail = getattr(context, "_head_size", None), getattr(context, "_tail_size", None)
        if isinstance(head, int) and isinstance(tail, int):
            return Budget(head + tail, "messages", f"{name}(head_size={head}, tail_size={tail})")
    if type(context).__module__.startswith("autogen"):
        return None
    return attribute_budget(context)  # the user's own context: an attribute naming its budget


def autogen_tokens(messages: list[Mapping[str, object]]) -> int:
    """The double model client's ``count_tokens`` (what AutoGen's token-limited
    context asks): four characters of the rendered messages a token."""
    return len(json.dumps(list(messages))) // 4


def openai_agents_limit(config: Any, session: Any) -> tuple[int, str] | None:
    """The item limit the SDK applies when it reads the session, and what states it:
    ``RunConfig.session_settings.limit`` over the session's own
    ``session_settings.limit`` (``SQLiteSession(..., session_settings=SessionSettings(limit=10))``
    or a custom session's attribute), as the SDK resolves them; None: no limit."""
    for owner, where in ((config, "RunConfig"), (session, type(session).__name__)):
        limit = getattr(getattr(owner, "session_settings", None), "limit", None)
        if isinstance(limit, int) and not isinstance(limit, bool):
            return limit, f"{where}(session_settings=SessionSettings(limit={limit}))"
    return None


def openai_agents_budget(config: Any, agent: Any = None, session: Any = None) -> Budget | None:
    """The session's item limit (``RunConfig.session_settings.limit``, else the
    session's own ``session_settings.limit``): the session items sent, at most;
    else the count of items a ``call_model_input_filter`` starts cutting at,
    found by probing it (:func:`probe_count`)."""
    limit = openai_agents_limit(config, session)
    if limit is not None:
        return Budget(limit[0], "messages", limit[1])
    keep = getattr(config, "call_model_input_filter", None)
    if keep is None:
        return None

    def kept(text: str) -> Callable[[int], int | None]:
        def run(n: int) -> int | None:
            from agents.run import CallModelData, ModelInputData

            items: list[Any] = [{"role": "user", "content": text} for _ in range(n)]
            out = keep(CallModelData(ModelInputData(items, None), agent, None))
            if inspect.iscoroutine(out):  # an async filter: not probed (nor left unawaited)
                out.close()
                return None
            got = getattr(out, "input", None)
            return len(got) if isinstance(got, list) else None

        return run

    cut = probe_count(kept("x"))
    if cut is None or probe_count(kept("x" * 40)) != cut:
        return None  # it never cuts, or by size (characters, tokens), not by count
    where = f"call_model_input_filter, probed: it first cuts an input of {cut} short items"
    return Budget(cut - 1, "messages", where)


#: Items a probe tries at most (doubling from 1).
PROBE_LIMIT = 1024


def probe_count(kept: Callable[[int], int | None], limit: int = PROBE_LIMIT) -> int | None:
    """The smallest ``n`` (at most ``limit``) for which ``kept(n) < n``: the
    count a count-based trimmer starts cutting at (short items, so that a
    budget of characters or tokens does not fire); None if it never cuts,
    or answers something other than a count (an awaitable, an error)."""

    def cuts(n: int) -> bool | None:
        try:
            got = kept(n)
        except Exception:  # the user's function refused the probe: unknown
            return None
        return None if got is None else got < n

    n, last = 1, 0
    while n <= limit:
        verdict = cuts(n)
        if verdict is None:
            return None
        if verdict:
            break
        last, n = n, n * 2
    else:
        return None
    low, high = last + 1, n  # cuts at high, not at last
    while low < high:
        mid = (low + high) // 2
        verdict = cuts(mid)
        if verdict is None:
            return None
        low, high = (low, mid) if verdict else (mid + 1, high)
    return high

"""List-function adapters: check a user's ``trim(messages) -> messages`` as it is.

Real runtimes trim a provider message list, not our :class:`ContextView`.
:class:`ListPolicy` makes such a function a :class:`Policy`: at each budget
check it renders the context in the function's format (OpenAI Chat
Completions dicts or Anthropic Messages dicts), calls the function, and maps
what it kept back to message ids; the ids it did not keep are evicted.

How kept items map back to message ids
---------------------------------------
* **OpenAI**: one dict per message of the context (system included), so a
  returned dict *is* a message.
* **Anthropic**: the system prompt is the request's top-level ``system`` and
  is not passed (it is always kept).  Consecutive messages of one role merge
  into one provider message, as Anthropic requires, so one dict may carry
  blocks of several of our messages.  Blocks are what is mapped: a message
  is kept iff every block that carries its identity is returned — its
  ``tool_use`` blocks for an assistant message that issued calls (its text
  block may go), its ``tool_result`` block for a result, its text block
  otherwise.  Returning a message dict keeps all its blocks.
* A returned item is matched to an input item first by identity (the same
  object), then by equality (a copy).  Among equal items (two identical
  plain messages) the *later* one is assumed kept, as trimmers drop from the
  front.  Anything else is a verdict, not a crash: a :class:`PolicyError`
  naming the policy and the step says what the function did (returned an
  item that was not in its input, rewrote the message of a call, reordered
  messages, returned one twice, returned something that is not a list of
  dicts, or mutated the list it was given).

How the budget reaches a list function
--------------------------------------
The function is called with the message list only, unless its signature
names ``max_tokens`` or ``token_counter`` (or takes ``**kwargs``):
``max_tokens`` is the size the runtime wants the context to fit (tokens in
context minus the tokens it asks to free), ``token_counter`` counts our
model's tokens of a message dict, a block, or a list of them.

Spec forms (accepted wherever a policy spec is, e.g. in a trace):
``path/to/trim.py:trim@openai``, ``mypkg.trim:trim@anthropic`` and a
framework trimmer ``ADAPTER:key=value,...`` such as
``langchain:strategy=last,start_on=human`` or ``autogen:context=buffered``
(see :mod:`.frameworks`).

Summaries and edits
-------------------
A function may also put a summary or a placeholder where it removed
messages, and shorten or clear the content of a kept message (a tool
result, or the text of a message that issued calls, identified by its call
ids).  :mod:`.list_actions` reads these as ``Summarize`` and
(partial) ``Clear`` actions, judged like a built-in policy's; only an item
that stands in place of nothing removed, or that rewrites a call itself,
is refused.

Sizes
-----
Every rendered message carries text of its declared size, 4 characters per
token (:mod:`.sized_content`), so a function or library that counts
tokens itself sees the size prunecheck declares.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from prunecheck.model.actions import Action
from prunecheck.model.errors import PolicyError
from prunecheck.model.policies import ContextView
from prunecheck.model.provider import Provider
from prunecheck.sim.subjects.list_readback import check_not_mutated, read_result
from prunecheck.sim.subjects.list_render import TokenCounter, render_list
from prunecheck.sim.subjects.policy_spec import FORMATS

__all__ = ["ListFunction", "ListPolicy", "list_policy", "list_spec"]

ListFunction = Callable[..., Any]


@dataclass(frozen=True, slots=True)
class ListPolicy:
    """A ``trim(messages) -> messages`` function, wearing the Policy shape.

    Parameters
    ----------
    fn: the user's function.
    format: the message format it takes.
    name: how reports and errors name it (a spec, ideally).
    """

    fn: ListFunction
    format: Provider
    name: str
    _wants: frozenset[str] = field(default=frozenset(), repr=False, compare=False)

    def select(self, view: ContextView, need: int) -> list[str | Action]:
        rendered = render_list(view.messages, self.format)
        given = rendered.messages
        snapshot = copy.deepcopy(given)
        kwargs: dict[str, Any] = {}
        if "max_tokens" in self._wants:
            kwargs["max_tokens"] = max(0, view.used - need)
        if "token_counter" in self._wants:
            kwargs["token_counter"] = TokenCounter(rendered)
        result = self.fn(given, **kwargs)
        check_not_mutated(self, given, snapshot, rendered)
        return read_result(self, result, rendered, [m.id for m in view.messages])


def list_policy(
    fn: object, format: Provider | str = "openai", *, name: str | None = None
) -> ListPolicy:
    """``fn`` (a ``trim(messages) -> messages`` function) as a policy.

    Raises
    ------
    PolicyError
        if ``fn`` is not callable or ``format`` is unknown.
    """
    label = name or list_spec(fn, format)
    if not callable(fn):
        raise PolicyError(
            f"list function {label!r}",
            f"is a {type(fn).__name__}, not a function.",
            "pass a function trim(messages) -> messages.",
        )
    if str(format) not in FORMATS:
        raise PolicyError(
            f"list function {label!r}",
            f"format {format!r} is unknown.",
            f"use one of: {', '.join(FORMATS)}.",
        )
    return ListPolicy(fn, Provider(format), label, _keywords(fn))


def list_spec(fn: object, format: Provider | str) -> str:
    """The spec naming a list function: ``module:qualname@format``."""
    module = getattr(fn, "__module__", None) or "<unknown>"
    qualname = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    return f"{module}:{qualname or type(fn).__name__}@{Provider(format).value}"


def _keywords(fn: ListFunction) -> frozenset[str]:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return frozenset()
    names = {p.name for p in params if p.kind is not inspect.Parameter.POSITIONAL_ONLY}
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        names |= {"max_tokens", "token_counter"}
    return frozenset(names & {"max_tokens", "token_counter"})

"""Standalone reproductions: a script per unsafe framework row that imports
only that library (no prunecheck), builds the message list its trimmer saw
at the failing budget check, runs the trimmer with the same settings, and
prints what broke — an orphaned tool message, a call without its result, a
call dropped while its result was still coming, a message dropped while it
was still streaming.

The message list comes from the reproduction trace: the trace is replayed
with a recorder around the adapter, and the first recorded call whose
output breaks tool pairing (or drops a streaming message) is the one
written out.  Message texts are rebuilt in the script by the same filler
generator (its source is copied in), so the library counts the same tokens.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from prunecheck.model.actions import Action
from prunecheck.model.errors import PolicyError
from prunecheck.model.model_system import ModelSystem
from prunecheck.model.policies import ContextView, Policy
from prunecheck.model.system import replay
from prunecheck.model.trace import Trace
from prunecheck.sim.subjects import sized_content as content

from .repro_templates import SNIPPETS, pairing_problems

__all__ = ["Capture", "Recorder", "capture", "script"]


@dataclass(frozen=True, slots=True)
class Capture:
    """One call of a list function: what it got and what it returned.

    Attributes
    ----------
    messages: the OpenAI dicts it was given.
    keys: per dict, the id of the message it renders.
    heads: per dict, the message's short model text.
    max_tokens: the size the runtime asked the context to fit.
    open_ids: ids of messages still streaming.
    output: what it returned.
    problems: what its output broke (see :func:`pairing_problems`).
    tokens: per dict, the tokens prunecheck declares for it.
    """

    messages: list[dict[str, Any]]
    keys: list[str]
    heads: list[str]
    max_tokens: int
    open_ids: frozenset[str]
    output: list[dict[str, Any]]
    problems: list[str]
    tokens: list[int] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """Whether the input was a complete, valid history: nothing
        streaming and every call answered."""
        calls = {c["id"] for m in self.messages for c in m.get("tool_calls") or []}
        answered = {m.get("tool_call_id") for m in self.messages if m.get("role") == "tool"}
        return not self.open_ids and calls <= answered


@dataclass
class Recorder:
    """A list policy that records every call of its function."""

    inner: Any
    calls: list[Capture] = field(default_factory=list)

    @property
    def name(self) -> str:
        return str(self.inner.name)

    def select(self, view: ContextView, need: int) -> Iterable[str | Action]:
        from prunecheck.sim.subjects.list_render import render_list

        rendered = render_list(view.messages, "openai")
        given = rendered.messages
        max_tokens = max(0, view.used - need)
        kwargs: dict[str, Any] = {}
        if "max_tokens" in self.inner._wants:
            kwargs["max_tokens"] = max_tokens
        if "token_counter" in self.inner._wants:
            from prunecheck.sim.subjects.list_render import TokenCounter

            kwargs["token_counter"] = TokenCounter(rendered)
        keys = [owners[0] for owners in rendered.owners]
        heads = {m.id: m.text for m in view.messages}
        output = list(self.inner.fn(json.loads(json.dumps(given)), **kwargs))
        open_ids = frozenset(m.id for m in view.messages if not m.closed)
        open_at = [i for i, k in enumerate(keys) if k in open_ids]
        problems = pairing_problems(given, output, open_at)
        tokens = [rendered.tokens.get((i, 0), 0) for i in range(len(given))]
        self.calls.append(
            Capture(
                given,
                keys,
                [heads[k] for k in keys],
                max_tokens,
                open_ids,
                output,
                problems,
                tokens,
            )
        )
        result: Iterable[str | Action] = self.inner.select(view, need)
        return result


def capture(trace: Trace, policy: Policy) -> Capture | None:
    """The first call, replaying ``trace``, whose output breaks pairing or
    drops a streaming message (None if no call does)."""
    recorder = Recorder(policy)
    try:
        for _ in replay(trace, ModelSystem(recorder), record=False):
            if any(c.problems for c in recorder.calls):
                break
    except PolicyError:
        return None
    return next((c for c in recorder.calls if c.problems), None)


def _text_expr(key: str, text: str, head: str) -> str:
    if text == head or len(text) <= 120:
        return repr(text)
    if (
        head
        and text.startswith(head + " ")
        and text == head + " " + content._filler(key, len(text) - len(head) - 1)
    ):
        return f"{head!r} + ' ' + filler({key!r}, {len(text) - len(head) - 1})"
    if text == content._filler(key, len(text)):
        return f"filler({key!r}, {len(text)})"
    return repr(text)


def _message_source(message: dict[str, Any], key: str, head: str) -> str:
    parts = []
    for k, v in message.items():
        if k == "content" and isinstance(v, str):
            parts.append(f"{k!r}: {_text_expr(key, v, head)}")
        else:
            parts.append(f"{k!r}: {v!r}")
    return "    {" + ", ".join(parts) + "},  # " + key


def _filler_source() -> str:
    lines = [
        f"_WORDS = {content._WORDS!r}",
        f"_CODE = {content._CODE!r}",
        f"_CODE_SHARE = {content._CODE_SHARE!r}",
        f"_CORPUS_CHARS = {content._CORPUS_CHARS!r}",
        "_CACHE: list[str] = []",
        "",
    ]
    corpus = inspect.getsource(content._corpus).replace("@lru_cache(maxsize=1)\n", "")
    corpus = corpus.replace(
        "    rng = random.Random(20240601)",
        "    if _CACHE:\n        return _CACHE[0]\n    rng = random.Random(20240601)",
    )
    corpus = corpus.replace(
        '    return "".join(parts)', '    _CACHE.append("".join(parts))\n    return _CACHE[0]'
    )
    filler = inspect.getsource(content._filler).replace("def _filler", "def filler")
    return "\n".join(lines) + "\n" + corpus + "\n\n" + filler


def script(
    adapter: str,
    spec: str,
    settings: object,
    library: str,
    version: str,
    found: Capture,
    placement: str,
) -> str:
    """The standalone script reproducing ``found``."""
    snippet = SNIPPETS[adapter](settings, found.max_tokens)
    messages = "\n".join(
        _message_source(m, k, h)
        for m, k, h in zip(found.messages, found.keys, found.heads, strict=True)
    )
    open_at = [i for i, k in enumerate(found.keys) if k in found.open_ids]
    verdict = (
        "the input is a complete, valid history (nothing streaming, every call "
        "answered): the trimmer itself breaks it"
        if found.complete
        else "the input is what the runtime holds mid-turn (a call still pending or a "
        "message still streaming): safe only if the runtime never trims here"
    )
    checker = inspect.getsource(pairing_problems)
    return f'''"""Reproduction: {library} {version} — `{spec}` (checked at {placement}).

Generated by prunecheck from the shrunk reproduction trace; it imports only
{library}.  Run: python {{this file}}.  Exit status 1 = the broken result is
reproduced.  Verdict: {verdict}.

Expected problems:
{chr(10).join("  - " + p for p in found.problems)}
"""

from __future__ import annotations

import json
import random
import sys
import zlib
from typing import Any

{_filler_source()}


MAX_TOKENS = {found.max_tokens}  # what the agent asks the history to fit at this check
TOKENS = {found.tokens!r}  # the size of each message below, in tokens
STREAMING = {open_at!r}  # positions of messages still streaming
messages: list[dict[str, Any]] = [
{messages}
]


{checker}

{snippet}

print("input:", len(messages), "messages;", "output:", len(result), "messages")
for m in result:
    calls = [c["id"] for c in m.get("tool_calls") or []]
    print(f"  {{m['role']:<9}} {{len(m.get('content') or ''):>6}} chars",
          f"calls {{calls}}" if calls else "", m.get("tool_call_id") or "")
found = pairing_problems(messages, result, STREAMING)
for problem in found:
    print("BROKEN:", problem)
sys.exit(1 if found else 0)
'''

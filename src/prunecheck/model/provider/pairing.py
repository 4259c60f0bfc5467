"""The provider's tool pairing errors of our model's context, read straight
from its messages.

:func:`pairing_errors` answers what ``validate(render(messages, provider),
provider)`` answers — the same errors, paths, ids and texts — without
building the request body (for Anthropic, OpenAI and DeepSeek; for the
other providers it builds the body and checks it): the runtime asks it at
every invocation whose history it knows is broken, which a policy that
splits units makes most of them.  ``render`` then ``validate`` stay the
specification (a property test holds the two equal); this is the index
that runs.  Pure: no I/O, no clock;
O(number of messages + calls).
"""

from __future__ import annotations

from collections.abc import Iterable

from prunecheck.model.context import Message, Role
from prunecheck.model.provider.openai_responses import reasoning_record
from prunecheck.model.provider.request_body import render
from prunecheck.model.provider.rule import ProviderError
from prunecheck.model.provider.rules import error_of, validate
from prunecheck.model.provider.vocabulary import CALL_WITHOUT_RESULT, RESULT_WITHOUT_CALL, Provider

__all__ = ["pairing_errors"]


def pairing_errors(messages: Iterable[Message], provider: Provider) -> list[ProviderError]:
    """Every tool pairing error the provider finds in the request a runtime
    sends for ``messages``, in message order (``errors[0]`` is its answer).

    Parameters
    ----------
    messages:
        The context, in order.
    provider:
        Whose request format and rules.

    Returns
    -------
    list[ProviderError]
        ``validate(render(messages, provider), provider)`` (for OpenAI
        Responses with ``stored=reasoning_record(messages)``: the server
        knows which reasoning item each output item followed).

    Raises
    ------
    ValueError
        if a tool message answers no call (as :func:`~.request_body.render` does).

    Examples
    --------
    >>> ctx = [Message("m1", Role.USER, 5, 1, 0.0),
    ...        Message("m3", Role.TOOL, 5, 1, 1.0, call_id="c1")]
    >>> [e.text for e in pairing_errors(ctx, Provider.OPENAI)]  # doctest: +NORMALIZE_WHITESPACE
    ["Invalid parameter: messages with role 'tool' must be a response to a preceeding
      message with 'tool_calls'."]
    """
    provider = Provider(provider)
    messages = tuple(messages)
    if any(m.thought or m.after_thought for m in messages):  # reasoning: the spec path
        stored = reasoning_record(messages) if provider is Provider.OPENAI_RESPONSES else None
        return validate(render(messages, provider), provider, source="request", stored=stored)
    if provider is Provider.ANTHROPIC:
        return _anthropic(messages)
    if provider in (Provider.OPENAI, Provider.DEEPSEEK):
        return _openai(messages, provider)
    return validate(render(messages, provider), provider, source="request")


def _call_id(message: Message) -> str:
    if message.call_id is None:
        raise ValueError(f"tool message {message.id!r} answers no call (call_id is None)")
    return message.call_id


def _anthropic(messages: Iterable[Message]) -> list[ProviderError]:
    # The turns of the rendered body: consecutive messages of one role merge,
    # system messages leave for the top-level "system", and a merged user
    # turn keeps its tool_result blocks first, in the order they came.
    roles: list[bool] = []  # per turn: is it the assistant's
    uses: list[list[str]] = []  # per turn: tool_use ids, in order
    results: list[list[str]] = []  # per turn: tool_result ids (block k = position k)
    user, tool, system = Role.USER, Role.TOOL, Role.SYSTEM
    for m in messages:
        role = m.role
        if m.summary_of or role == user:
            if not roles or roles[-1]:
                roles.append(False)
                uses.append([])
                results.append([])
        elif role == system:
            continue
        elif role == tool:
            cid = _call_id(m)
            if not roles or roles[-1]:
                roles.append(False)
                uses.append([])
                results.append([cid])
            else:
                results[-1].append(cid)
        elif not roles or not roles[-1]:
            roles.append(True)
            uses.append(list(m.tool_calls))
            results.append([])
        else:
            uses[-1].extend(m.tool_calls)
    errors: list[ProviderError] = []
    count = len(roles)
    for i in range(count):
        mine = results[i]
        if mine:
            previous = set(uses[i - 1]) if i > 0 else set()
            for k, cid in enumerate(mine):
                if cid not in previous:
                    path = f"messages.{i}.content.{k}"
                    errors.append(error_of(Provider.ANTHROPIC, RESULT_WITHOUT_CALL, path, (cid,)))
        calls = uses[i]
        if calls:
            answered = set(results[i + 1]) if i + 1 < count else set()
            missing = tuple(dict.fromkeys(cid for cid in calls if cid not in answered))
            if missing:
                path = f"messages.{i}"
                errors.append(error_of(Provider.ANTHROPIC, CALL_WITHOUT_RESULT, path, missing))
    return errors


def _openai(messages: Iterable[Message], provider: Provider) -> list[ProviderError]:
    found: list[tuple[int, ProviderError]] = []
    batch_at, answered = -1, dict[str, bool]()  # the assistant whose tool messages may follow

    def close_batch() -> None:
        missing = tuple(cid for cid, done in answered.items() if not done)
        if missing:
            path = f"messages.{batch_at}"
            found.append((batch_at, error_of(provider, CALL_WITHOUT_RESULT, path, missing)))

    for i, m in enumerate(messages):
        if not m.summary_of and m.role == Role.TOOL:
            cid = _call_id(m)
            if cid in answered:
                answered[cid] = True
            else:
                error = error_of(provider, RESULT_WITHOUT_CALL, f"messages.{i}", (cid,))
                found.append((i, error))
            continue
        close_batch()
        calls = m.tool_calls if not m.summary_of and m.role == Role.ASSISTANT else ()
        batch_at, answered = i, dict.fromkeys(calls, False)
    close_batch()
    found.sort(key=lambda pair: pair[0])  # a batch's error is found only when it closes
    return [error for _, error in found]

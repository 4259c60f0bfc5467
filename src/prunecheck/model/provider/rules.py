"""Provider rules: check a request body the way each provider does.

A provider rejects a request (HTTP 400) whose history breaks its rules: a
result that answers no call, a call that no result answers, a reasoning
item without its item, a call turn in the wrong place.  A pruning policy
that cuts a unit in two produces exactly such a history.  :func:`validate`
checks a request body as the provider does and answers with the provider's
own error texts; each provider's check lives in its module beside its
rules.  Pure: no I/O, no clock; O(number of messages + blocks).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from prunecheck.model.errors import ConfigError
from prunecheck.model.provider import (
    anthropic_messages,
    bedrock_converse,
    deepseek,
    gemini,
    mistral,
    openai_chat,
    openai_responses,
)
from prunecheck.model.provider.registry import first_rule
from prunecheck.model.provider.rule import ProviderError
from prunecheck.model.provider.vocabulary import Provider

__all__ = [
    "CHECKED",
    "error_of",
    "implicated_calls",
    "not_written",
    "validate",
]

_VALIDATORS: dict[Provider, Callable[[object, str], list[ProviderError]]] = {
    Provider.ANTHROPIC: anthropic_messages.validate,
    Provider.OPENAI: openai_chat.validate,
    Provider.OPENAI_RESPONSES: openai_responses.validate,
    Provider.GEMINI: gemini.validate,
    Provider.BEDROCK: bedrock_converse.validate,
    Provider.MISTRAL: mistral.validate,
    Provider.DEEPSEEK: deepseek.validate,
}
#: The providers whose request bodies :func:`validate` checks (and
#: :func:`~.request_body.render` and :func:`~.pairing.pairing_errors`
#: produce): every one.
CHECKED = tuple(p for p in Provider if p in _VALIDATORS)


def error_of(provider: Provider, kind: str, path: str, ids: tuple[str, ...]) -> ProviderError:
    """The error ``provider`` answers for one pairing error of ``kind`` at
    ``path``: the text of its first rule of that kind (:mod:`.registry`)."""
    return first_rule(provider, kind).error(path, ids)


def not_written(provider: Provider, what: str) -> ConfigError:
    """The error for a provider whose ``what`` is not written."""
    return ConfigError(
        f"provider {provider.value}",
        f"has its rules and texts (prunecheck.model.provider.PROVIDERS) but no {what}.",
        f"Use one of {', '.join(p.value for p in CHECKED)}.",
    )


def validate(
    payload: object,
    provider: Provider,
    *,
    source: str = "transcript",
    stored: Mapping[str, str] | None = None,
) -> list[ProviderError]:
    """Every error a provider finds in a request, in request order.

    The provider stops at the first error: ``errors[0]`` is what the API
    answers; the others surface one by one as each is fixed.

    Anthropic: each ``tool_result`` block of a user message must answer a
    ``tool_use`` block of the immediately previous (assistant) message, and
    each ``tool_use`` block must be answered in the immediately next (user)
    message.  OpenAI Chat Completions (and DeepSeek): each ``tool`` message
    must answer a call of the nearest preceding assistant message with
    ``tool_calls``, with only tool messages in between, and every such call
    must be answered by the tool messages directly after it.  A call with
    nothing after it (the last message) counts as unanswered for both.
    OpenAI Responses, Gemini, Bedrock Converse and Mistral: see their
    modules (:mod:`.openai_responses`, :mod:`.gemini`,
    :mod:`.bedrock_converse`, :mod:`.mistral`).  O(messages + blocks).

    Parameters
    ----------
    payload:
        A request body (a dict with ``"messages"``, ``"input"`` for OpenAI
        Responses, ``"contents"`` for Gemini) or a bare list of its
        entries, as parsed from JSON.
    provider:
        Whose rules and texts to use.
    source:
        How to name the payload in a :class:`TranscriptError`.
    stored:
        OpenAI Responses only: the server's record of the reasoning item
        each output item followed (output item id -> reasoning item id;
        :func:`~.openai_responses.reasoning_record` for our model's
        history), which a body alone does not carry: with it, an item sent
        without its reasoning item is rejected as the server rejects it.

    Returns
    -------
    list[ProviderError]
        Empty when the provider would accept the request.

    Raises
    ------
    TranscriptError
        When the payload is not a transcript of that provider at all.

    Examples
    --------
    >>> body = {"messages": [
    ...     {"role": "user", "content": "hi"},
    ...     {"role": "user", "content": [
    ...         {"type": "tool_result", "tool_use_id": "toolu_1", "content": "42"}]},
    ... ]}
    >>> [e.text for e in validate(body, Provider.ANTHROPIC)]  # doctest: +NORMALIZE_WHITESPACE
    ['messages.1.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_1.
      Each `tool_result` block must have a corresponding `tool_use` block in the previous
      message.']
    >>> validate([{"role": "user", "content": "hi"}], Provider.OPENAI)
    []
    >>> validate({"contents": [{"role": "model", "parts": [
    ...     {"functionCall": {"name": "read_file", "args": {}}}]}]}, "gemini")[0].rule
    'gemini.call_out_of_place'
    """
    provider = Provider(provider)
    check = _VALIDATORS.get(provider)
    if check is None:
        raise not_written(provider, "request body validator")
    if provider is Provider.OPENAI_RESPONSES and stored:
        return openai_responses.validate(payload, source, stored)
    return check(payload, source)


def implicated_calls(errors: Iterable[ProviderError]) -> frozenset[str]:
    """The union of the call ids that the errors involve.

    >>> implicated_calls(validate([{"role": "tool", "tool_call_id": "c1", "content": ""}],
    ...                           Provider.OPENAI))
    frozenset({'c1'})
    """
    return frozenset(cid for error in errors for cid in error.ids)

"""Format conversion: our model's context as the request body a runtime
would send to a provider, so that a reproduction shows the rejection a user
sees.  Each provider's rendering lives in its module beside its rules.
Pure: no I/O, no clock; O(number of messages + calls).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from prunecheck.model.context import Message
from prunecheck.model.provider import (
    anthropic_messages,
    bedrock_converse,
    deepseek,
    gemini,
    mistral,
    openai_chat,
    openai_responses,
)
from prunecheck.model.provider._wording import Tools
from prunecheck.model.provider.vocabulary import Provider

__all__ = ["render"]

_RENDERERS: dict[Provider, Callable[[Iterable[Message], Tools, str | None], dict[str, object]]] = {
    Provider.ANTHROPIC: anthropic_messages.render,
    Provider.OPENAI: openai_chat.render,
    Provider.OPENAI_RESPONSES: openai_responses.render,
    Provider.GEMINI: gemini.render,
    Provider.BEDROCK: bedrock_converse.render,
    Provider.MISTRAL: mistral.render,
    Provider.DEEPSEEK: deepseek.render,
}

#: The APIs whose bodies carry the model's reasoning items: OpenAI Responses'
#: ``reasoning`` items, Anthropic's signed ``thinking`` blocks.
_REASONING = (Provider.OPENAI_RESPONSES, Provider.ANTHROPIC)


def render(
    messages: Iterable[Message],
    provider: Provider,
    *,
    tools: Mapping[str, tuple[str, str]] | None = None,
    model: str | None = None,
) -> dict[str, object]:
    """The request body a runtime would send for this context.

    Anthropic: system messages become the top-level ``"system"`` (omitted if
    none); an assistant message becomes a text block (if it has text) and one
    ``tool_use`` block per call; a tool message becomes a ``tool_result``
    block of a user message.  Messages of the same role that follow each
    other merge into one message, as Anthropic requires alternation: tool
    results, and a user message after them, join one user message, with the
    ``tool_result`` blocks first.  OpenAI: one message per message, tool
    messages carry ``tool_call_id``, ``function.arguments`` is a JSON string
    (DeepSeek and Mistral take the same body).  OpenAI Responses: ``input``
    items (messages, ``function_call``, ``function_call_output``).  Gemini:
    ``contents`` turns with ``functionCall`` / ``functionResponse`` parts.
    Bedrock Converse: ``toolUse`` / ``toolResult`` blocks and a
    ``toolConfig``.  A reasoning message (``thought``) is a ``reasoning``
    item for OpenAI Responses and a signed ``thinking`` block for
    Anthropic; the other bodies leave it out.  Cleared messages read
    ``"[cleared]"``; a summary is a user message ``"[summary of N
    messages] ..."``; an empty text reads ``"(<id>)"``.

    Parameters
    ----------
    messages:
        The context, in order.
    provider:
        Whose request format to produce.
    tools:
        Call id -> (tool name, argument path), the input of each call;
        unknown calls read ``read_file`` of ``"<call id>.txt"``.
    model:
        The model named in the body; each provider's default if None
        (``claude-sonnet-4-5`` / ``gpt-4.1`` for Anthropic / OpenAI).

    Returns
    -------
    dict
        The request body, JSON-serialisable.

    Examples
    --------
    >>> from prunecheck.model.context import Role
    >>> ctx = [Message("m1", Role.ASSISTANT, 5, 1, 0.0, tool_calls=("c1",)),
    ...        Message("m2", Role.TOOL, 5, 1, 1.0, call_id="c1", text="42"),
    ...        Message("m3", Role.USER, 5, 2, 2.0, text="thanks")]
    >>> render(ctx, Provider.ANTHROPIC, tools={"c1": ("read_file", "a.txt")})["messages"]
    ... # doctest: +NORMALIZE_WHITESPACE
    [{'role': 'assistant', 'content': [{'type': 'tool_use', 'id': 'c1', 'name': 'read_file',
       'input': {'path': 'a.txt'}}]},
     {'role': 'user', 'content': [{'type': 'tool_result', 'tool_use_id': 'c1', 'content': '42'},
       {'type': 'text', 'text': 'thanks'}]}]
    >>> from prunecheck.model.provider import validate
    >>> validate(render(ctx, Provider.OPENAI), Provider.OPENAI)
    []
    >>> [e.rule for e in validate(render(ctx, Provider.BEDROCK), Provider.BEDROCK)]
    ['bedrock.user_not_first', 'bedrock.user_after_result']
    """
    provider = Provider(provider)
    if provider not in _REASONING:  # reasoning items do not travel in these APIs' bodies
        messages = [m for m in messages if not m.thought]
    return _RENDERERS[provider](messages, tools or {}, model)

"""A request as an observability product logged it: the body its client sent.

Langfuse, MLflow and the OpenAI Agents SDK log a model call as the input
the client was given (a request body, or a bare list of chat messages),
what came back and the SDK's error string; :func:`request_of_body` reads
them with the provider readers of :mod:`.bodies`.

>>> r = request_of_body("c", 1.0, Source("log"), [{"role": "user", "content": "hi"}],
...                     error="Error code: 400 - {'error': {'message': 'bad'}}")
>>> r.format.value, r.rejection, r.status, r.reply
('openai-chat', 'bad', 400, None)
"""

from __future__ import annotations

from collections.abc import Mapping

from prunecheck.model.errors import TranscriptError
from prunecheck.sim.ingest.bodies import provider_message, read_body, read_reply
from prunecheck.sim.ingest.records import LogFormat, LoggedMessage, LoggedRequest, Source

__all__ = ["request_of_body"]


def request_of_body(
    conversation: str,
    at: float | None,
    source: Source,
    body: object,
    *,
    reply: object = None,
    error: str | None = None,
    ended: float | None = None,
) -> LoggedRequest:
    """The request a product logged as the body its client sent: a request
    body (OpenAI Chat Completions, Responses or Anthropic) or a bare list of
    chat messages; ``reply`` the response body, or the assistant message(s);
    ``error`` the SDK's error string of a failed call.

    Raises
    ------
    TranscriptError
        naming ``source`` if the body is not one a provider takes.
    """
    if isinstance(body, list):
        body = {"messages": body}
    if not isinstance(body, Mapping):
        raise TranscriptError(
            str(source),
            f"logs the model's input as a JSON {type(body).__name__}, not a request body "
            "or a list of messages.",
            "log the model calls with their input captured.",
        )
    fmt, provider, messages, blind = read_body(body, str(source))
    rejection, status = provider_message(error) if error else (None, None)
    replied = None if rejection is not None else _reply(reply, fmt)
    return LoggedRequest(
        conversation,
        at,
        source,
        provider,
        fmt,
        messages,
        replied,
        rejection,
        status if rejection is not None else None,
        body=dict(body) if "messages" in body and fmt is not LogFormat.OPENAI_RESPONSES else None,
        blind=blind,
        ended=ended,
    )


def _reply(reply: object, fmt: LogFormat) -> tuple[LoggedMessage, ...] | None:
    if reply is None:
        return None
    found = read_reply(reply, fmt)
    if found is not None:
        return found
    listed = reply if isinstance(reply, list) else [reply]
    messages = [{**m, "role": "assistant"} for m in listed if isinstance(m, Mapping)]
    if fmt is not LogFormat.OPENAI_CHAT or len(messages) != len(listed):
        return None
    try:  # the assistant message(s) alone, as Langfuse and the Agents SDK log them
        return read_body({"messages": messages}, "reply", fmt)[2]
    except TranscriptError:
        return None

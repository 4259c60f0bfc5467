"""DeepSeek's OpenAI-compatible Chat Completions: the OpenAI body, its own texts.

DeepSeek's API takes OpenAI's request body and checks the same tool
pairing, but answers in its own words (``"code": "invalid_request_error"``,
no ``param``).  The validator and the rendering are OpenAI's
(:mod:`.openai_chat`); only the texts differ.
"""

from __future__ import annotations

from collections.abc import Iterable

from prunecheck.model.context import Message
from prunecheck.model.provider import openai_chat
from prunecheck.model.provider._wording import Tools
from prunecheck.model.provider.rule import ProviderError, Rule
from prunecheck.model.provider.vocabulary import (
    CALL_WITHOUT_RESULT,
    RESULT_WITHOUT_CALL,
    Provider,
)

__all__ = ["CALL_UNANSWERED", "RESULT_ORPHANED", "RULES", "render", "validate"]

_P = Provider.DEEPSEEK

RESULT_ORPHANED = Rule(
    id="deepseek.result_without_call",
    provider=_P,
    kind=RESULT_WITHOUT_CALL,
    template=(
        "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'"
    ),
    location="messages.N",
    # Observed: https://github.com/FoundationAgents/OpenManus/issues/23
    source="https://github.com/FoundationAgents/OpenManus/issues/23",
)
CALL_UNANSWERED = Rule(
    id="deepseek.call_without_result",
    provider=_P,
    kind=CALL_WITHOUT_RESULT,
    template=(
        "An assistant message with 'tool_calls' must be followed by tool messages "
        "responding to each 'tool_call_id'. (insufficient tool messages following "
        "tool_calls message)"
    ),
    location="messages.N",
    # Observed: https://github.com/TurixAI/TuriX-CUA/issues/15
    source="https://github.com/TurixAI/TuriX-CUA/issues/15",
)

#: Every rule.
RULES = (RESULT_ORPHANED, CALL_UNANSWERED)
_MODEL = "deepseek-chat"


def validate(payload: object, source: str) -> list[ProviderError]:
    """OpenAI's pairing check (:func:`~.openai_chat.validate`), DeepSeek's texts."""
    return openai_chat.validate(payload, source, (RESULT_ORPHANED, CALL_UNANSWERED))


def render(messages: Iterable[Message], tools: Tools, model: str | None) -> dict[str, object]:
    """OpenAI's body (:func:`~.openai_chat.render`) for DeepSeek's model."""
    return openai_chat.render(messages, tools, model or _MODEL)

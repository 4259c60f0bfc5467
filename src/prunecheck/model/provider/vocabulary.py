"""Providers and the kinds of broken history they reject: the words the
rules, the rendering, the registry and the simulator's exposure keys share."""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "CALL_OUT_OF_PLACE",
    "CALL_WITHOUT_RESULT",
    "ITEM_WITHOUT_REASONING",
    "KIND_PHRASES",
    "REASONING_WITHOUT_ITEM",
    "REJECTION_KINDS",
    "RESULT_WITHOUT_CALL",
    "TOOLS_UNDECLARED",
    "USER_AFTER_RESULT",
    "USER_NOT_FIRST",
    "Provider",
]

#: ``ProviderError.kind`` of a tool result that answers no call.
RESULT_WITHOUT_CALL = "result_without_call"
#: ``ProviderError.kind`` of a tool call that no result answers (also a
#: batch answered in part).
CALL_WITHOUT_RESULT = "call_without_result"
#: A user message right after tool results, with no assistant turn between
#: (Mistral's role order; Bedrock's mixed turn).
USER_AFTER_RESULT = "user_after_result"
#: A tool call turn that follows neither a user turn nor a tool result turn
#: (Gemini), e.g. a history that starts with a call once its user turn is cut.
CALL_OUT_OF_PLACE = "call_out_of_place"
#: A reasoning item without the item that followed it (OpenAI Responses).
REASONING_WITHOUT_ITEM = "reasoning_without_item"
#: An item sent without the reasoning item that came before it (OpenAI
#: Responses): a dropped reasoning item.
ITEM_WITHOUT_REASONING = "item_without_reasoning"
#: Tool blocks in the history but no tool declared (Bedrock's ``toolConfig``).
TOOLS_UNDECLARED = "tools_undeclared"
#: A conversation that does not start with the user's message (Bedrock), e.g.
#: once a trimmer cut the opening request.
USER_NOT_FIRST = "user_not_first"
#: Every ``ProviderError.kind``, in the order reports list them.
REJECTION_KINDS = (
    RESULT_WITHOUT_CALL,
    CALL_WITHOUT_RESULT,
    USER_AFTER_RESULT,
    CALL_OUT_OF_PLACE,
    REASONING_WITHOUT_ITEM,
    ITEM_WITHOUT_REASONING,
    TOOLS_UNDECLARED,
    USER_NOT_FIRST,
)

#: How findings and narratives name each kind of broken history.
KIND_PHRASES = {
    RESULT_WITHOUT_CALL: "a result without its call",
    CALL_WITHOUT_RESULT: "a call without its result",
    USER_AFTER_RESULT: "a user message right after tool results",
    CALL_OUT_OF_PLACE: "a tool call turn out of place",
    REASONING_WITHOUT_ITEM: "a reasoning item without its following item",
    ITEM_WITHOUT_REASONING: "an item without its reasoning item",
    TOOLS_UNDECLARED: "tool blocks with no tool declared",
    USER_NOT_FIRST: "a conversation that does not start with the user",
}


class Provider(StrEnum):
    """An LLM API whose tool pairing rules we check.

    ``openai`` is OpenAI Chat Completions (and the OpenAI-compatible APIs
    that answer with its texts); ``openai-responses`` is OpenAI's Responses
    API; ``bedrock`` is AWS Bedrock's Converse API; ``deepseek`` is
    DeepSeek's OpenAI-compatible API (OpenAI's body, its own texts).
    """

    ANTHROPIC = "anthropic"
    OPENAI = "openai"
    OPENAI_RESPONSES = "openai-responses"
    GEMINI = "gemini"
    BEDROCK = "bedrock"
    MISTRAL = "mistral"
    DEEPSEEK = "deepseek"

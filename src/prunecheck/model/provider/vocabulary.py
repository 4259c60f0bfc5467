"""Providers and the kinds of tool pairing error they reject: the words the
rules, the rendering and the simulator's exposure keys share."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["CALL_WITHOUT_RESULT", "REJECTION_KINDS", "RESULT_WITHOUT_CALL", "Provider"]

#: ``ProviderError.kind`` of a tool result that answers no call.
RESULT_WITHOUT_CALL = "result_without_call"
#: ``ProviderError.kind`` of a tool call that no result answers.
CALL_WITHOUT_RESULT = "call_without_result"
#: Every ``ProviderError.kind``, in the order reports list them.
REJECTION_KINDS = (RESULT_WITHOUT_CALL, CALL_WITHOUT_RESULT)


class Provider(StrEnum):
    """An LLM API whose tool pairing rules we check."""

    ANTHROPIC = "anthropic"
    OPENAI = "openai"

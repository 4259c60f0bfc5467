"""Provider rules: what each LLM API rejects, as data, and the checks that read them.

A provider rejects a request (HTTP 400) whose history breaks its rules: a
result that answers no call, a call that no result answers, a reasoning
item without the item that followed it, a tool call turn in the wrong
place.  A pruning policy that cuts a unit in two produces exactly such a
history.  Each provider is one module holding its rules as data
(:mod:`.openai_chat`, :mod:`.openai_responses`, :mod:`.anthropic_messages`,
:mod:`.gemini`, :mod:`.bedrock_converse`, :mod:`.mistral`,
:mod:`.deepseek`): each :class:`Rule` with its id, the kind of broken
history it catches, its verbatim text, the request location it names and
where the text was documented or observed.  :data:`PROVIDERS` lists them;
:func:`recognize` finds any provider's text in a log line.

:func:`validate` checks a request body the way the provider does, with its
own texts (:mod:`.rules`); :func:`render` builds the body a runtime would
send for our model's context (:mod:`.request_body`); :mod:`.pairing` reads
the same errors straight from the context; :mod:`.from_body` reads a
Chat Completions body back as messages, to judge it by another provider.
:mod:`.vocabulary` names the providers and the kinds of error.

Pure: no I/O, no clock.  The checks are O(number of messages + blocks).
"""

from __future__ import annotations

from prunecheck.model.provider.from_body import as_provider, call_names, messages_of_body
from prunecheck.model.provider.pairing import pairing_errors
from prunecheck.model.provider.registry import (
    PROVIDERS,
    RULES,
    ProviderRules,
    first_rule,
    recognize,
    rule,
    rules_of,
)
from prunecheck.model.provider.request_body import render
from prunecheck.model.provider.rule import ProviderError, Rule
from prunecheck.model.provider.rules import CHECKED, implicated_calls, validate
from prunecheck.model.provider.vocabulary import (
    CALL_OUT_OF_PLACE,
    CALL_WITHOUT_RESULT,
    ITEM_WITHOUT_REASONING,
    KIND_PHRASES,
    REASONING_WITHOUT_ITEM,
    REJECTION_KINDS,
    RESULT_WITHOUT_CALL,
    TOOLS_UNDECLARED,
    USER_AFTER_RESULT,
    USER_NOT_FIRST,
    Provider,
)

__all__ = [
    "CALL_OUT_OF_PLACE",
    "CALL_WITHOUT_RESULT",
    "CHECKED",
    "ITEM_WITHOUT_REASONING",
    "KIND_PHRASES",
    "PROVIDERS",
    "REASONING_WITHOUT_ITEM",
    "REJECTION_KINDS",
    "RESULT_WITHOUT_CALL",
    "RULES",
    "TOOLS_UNDECLARED",
    "USER_AFTER_RESULT",
    "USER_NOT_FIRST",
    "Provider",
    "ProviderError",
    "ProviderRules",
    "Rule",
    "as_provider",
    "call_names",
    "first_rule",
    "implicated_calls",
    "messages_of_body",
    "pairing_errors",
    "recognize",
    "render",
    "rule",
    "rules_of",
    "validate",
]

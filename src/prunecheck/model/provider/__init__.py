"""Provider rules: the tool pairing that Anthropic and OpenAI enforce.

A provider rejects a request (HTTP 400) whose history breaks tool pairing: a
result that answers no call, or a call that no result answers.  A pruning
policy that cuts a unit in two produces exactly such a history.  This package
checks a request body the way the provider does, with the provider's own
error texts (:mod:`.rules`), and renders our model's context into the request
body that a runtime would send (:mod:`.request_body`), so that a reproduction
shows the rejection a user sees.  :mod:`.pairing` reads the same errors
straight from the context (what the runtime asks at an invocation), without
building the body.  :mod:`.vocabulary` names the providers and the kinds of
error.

Pure: no I/O, no clock.  Both checks are O(number of messages + blocks).
"""

from __future__ import annotations

from prunecheck.model.provider.request_body import render
from prunecheck.model.provider.rules import ProviderError, implicated_calls, validate
from prunecheck.model.provider.vocabulary import (
    CALL_WITHOUT_RESULT,
    REJECTION_KINDS,
    RESULT_WITHOUT_CALL,
    Provider,
)

__all__ = [
    "CALL_WITHOUT_RESULT",
    "REJECTION_KINDS",
    "RESULT_WITHOUT_CALL",
    "Provider",
    "ProviderError",
    "implicated_calls",
    "render",
    "validate",
]

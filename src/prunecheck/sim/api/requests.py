"""``validate_request``: what a provider would answer for a request.

The one function of the public Python API that needs no part of the
harness: it imports only :mod:`prunecheck.model.provider` and the shape
rules of :mod:`.strict`, so it runs in the base install (``pip install
prunecheck``, the commit guard alone), where a guard's user checks the
history the guard left (``docs/how-to/deploy-guard.md``).

Examples
--------
>>> validate_request([{"role": "tool", "tool_call_id": "c1", "content": "x"}], "openai")[0].kind
'result_without_call'
>>> validate_request([{"role": "user", "content": "hi"}], "openai")
()
"""

from __future__ import annotations

from prunecheck.model.provider import Provider, ProviderError, validate
from prunecheck.sim.api.strict import shape_errors

__all__ = ["validate_request"]


def validate_request(request: object, format: str) -> tuple[ProviderError, ...]:
    """The errors a provider would answer for a request (``prunecheck validate``).

    Parameters
    ----------
    request : object
        A request body (``{"messages": [...]}``, for Anthropic with an
        optional ``"system"``) or a bare message list, as decoded JSON.
    format : str
        ``"openai"`` or ``"anthropic"``: whose rules and error texts apply.

    Returns
    -------
    tuple[ProviderError, ...]
        The request-shape errors, then the tool pairing errors, in message
        order; empty if the provider would accept the request.  The provider
        answers only the first.

    Raises
    ------
    ValueError
        if ``format`` names no provider.
    """
    provider = Provider(format)
    return (*shape_errors(request, provider), *validate(request, provider, source="request"))

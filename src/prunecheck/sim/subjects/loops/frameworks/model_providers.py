"""The provider a user's model client sends to, read from the client's class.

A verdict names the provider whose rules reject a request: the one the
user's configured client talks to (LlamaIndex's ``Anthropic`` sends to
Anthropic's Messages API; AutoGen's ``OpenAIChatCompletionClient`` to OpenAI
Chat Completions), not another's.  :func:`client_provider` reads it from the
modules of the client's class and its bases (nothing is called, no key is
needed); an adapter's ``providers`` returns it, and the judge then applies
that provider's rules only (:func:`prunecheck.sim.subjects.loops.judge.judge_request`).
A client it does not know: an empty set (both OpenAI Chat Completions' and
Anthropic's rules judge, as before).
"""

from __future__ import annotations

__all__ = ["client_provider", "clients_provider", "providers_by_module"]

#: A module (or package) of a client's class → the provider it sends to; the first
#: prefix that matches wins (a more specific module first).
_MODULE_PROVIDERS: tuple[tuple[str, str], ...] = (
    # LlamaIndex's LLM integrations
    ("llama_index.llms.openai.responses", "openai-responses"),
    ("llama_index.llms.openai", "openai"),
    ("llama_index.llms.azure_openai", "openai"),
    ("llama_index.llms.anthropic", "anthropic"),
    ("llama_index.llms.bedrock_converse", "bedrock"),
    ("llama_index.llms.google_genai", "gemini"),
    ("llama_index.llms.gemini", "gemini"),
    # AutoGen's model clients (autogen-ext)
    ("autogen_ext.models.openai", "openai"),
    ("autogen_ext.models.anthropic", "anthropic"),
)


def client_provider(client: object) -> frozenset[str]:
    """The provider ``client`` sends to, as the judge names it (``"openai"``,
    ``"anthropic"``, ``"openai-responses"``, ``"gemini"``, ``"bedrock"``),
    from the module of its class or of a base (:data:`_MODULE_PROVIDERS`);
    empty when unknown (None, a double, a client of another package).

    >>> client_provider(None)
    frozenset()
    """
    if client is None:
        return frozenset()
    found = providers_by_module(client, _MODULE_PROVIDERS)
    return frozenset(found[:1])


def providers_by_module(client: object, table: tuple[tuple[str, str], ...]) -> list[str]:
    """The names of ``table`` (module or package prefix → provider) whose prefix
    matches the module of ``client``'s class or of a base, in the order of the
    class's MRO, then of ``table``; a name may repeat.

    >>> providers_by_module(object(), _MODULE_PROVIDERS)
    []
    """
    return [
        name
        for kind in type(client).__mro__
        for prefix, name in table
        if kind.__module__ == prefix or kind.__module__.startswith(prefix + ".")
    ]


def clients_provider(clients: list[object]) -> frozenset[str]:
    """The providers several agents' clients send to (an ``AgentWorkflow``'s
    agents): each one's :func:`client_provider`; when one is unknown, OpenAI's
    and Anthropic's names are left out (both of their rules judge)."""
    found = [client_provider(c) for c in clients]
    every = frozenset().union(*found) if found else frozenset()
    if not found or any(not f for f in found):
        return every - {"openai", "anthropic"}
    return every

"""The provider a user's model sends to, read from the model as configured.

A verdict names the provider whose rules reject a request: the one the
user's model talks to (pydantic-ai's ``Agent("anthropic:claude-…")`` sends
to Anthropic's Messages API; LangChain's ``ChatOpenAI(use_responses_api=True)``
to OpenAI's Responses API; the OpenAI Agents SDK's default model to the
Responses API; LlamaIndex's ``Anthropic`` to Anthropic; AutoGen's
``OpenAIChatCompletionClient`` to OpenAI Chat Completions), not another's.
:func:`model_provider` reads it without calling anything (no key is needed)
from one set of tables:

* a model string's provider prefix (:data:`_PREFIXES`: ``openai:gpt-4o``,
  ``google-gla:gemini-2.5-flash``, LiteLLM's ``anthropic/claude-…``), or a
  bare model name's start (:data:`_NAMES`: ``gpt-4o``, ``claude-…``), or the
  framework's own default for a bare name (the OpenAI Agents SDK: Responses);
* the class of a model or client object, or of a base (:data:`_CLASSES`:
  module prefix and class name → provider; the first row that matches wins,
  the more specific first), with the settings that switch its API
  (:data:`_SWITCHES`: ``ChatOpenAI(use_responses_api=True)``) and the model
  string some classes hold (LiteLLM's ``LitellmModel(model="anthropic/…")``);
* a wrapper is read through (pydantic-ai's ``InstrumentedModel`` /
  ``FallbackModel``, LangChain's ``model.bind_tools(...)``).

An adapter's ``providers`` returns the names (:data:`~..judge.OWN_PROVIDERS`),
and the judge then applies exactly those providers' rules
(:func:`prunecheck.sim.subjects.loops.judge.judge_request`).  A model it does
not know (a test double, a provider prunecheck has no rules for, a factory
prunecheck hands its model): no name, and OpenAI Chat Completions' and
Anthropic's rules both judge, as before; :attr:`ModelProvider.source` says why.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "ModelProvider",
    "client_provider",
    "clients_provider",
    "model_provider",
    "models_provider",
    "providers_by_module",
]

#: A model string's provider prefix (before ``:`` in pydantic-ai's and LangChain's
#: ``init_chat_model`` strings, before ``/`` in LiteLLM's) → the provider whose rules
#: judge it (:class:`prunecheck.model.provider.Provider`).  A prefix not listed
#: (``groq``, ``ollama``, ``cohere``…) names a provider prunecheck has no rules for.
_PREFIXES: dict[str, str] = {
    "openai": "openai",
    "openai-chat": "openai",
    "azure": "openai",
    "azure_openai": "openai",
    "openai-responses": "openai-responses",
    "anthropic": "anthropic",
    "google-gla": "gemini",
    "google-cloud": "gemini",
    "google-vertex": "gemini",
    "google": "gemini",
    "gemini": "gemini",
    "google_genai": "gemini",
    "google_vertexai": "gemini",
    "vertex_ai": "gemini",
    "bedrock": "bedrock",
    "bedrock_converse": "bedrock",
    "mistral": "mistral",
    "mistralai": "mistral",
    "deepseek": "deepseek",
}

#: A bare model name's start → its provider (LangChain's ``init_chat_model("gpt-4o")``
#: infers the provider the same way).
_NAMES: tuple[tuple[str, str], ...] = (
    ("gpt-", "openai"),
    ("o1", "openai"),
    ("o3", "openai"),
    ("o4", "openai"),
    ("claude", "anthropic"),
    ("gemini", "gemini"),
    ("mistral", "mistral"),
    ("deepseek", "deepseek"),
)

#: A model's or client's class (module or package prefix, class name or ``*`` for
#: any class of it) → the provider it sends to; the first row matching the class or
#: a base (in MRO order) wins, so the more specific rows come first.
_CLASSES: tuple[tuple[str, str, str], ...] = (
    # pydantic-ai's models (an OpenAI-compatible subclass, Ollama's or OpenRouter's,
    # matches OpenAIChatModel: it speaks Chat Completions)
    ("pydantic_ai.models.openai", "OpenAIResponsesModel", "openai-responses"),
    ("pydantic_ai.models.openai", "OpenAIChatModel", "openai"),
    ("pydantic_ai.models.openai", "OpenAIModel", "openai"),
    ("pydantic_ai.models.anthropic", "*", "anthropic"),
    ("pydantic_ai.models.google", "GoogleModel", "gemini"),
    ("pydantic_ai.models.gemini", "*", "gemini"),
    ("pydantic_ai.models.bedrock", "BedrockConverseModel", "bedrock"),
    ("pydantic_ai.models.mistral", "*", "mistral"),
    # LangChain's chat models
    ("langchain_openai", "*", "openai"),
    ("langchain_google_vertexai.model_garden", "ChatAnthropicVertex", "anthropic"),
    ("langchain_anthropic", "*", "anthropic"),
    ("langchain_google_genai", "*", "gemini"),
    ("langchain_google_vertexai", "ChatVertexAI", "gemini"),
    ("langchain_aws", "ChatBedrockConverse", "bedrock"),
    ("langchain_mistralai", "*", "mistral"),
    ("langchain_deepseek", "*", "deepseek"),
    # the OpenAI Agents SDK's models
    ("agents.models.openai_responses", "*", "openai-responses"),
    ("agents.models.openai_chatcompletions", "*", "openai"),
    # Microsoft Agent Framework's chat clients (OpenAIChatClient speaks Responses,
    # and so do the Azure and Foundry clients built on it)
    ("agent_framework_openai._chat_client", "*", "openai-responses"),
    ("agent_framework_openai._chat_completion_client", "*", "openai"),
    ("agent_framework_anthropic", "*", "anthropic"),
    ("agent_framework_gemini", "*", "gemini"),
    ("agent_framework_bedrock", "*", "bedrock"),
    ("agent_framework_mistral", "*", "mistral"),
    # LlamaIndex's LLM integrations
    ("llama_index.llms.openai.responses", "*", "openai-responses"),
    ("llama_index.llms.openai", "*", "openai"),
    ("llama_index.llms.azure_openai", "*", "openai"),
    ("llama_index.llms.anthropic", "*", "anthropic"),
    ("llama_index.llms.bedrock_converse", "*", "bedrock"),
    ("llama_index.llms.google_genai", "*", "gemini"),
    ("llama_index.llms.gemini", "*", "gemini"),
    # AutoGen's model clients (autogen-ext)
    ("autogen_ext.models.openai", "*", "openai"),
    ("autogen_ext.models.anthropic", "*", "anthropic"),
)

#: A setting that switches a class's API: (class name, attribute, value, provider,
#: as the verdict says it).
_SWITCHES: tuple[tuple[str, str, object, str, str], ...] = (
    ("ChatOpenAI", "use_responses_api", True, "openai-responses", "use_responses_api=True"),
    ("AzureChatOpenAI", "use_responses_api", True, "openai-responses", "use_responses_api=True"),
)

#: Classes that hold a model string and send to its provider (LiteLLM's), by name.
_BY_STRING: frozenset[str] = frozenset({"LitellmModel", "ChatLiteLLM"})

#: Attributes through which a wrapper holds the model it sends with.
_WRAPPED: tuple[str, ...] = ("wrapped", "bound")


@dataclass(frozen=True, slots=True)
class ModelProvider:
    """The provider a user's model sends to, and how prunecheck knows it.

    Attributes
    ----------
    names : frozenset[str]
        The providers whose rules judge (``openai``, ``openai-responses``,
        ``anthropic``, ``gemini``, ``bedrock``, ``mistral``, ``deepseek``);
        empty: unknown (OpenAI Chat Completions' and Anthropic's both judge).
    source : str
        Where it was read, as the verdict says it (``model string
        'openai:gpt-4o'``, ``ChatOpenAI(use_responses_api=True)``), or why it
        is unknown.
    """

    names: frozenset[str]
    source: str


def _of_string(text: str, default: str = "") -> ModelProvider:
    said = f"model string {text!r}"
    cut = min((i for i in (text.find(":"), text.find("/")) if i > 0), default=-1)
    if cut > 0:
        prefix = text[:cut]
        if prefix in _PREFIXES:
            return ModelProvider(frozenset({_PREFIXES[prefix]}), said)
        if prefix.replace("-", "").replace("_", "").isalpha():
            return ModelProvider(frozenset(), f"{said}: prunecheck has no rules of {prefix}'s")
    if default:
        return ModelProvider(frozenset({default}), f"{said}: the framework's default API")
    bare = text.lower()
    found = next((p for start, p in _NAMES if bare.startswith(start)), "")
    if found:
        return ModelProvider(frozenset({found}), said)
    return ModelProvider(frozenset(), f"{said}: no provider prunecheck knows")


def providers_by_module(
    client: object, table: tuple[tuple[str, str], ...] | tuple[tuple[str, str, str], ...]
) -> list[str]:
    """The names of ``table`` whose row matches ``client``'s class or a base, in
    the order of the class's MRO, then of ``table``; a name may repeat.  A row is
    ``(module prefix, provider)`` or ``(module prefix, class name or "*", provider)``.

    >>> providers_by_module(object(), _CLASSES)
    []
    """
    found: list[str] = []
    for kind in type(client).__mro__:
        module = kind.__module__
        for row in table:
            prefix, name = row[0], row[-1]
            cls = row[1] if len(row) == 3 else "*"
            in_module = module == prefix or module.startswith(prefix + ".")
            if in_module and cls in ("*", kind.__name__):
                found.append(name)
    return found


def model_provider(model: object, *, default: str = "", depth: int = 0) -> ModelProvider:
    """The provider ``model`` sends to (see the module's docs).

    Parameters
    ----------
    model : object
        A model string, a model or client object, or None.
    default : str
        The provider of a model string without a prefix (the OpenAI Agents
        SDK's ``"gpt-4.1"``: ``openai-responses``); "": read from the name.

    Examples
    --------
    >>> model_provider("openai:gpt-4o").names
    frozenset({'openai'})
    >>> model_provider("anthropic/claude-sonnet-4-5").names
    frozenset({'anthropic'})
    >>> model_provider("groq:llama-3.3-70b").source
    "model string 'groq:llama-3.3-70b': prunecheck has no rules of groq's"
    >>> model_provider(None).names
    frozenset()
    """
    if model is None:
        return ModelProvider(frozenset(), "no model is set")
    if isinstance(model, str):
        return _of_string(model, default)
    kind = type(model).__name__
    named = getattr(model, "model", None)
    if kind in _BY_STRING and isinstance(named, str):
        held = _of_string(named)
        return ModelProvider(held.names, f"{kind}({held.source})")
    found = providers_by_module(model, _CLASSES)
    if found:
        for cls, attr, value, name, told in _SWITCHES:
            if kind == cls and getattr(model, attr, None) == value:
                return ModelProvider(frozenset({name}), f"{kind}({told})")
        return ModelProvider(frozenset(found[:1]), kind)
    if depth < 4:
        for attr in _WRAPPED:
            inner = getattr(model, attr, None)
            if inner is not None and inner is not model:
                held = model_provider(inner, default=default, depth=depth + 1)
                return ModelProvider(held.names, f"{kind} of {held.source}")
        models = getattr(model, "models", None)  # pydantic-ai's FallbackModel
        if isinstance(models, (list, tuple)) and models:
            held = models_provider(models, default=default)
            return ModelProvider(held.names, f"{kind} of {held.source}")
    return ModelProvider(frozenset(), f"{kind}: a model whose provider prunecheck does not know")


def models_provider(models: Iterable[object], *, default: str = "") -> ModelProvider:
    """The providers several models send to (an ``AgentWorkflow``'s agents, a
    fallback chain): each one's; when one is unknown, OpenAI Chat Completions
    and Anthropic as well (the common set, for the model nobody knows)."""
    each = [model_provider(m, default=default) for m in models]
    if not each:
        return ModelProvider(frozenset(), "no model is set")
    told = ", ".join(dict.fromkeys(m.source for m in each))
    known: frozenset[str] = frozenset().union(*(m.names for m in each))
    if known and any(not m.names for m in each):
        known |= {"openai", "anthropic"}
    return ModelProvider(known, told)


def client_provider(client: object) -> frozenset[str]:
    """The provider ``client`` sends to, as the judge names it (:func:`model_provider`);
    empty when unknown (None, a double, a client of another package).

    >>> client_provider(None)
    frozenset()
    """
    return model_provider(client).names


def clients_provider(clients: list[object]) -> frozenset[str]:
    """The providers several agents' clients send to (an ``AgentWorkflow``'s
    agents, :func:`models_provider`)."""
    return models_provider(clients).names

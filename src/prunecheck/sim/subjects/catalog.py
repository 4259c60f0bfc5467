"""Every framework adapter, by spec prefix: the registry the spec parser and
:mod:`.frameworks` share (plain data; each adapter module is imported only
when it is used).

>>> ADAPTERS["autogen"].library
'autogen-core'
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ADAPTERS", "Adapter"]


@dataclass(frozen=True, slots=True)
class Adapter:
    """One framework trimmer.

    Attributes
    ----------
    name: the spec's prefix.
    library: the PyPI distribution whose version a verdict names.
    extra: the optional extra that installs it.
    module: the adapter module (imported on use).
    settings: its settings dataclass.
    factory: its function settings -> list function.
    what: one line for ``prunecheck policies``.
    first: settings the canonical spec always shows.
    """

    name: str
    library: str
    extra: str
    module: str
    settings: str
    factory: str
    what: str
    first: tuple[str, ...] = ()


_P = "prunecheck.sim.subjects.frameworks."
#: Every framework adapter, by spec prefix.
ADAPTERS: dict[str, Adapter] = {
    a.name: a
    for a in (
        Adapter(
            "langchain",
            "langchain-core",
            "langchain",
            "prunecheck.sim.subjects.langchain_trim",
            "TrimSettings",
            "make_trimmer",
            "langchain-core trim_messages",
            ("strategy",),
        ),
        Adapter(
            "langchain-summarization",
            "langchain",
            "langchain",
            _P + "lc_middleware",
            "SummarizationSettings",
            "summarization_trimmer",
            "langchain v1 SummarizationMiddleware (fake chat model writes the summary)",
        ),
        Adapter(
            "langchain-context-editing",
            "langchain",
            "langchain",
            _P + "lc_middleware",
            "ContextEditingSettings",
            "context_editing_trimmer",
            "langchain v1 ContextEditingMiddleware(ClearToolUsesEdit)",
        ),
        Adapter(
            "langchain-middleware",
            "langchain",
            "langchain",
            _P + "lc_middleware",
            "MiddlewareSettings",
            "middleware_trimmer",
            "any langchain v1 AgentMiddleware (before_model / wrap_model_call)",
        ),
        Adapter(
            "autogen",
            "autogen-core",
            "autogen",
            _P + "autogen_context",
            "AutogenSettings",
            "autogen_trimmer",
            "autogen-core ChatCompletionContext (or your subclass)",
            ("context",),
        ),
        Adapter(
            "llamaindex",
            "llama-index-core",
            "llamaindex",
            _P + "llamaindex_memory",
            "LlamaIndexSettings",
            "llamaindex_trimmer",
            "llama-index ChatMemoryBuffer or Memory",
            ("memory",),
        ),
        Adapter(
            "semantic-kernel",
            "semantic-kernel",
            "semantic-kernel",
            _P + "sk_reducer",
            "SemanticKernelSettings",
            "sk_trimmer",
            "semantic-kernel ChatHistoryReducer (truncation, summarization, yours)",
            ("reducer",),
        ),
        Adapter(
            "pydantic-ai",
            "pydantic-ai-slim",
            "pydantic-ai",
            _P + "pydantic_ai_history",
            "PydanticAISettings",
            "pydantic_ai_trimmer",
            "a pydantic-ai history processor",
            ("processor",),
        ),
        Adapter(
            "openai-agents",
            "openai-agents",
            "openai-agents",
            _P + "openai_agents_session",
            "OpenAIAgentsSettings",
            "openai_agents_trimmer",
            "OpenAI Agents SDK session with SessionSettings(limit=N)",
            ("limit",),
        ),
    )
}

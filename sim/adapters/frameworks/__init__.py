"""Framework trimmers as policies: one spec syntax, one module per library.

A spec ``ADAPTER:key=value,...`` names a framework's trimmer and its
settings (parsed by :mod:`.spec`); :func:`framework_policy` builds it as a
list policy (:class:`~prunecheck.sim.adapters.lists.ListPolicy`, OpenAI format)
whose output is read back as evictions, summaries and clears
(:mod:`.readback`).  Each library is imported only when its adapter is
used, from its optional extra (``pip install 'prunecheck[autogen]'``).

>>> sorted(ADAPTERS)[:3]
['autogen', 'langchain', 'langchain-context-editing']
>>> framework_spec("autogen", context="buffered", buffer_size=4)
'autogen:context=buffered,buffer_size=4'
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from prunecheck.model.errors import PolicyError

from .spec import parse_settings, setting_help, spec_of

__all__ = ["ADAPTERS", "Adapter", "adapter_help", "framework_policy", "framework_spec",
           "is_framework_spec", "library_version"]


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


_P = "prunecheck.sim.adapters.frameworks."
#: Every framework adapter, by spec prefix.
ADAPTERS: dict[str, Adapter] = {a.name: a for a in (
    Adapter("langchain", "langchain-core", "langchain", "prunecheck.sim.adapters.langchain_trim",
            "TrimSettings", "make_trimmer", "langchain-core trim_messages", ("strategy",)),
    Adapter("langchain-summarization", "langchain", "langchain", _P + "lc_middleware",
            "SummarizationSettings", "summarization_trimmer",
            "langchain v1 SummarizationMiddleware (fake chat model writes the summary)"),
    Adapter("langchain-context-editing", "langchain", "langchain", _P + "lc_middleware",
            "ContextEditingSettings", "context_editing_trimmer",
            "langchain v1 ContextEditingMiddleware(ClearToolUsesEdit)"),
    Adapter("langchain-middleware", "langchain", "langchain", _P + "lc_middleware",
            "MiddlewareSettings", "middleware_trimmer",
            "any langchain v1 AgentMiddleware (before_model / wrap_model_call)"),
    Adapter("autogen", "autogen-core", "autogen", _P + "autogen_context", "AutogenSettings",
            "autogen_trimmer", "autogen-core ChatCompletionContext (or your subclass)",
            ("context",)),
    Adapter("llamaindex", "llama-index-core", "llamaindex", _P + "llamaindex_memory",
            "LlamaIndexSettings", "llamaindex_trimmer",
            "llama-index ChatMemoryBuffer or Memory", ("memory",)),
    Adapter("semantic-kernel", "semantic-kernel", "semantic-kernel", _P + "sk_reducer",
            "SemanticKernelSettings", "sk_trimmer",
            "semantic-kernel ChatHistoryReducer (truncation, summarization, yours)",
            ("reducer",)),
    Adapter("pydantic-ai", "pydantic-ai-slim", "pydantic-ai", _P + "pydantic_ai_history",
            "PydanticAISettings", "pydantic_ai_trimmer", "a pydantic-ai history processor",
            ("processor",)),
    Adapter("openai-agents", "openai-agents", "openai-agents", _P + "openai_agents_session",
            "OpenAIAgentsSettings", "openai_agents_trimmer",
            "OpenAI Agents SDK session with SessionSettings(limit=N)", ("limit",)),
)}


def is_framework_spec(spec: str) -> bool:
    """Whether ``spec`` names a framework adapter (``autogen:...``)."""
    return spec.partition(":")[0] in ADAPTERS and ":" in spec


def _settings_class(adapter: Adapter) -> type[Any]:
    module = importlib.import_module(adapter.module)
    cls: type[Any] = getattr(module, adapter.settings)
    return cls


def framework_spec(name: str, /, **settings: object) -> str:
    """The canonical spec of adapter ``name`` with ``settings`` (keywords
    from Python, values as on the command line or typed)."""
    adapter = _adapter(name)
    parsed = parse_settings(_settings_class(adapter), name, settings)
    return _canonical(adapter, parsed)


def _canonical(adapter: Adapter, parsed: object) -> str:
    spec = getattr(parsed, "spec", None)
    if callable(spec):
        return str(spec())
    return spec_of(adapter.name, parsed, first=adapter.first)


def _adapter(name: str) -> Adapter:
    if name not in ADAPTERS:
        raise PolicyError(f"framework {name!r}", "is not a framework adapter.",
                          f"adapters: {', '.join(ADAPTERS)}.")
    return ADAPTERS[name]


def framework_policy(spec: str, /, **settings: object) -> Any:
    """The list policy of a framework spec (``"autogen:context=buffered"``),
    or of an adapter name and keyword settings
    (``framework_policy("autogen", context="buffered")``).

    Raises
    ------
    PolicyError
        for an unknown adapter, a bad setting, or a missing extra.
    """
    from prunecheck.sim.adapters.lists import list_policy

    name, _, text = spec.partition(":")
    adapter = _adapter(name)
    cls = _settings_class(adapter)
    parsed = parse_settings(cls, name, settings) if settings and not text else \
        parse_settings(cls, name, text)
    if adapter.name == "langchain":
        parsed = importlib.import_module(adapter.module).parse_settings(text or settings)
    factory = getattr(importlib.import_module(adapter.module), adapter.factory)
    return list_policy(factory(parsed), "openai", name=_canonical(adapter, parsed))


def library_version(name: str) -> str:
    """The installed version of adapter ``name``'s library ("not installed")."""
    try:
        return metadata.version(_adapter(name).library)
    except metadata.PackageNotFoundError:
        return "not installed"


def adapter_help() -> str:
    """The text ``prunecheck policies`` and every ``--help`` show."""
    lines = ["framework trimmers, wherever a POLICY is asked for (ADAPTER:key=value,...;",
             "values joined by '+'; 'budget' = what the runtime asks the context to fit):"]
    for adapter in ADAPTERS.values():
        lines.append(f"  {adapter.name}:...  {adapter.what}  [prunecheck[{adapter.extra}]]")
        for line in setting_help(_settings_class(adapter)):
            lines.append(f"      {line}")
    return "\n".join(lines) + "\n"

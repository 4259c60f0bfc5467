"""Framework trimmers as policies: one spec syntax, one module per library.

A spec ``ADAPTER:key=value,...`` names a framework's trimmer and its
settings (parsed by :mod:`.spec`); :func:`framework_policy` builds it as a
list policy (:class:`~prunecheck.sim.subjects.lists.ListPolicy`, OpenAI format)
whose output is read back as evictions, summaries and clears
(:mod:`..list_actions`).  Each library is imported only when its adapter is
used, from its optional extra (``pip install 'prunecheck[autogen]'``).

>>> sorted(ADAPTERS)[:3]
['autogen', 'langchain', 'langchain-context-editing']
>>> framework_spec("autogen", context="buffered", buffer_size=4)
'autogen:context=buffered,buffer_size=4'
"""

from __future__ import annotations

import importlib
from importlib import metadata
from typing import Any

from prunecheck.model.errors import PolicyError
from prunecheck.sim.subjects.catalog import ADAPTERS, Adapter
from prunecheck.sim.subjects.lists import list_policy
from prunecheck.sim.subjects.policy_spec import SpecKind, parse_spec, split_framework

from .spec import parse_settings, setting_help, spec_of

__all__ = [
    "adapter_help",
    "framework_policy",
    "framework_spec",
    "is_framework_spec",
    "library_version",
]


def is_framework_spec(spec: str) -> bool:
    """Whether ``spec`` names a framework adapter (``autogen:...``), as
    :func:`~prunecheck.sim.subjects.policy_spec.parse_spec` reads it."""
    try:
        return parse_spec(spec).kind is SpecKind.FRAMEWORK
    except PolicyError:
        return False


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
        raise PolicyError(
            f"framework {name!r}",
            "is not a framework adapter.",
            f"adapters: {', '.join(ADAPTERS)}.",
        )
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
    name, text = split_framework(spec)
    adapter = _adapter(name)
    cls = _settings_class(adapter)
    parsed = (
        parse_settings(cls, name, settings)
        if settings and not text
        else parse_settings(cls, name, text)
    )
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
    lines = [
        "framework trimmers, wherever a POLICY is asked for (ADAPTER:key=value,...;",
        "values joined by '+'; 'budget' = what the runtime asks the context to fit):",
    ]
    for adapter in ADAPTERS.values():
        lines.append(f"  {adapter.name}:...  {adapter.what}  [prunecheck[{adapter.extra}]]")
        for line in setting_help(_settings_class(adapter)):
            lines.append(f"      {line}")
    return "\n".join(lines) + "\n"

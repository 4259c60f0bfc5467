"""The ``loop:`` spec: which agent, which framework.

Spellings (consistent with ``runtime:FILE.py:CLASS``)::

    loop:FILE.py:ATTR             the agent (or a factory of one) ATTR in FILE.py
    loop:module:ATTR              the same in an importable module
    loop:FRAMEWORK:FILE.py:ATTR   the same, the framework named (no detection)
    loop:process:MANIFEST.toml    a black-box agent, any language, run as a subprocess

``ATTR`` is an agent object or a factory building one; the framework is
detected by asking each adapter's ``accepts``.  The frameworks:
``pydantic-ai``, ``openai-agents``, ``langgraph`` (LangChain v1
``create_agent``), ``autogen`` (AgentChat), ``strands`` (Strands Agents), ``maf`` (Microsoft
Agent Framework), ``adk`` (Google ADK), ``llamaindex`` (LlamaIndex
``FunctionAgent``/``AgentWorkflow``).
A module may also bring its own adapter as a module-level ``prunecheck_loop_adapter`` (an
:class:`~prunecheck.sim.subjects.loops.contract.Adapter`), tried first.

Adapters are imported only when a spec is loaded, and a framework that is
not installed is skipped: ``pip install 'prunecheck[loops]'`` installs all
of them.  A framework installed in a release its adapter does not drive
(:mod:`.versions`), or one whose modules its adapter cannot import, is an
error (exit status 2) naming the releases, never a skipped framework.

The module is imported, and its factory called, offline (:mod:`.offline`:
placeholder provider keys, outbound connections refused) and in the cage
(:mod:`.confine`: an exit, an interrupt or a hang is named, exit status 2).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from prunecheck.model.errors import PolicyError
from prunecheck.sim.subjects.policy_spec import (
    LOOP_PREFIX,
    PROCESS,
    SpecKind,
    parse_spec,
)
from prunecheck.sim.subjects.user_code import find_object, import_where

from .confine import confined, user_code
from .contract import Adapter
from .offline import offline
from .versions import Supported, check_supported, installed

__all__ = [
    "FRAMEWORKS",
    "PROCESS_ADAPTER",
    "LoopTarget",
    "adapter_named",
    "detect",
    "load_target",
]

#: What starts a loop spec.
#: Framework name (as the spec parser knows them: ``LOOP_FRAMEWORKS``) →
#: the module and class of its adapter.
FRAMEWORKS: dict[str, tuple[str, str]] = {
    "pydantic-ai": ("prunecheck.sim.subjects.loops.frameworks.pydantic_ai", "PydanticAIAdapter"),
    "openai-agents": (
        "prunecheck.sim.subjects.loops.frameworks.openai_agents",
        "OpenAIAgentsAdapter",
    ),
    "langgraph": ("prunecheck.sim.subjects.loops.frameworks.langgraph", "LangGraphAdapter"),
    "autogen": ("prunecheck.sim.subjects.loops.frameworks.autogen", "AutoGenAdapter"),
    "strands": ("prunecheck.sim.subjects.loops.frameworks.strands", "StrandsAdapter"),
    "pyautogen": ("prunecheck.sim.subjects.loops.frameworks.pyautogen", "PyAutoGenAdapter"),
    "maf": ("prunecheck.sim.subjects.loops.frameworks.maf", "MAFAdapter"),
    "adk": ("prunecheck.sim.subjects.loops.frameworks.adk", "AdkAdapter"),
    # LlamaIndex 0.11's OpenAIAgent before the workflow agents: tried first, it takes only an
    # OpenAIAgent (by its class's module) and so never imports a module a release lacks
    "llamaindex-openai-agent": (
        "prunecheck.sim.subjects.loops.frameworks.llamaindex_openai_agent",
        "LlamaIndexOpenAIAgentAdapter",
    ),
    "llamaindex": ("prunecheck.sim.subjects.loops.frameworks.llamaindex", "LlamaIndexAdapter"),
}
#: The adapter of a black-box agent (``loop:process:MANIFEST.toml``: any
#: language, run as a subprocess), beside the frameworks': no framework of its own.
PROCESS_ADAPTER = ("prunecheck.sim.subjects.blackbox.process", "ProcessAdapter")


@dataclass(frozen=True, slots=True)
class LoopTarget:
    """A loaded loop spec.

    Attributes
    ----------
    spec : str
        The spec as written.
    reference : str
        ``FILE.py:ATTR`` (what a script imports).
    target : object
        The agent or its factory.
    adapter : Adapter
        Its framework's adapter.
    """

    spec: str
    reference: str
    target: object
    adapter: Adapter

    @property
    def framework(self) -> str:
        return self.adapter.framework


def adapter_named(name: str) -> Adapter:
    """The adapter of framework ``name``.

    Raises
    ------
    PolicyError
        If the framework is unknown, or its adapter (or the framework) cannot be imported.
    """
    where = FRAMEWORKS.get(name) or (PROCESS_ADAPTER if name == PROCESS else None)
    if where is None:
        raise PolicyError(f"loop framework {name!r}", "is not one prunecheck drives.",
                          f"use one of: {', '.join(FRAMEWORKS)}.")  # fmt: skip
    module, cls = where
    try:
        made = getattr(importlib.import_module(module), cls)()
    except (ImportError, AttributeError) as exc:
        raise PolicyError(
            f"loop framework {name!r}",
            f"its adapter cannot be loaded ({type(exc).__name__}: {exc}).",
            "install the frameworks: pip install 'prunecheck[loops]'.",
        ) from None
    assert isinstance(made, Adapter)
    return made


def _parse(text: str) -> tuple[str, str, str]:
    spec = parse_spec(text)
    if spec.kind is not SpecKind.LOOP:
        raise PolicyError(f"loop spec {text!r}", f"must start with {LOOP_PREFIX}.",
                          "for example loop:examples/loops/fake_agent.py:agent.")  # fmt: skip
    return spec.adapter, spec.where, spec.attr


def _supported(adapter: Adapter) -> Supported | None:
    found = getattr(adapter, "supported", None)
    return found if isinstance(found, Supported) else None


def _accepts(adapter: Adapter, target: object, subject: str, what: str) -> bool:
    """Whether ``adapter`` takes ``target``; what its factory raises is an error.

    Raises
    ------
    PolicyError
        If building the agent raised: the framework's release first (one the
        adapter does not drive), else what was raised and where.
    """
    from prunecheck.sim.subjects.cage_wire import where_raised

    framework = adapter.framework
    with user_code(subject, f"prunecheck built the agent from {what} (as a {framework} agent)"):
        try:
            return adapter.accepts(target)
        except Exception as exc:
            check_supported(framework, _supported(adapter))
            supported = _supported(adapter)
            hint = (
                f"the {framework} adapter drives {supported.text()}; "
                "pip install 'prunecheck[loops]' installs the releases it is tested with."
                if isinstance(exc, ImportError) and supported is not None
                else "fix the code so that it builds the agent without a network or an API key."
            )
            raise PolicyError(
                subject,
                f"building the agent from {what} (as a {framework} agent) raised "
                f"{type(exc).__name__}: {exc}{where_raised(exc)}.",
                hint,
            ) from None


def _package(target: object) -> str:
    """The top-level package of ``target``'s class (of a function's own module)."""
    owner = target if callable(target) and hasattr(target, "__module__") else type(target)
    return str(getattr(owner, "__module__", "") or "").split(".")[0]


def _kind_of(target: object) -> str:
    """`` (a langgraph CompiledStateGraph)``: what ``target`` is, when a package's
    class (not a builtin's, not a function of the user's)."""
    cls = type(target)
    package = cls.__module__.split(".")[0]
    if package in ("builtins", "prunecheck_user") or package.startswith("prunecheck_user_"):
        return ""
    return f" (a {package} {cls.__qualname__})"


def _squash(name: str) -> str:
    return name.lower().replace("-", "").replace("_", "")


def _related(target: object, skipped: list[str]) -> str:
    """The frameworks not installed (or unavailable) whose adapter might have taken
    ``target``: only those whose name shares its package's (an object of
    ``langgraph`` names no ``pyautogen``)."""
    package = _squash(_package(target))
    if not package:
        return ""
    near = [n for n in skipped if package in _squash(n) or _squash(n) in package]
    return f" (not installed or unavailable: {', '.join(near)})" if near else ""


def detect(target: object, subject: str, what: str, own: object = None) -> Adapter:
    """The adapter of ``target``: ``own`` (a module's ``prunecheck_loop_adapter``)
    first, then each installed framework's.

    Raises
    ------
    PolicyError
        If no adapter takes it, the framework that does is installed in a
        release its adapter does not drive, or building the agent raised.
    """
    candidates: list[Adapter] = [own] if isinstance(own, Adapter) else []
    skipped: list[str] = []
    for name in FRAMEWORKS:
        try:
            adapter = adapter_named(name)
        except PolicyError:
            skipped.append(name)
            continue
        supported = _supported(adapter)
        if supported is not None and installed(supported.dist) is None:
            skipped.append(name)
            continue
        candidates.append(adapter)
    for adapter in candidates:
        if _accepts(adapter, target, subject, what):
            check_supported(adapter.framework, _supported(adapter))
            return adapter
    raise PolicyError(
        subject,
        f"{what}{_kind_of(target)} is an agent of no framework prunecheck drives"
        f"{_related(target, skipped)}.",
        f"give an agent or a factory of one of: {', '.join(FRAMEWORKS)}; "
        "an agent in another language or process: loop:process:MANIFEST.toml.",
    )


def load_target(text: str) -> LoopTarget:
    """Load a loop spec (see the module's docs), offline and in the cage.

    Raises
    ------
    PolicyError
        If the spec is malformed, the file or attribute is missing, importing
        it or building the agent fails (raises, exits, hangs), no adapter
        accepts the object, or its framework's release is not one its
        adapter drives.
    """
    framework, where, attr = _parse(text)
    subject = f"loop spec {text!r}"
    if framework == PROCESS:  # the user's program runs in its own process: nothing to import
        adapter = adapter_named(PROCESS)
        return LoopTarget(text, where, adapter.load(where), adapter)  # type: ignore[attr-defined]
    with confined(), offline():
        with user_code(subject, f"importing {where}"):
            target = find_object(where, attr, subject)
        reference = f"{where}:{attr}"
        if framework:
            adapter = adapter_named(framework)
            check_supported(framework, _supported(adapter))
            if not _accepts(adapter, target, subject, attr):
                raise PolicyError(
                    subject,
                    f"{attr} is not a {framework} agent (or factory of one).",
                    "drop the framework from the spec to detect it.",
                )
            return _read(LoopTarget(text, reference, target, adapter))
        with user_code(subject, f"importing {where}"):
            own = getattr(import_where(where, subject), "prunecheck_loop_adapter", None)
        return _read(LoopTarget(text, reference, target, detect(target, subject, attr, own)))


def _read(loaded: LoopTarget) -> LoopTarget:
    """``loaded``, once its adapter has read the agent's tools and
    capabilities: an ``ImportError`` inside the adapter (a release that moved
    a name it needs) is one paragraph here, not a traceback later."""
    from .scheduler import adapter_import_error

    try:
        loaded.adapter.capabilities(loaded.target)
        loaded.adapter.tools(loaded.target)
    except ImportError as exc:
        raise adapter_import_error(loaded.adapter, exc, "reading the agent raised") from None
    return loaded

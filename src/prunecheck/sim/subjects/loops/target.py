"""The ``loop:`` spec: which agent, which framework.

Spellings (consistent with ``runtime:FILE.py:CLASS``)::

    loop:FILE.py:ATTR             the agent (or a factory of one) ATTR in FILE.py
    loop:module:ATTR              the same in an importable module
    loop:FRAMEWORK:FILE.py:ATTR   the same, the framework named (no detection)

``ATTR`` is an agent object or a factory building one; the framework is
detected by asking each adapter's ``accepts``.  The frameworks:
``pydantic-ai``, ``openai-agents``, ``langgraph`` (LangChain v1
``create_agent``), ``autogen`` (AgentChat).  A module may also bring its own
adapter as a module-level ``prunecheck_loop_adapter`` (an
:class:`~prunecheck.sim.subjects.loops.contract.Adapter`), tried first.

Adapters are imported only when a spec is loaded, and a framework that is
not installed is skipped (its adapter's import fails): ``pip install
'prunecheck[loops]'`` installs all four.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from prunecheck.model.errors import PolicyError
from prunecheck.sim.subjects.policy_spec import (
    LOOP_PREFIX,
    SpecKind,
    parse_spec,
)
from prunecheck.sim.subjects.user_code import find_object, import_where

from .contract import Adapter

__all__ = [
    "FRAMEWORKS",
    "LoopTarget",
    "adapter_named",
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
}


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
    where = FRAMEWORKS.get(name)
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


def load_target(text: str) -> LoopTarget:
    """Load a loop spec (see the module's docs).

    Raises
    ------
    PolicyError
        If the spec is malformed, the file or attribute is missing, or no
        adapter accepts the object.
    """
    framework, where, attr = _parse(text)
    subject = f"loop spec {text!r}"
    target = find_object(where, attr, subject)
    reference = f"{where}:{attr}"
    if framework:
        adapter = adapter_named(framework)
        if not adapter.accepts(target):
            raise PolicyError(subject, f"{attr} is not a {framework} agent (or factory of one).",
                              "drop the framework from the spec to detect it.")  # fmt: skip
        return LoopTarget(text, reference, target, adapter)
    own = getattr(import_where(where, subject), "prunecheck_loop_adapter", None)
    candidates: list[Adapter] = [own] if isinstance(own, Adapter) else []
    skipped: list[str] = []
    for name in FRAMEWORKS:
        try:
            candidates.append(adapter_named(name))
        except PolicyError:
            skipped.append(name)
    for adapter in candidates:
        if adapter.accepts(target):
            return LoopTarget(text, reference, target, adapter)
    missing = f" (not installed or unavailable: {', '.join(skipped)})" if skipped else ""
    raise PolicyError(
        subject,
        f"{attr} is an agent of no framework prunecheck drives{missing}.",
        f"give an agent or a factory of one of: {', '.join(FRAMEWORKS)}.",
    )

"""What a policy argument means: a spec, a policy object, a ``select``
function, or — with a format — a list function, resolved to ``(spec, policy)``
(the Python API's and the pytest plugin's way in)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from prunecheck.model.errors import PolicyError
from prunecheck.model.policies import FunctionPolicy, Policy, as_policy, policy_name
from prunecheck.model.provider import Provider
from prunecheck.sim.subjects.lists import list_policy
from prunecheck.sim.subjects.loader import load_policy
from prunecheck.sim.subjects.policy_spec import list_format

__all__ = ["PolicyLike", "format_of", "resolve_policy"]

PolicyLike = str | Policy | Callable[..., Any]


def resolve_policy(
    policy: PolicyLike, *, format: str | None = None, name: str | None = None
) -> tuple[str, Policy]:
    """``(spec, policy)`` for a spec, a policy object, a ``select`` function,
    or — with ``format`` — a list function ``trim(messages)``."""
    if isinstance(policy, str):
        spec = policy
        if format is not None and list_format(spec) is None:
            spec = f"{spec}@{format}"  # a built-in so named fails to load, and says so
        loaded = load_policy(spec)
        if format_of(loaded) is not None:
            spec = loaded.name  # canonical for framework specs (langchain:..., autogen:...)
        return spec, loaded
    if format is not None:
        adapted = list_policy(policy, format, name=name)
        return adapted.name, adapted
    label = name or policy_name(policy, "policy")
    if name is not None and callable(policy) and not hasattr(policy, "select"):
        return name, FunctionPolicy(policy, name)
    try:
        obj = as_policy(policy, str(label))
    except TypeError as exc:
        raise PolicyError(
            f"policy {label!r}",
            str(exc) + ".",
            "pass a spec, a select(view, need) function or a policy object; "
            "a trim(messages) list function needs format='openai' or "
            "'anthropic'.",
        ) from None
    return obj.name, obj


def format_of(policy: Policy) -> str | None:
    """A list function's provider format (in-process or caged), else None."""
    fmt = getattr(policy, "format", None)
    return fmt.value if isinstance(fmt, Provider) else None

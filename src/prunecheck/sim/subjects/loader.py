"""Loading the policy a spec names (see :mod:`.policy_spec` for the syntax).

:func:`load_policy` is the one place policies are loaded: built-ins run
in-process; everything else (a user's module or file, list functions,
framework adapters) runs in its own worker process (see
:mod:`prunecheck.sim.subjects.cage`), so that nothing it does can stop,
fool or hang prunecheck.  :func:`load_local` loads a spec in the calling
process (the worker uses it).

:func:`load_system` is where a spec becomes what the drivers drive, a
:class:`~prunecheck.model.system.System`: a policy spec the model runtime
running that policy (:class:`~prunecheck.model.model_system.ModelSystem`,
wrapped once, here), a ``runtime:`` spec a runtime under test judged against
ground truth (:class:`~prunecheck.sim.subjects.runtimes.judged.JudgedSystem`,
:func:`load_runtime`; a user's runtime class runs in a worker too,
:mod:`.runtime_cage`).

What a spec's attribute must be: a callable ``select(view, need)``, an
object with a ``select`` method (and optional ``name``), or a class with one
(instantiated with no arguments); with ``@openai``/``@anthropic``, a list
function ``trim(messages)``.

:func:`time_limited` (from :mod:`.time_limit`) gives a loaded policy its
per-call time limit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from prunecheck.model.errors import PolicyError
from prunecheck.model.observed import parse_observed
from prunecheck.model.policies import Policy, as_policy, builtin_policy
from prunecheck.sim.subjects.cage_wire import where_raised
from prunecheck.sim.subjects.policy_spec import PolicySpec, SpecKind, parse_spec
from prunecheck.sim.subjects.user_code import find_object

if TYPE_CHECKING:
    from prunecheck.model.config import RuntimeConfig
    from prunecheck.model.model_system import ModelSystem
    from prunecheck.model.system import System
    from prunecheck.sim.subjects.runtimes.judged import JudgedSystem
    from prunecheck.sim.subjects.runtimes.stimuli import RuntimeUnderTest

# A policy's worker (.cage_worker) imports this module to load its policy
# with load_local: what only the parent's side needs (the cage, the runtimes
# a spec is driven in, the framework adapters) is imported where it is used,
# so that a worker starts in about a third of the CPU time.

__all__ = [
    "FORMAT_HINT",
    "adapter_policy",
    "load_local",
    "load_policy",
    "load_runtime",
    "load_system",
    "model_system",
    "resolve_attribute",
]

#: How to say a list function's format, on every command that takes a policy.
FORMAT_HINT = (
    "say which provider format its messages use: end the spec with @openai or "
    "@anthropic (file.py:trim@openai)."
)


def load_system(spec: str, timeout: float | None = None) -> System[Any]:
    """What the drivers drive for a spec: the model runtime running the
    policy it names, or the runtime under test a ``runtime:`` spec names.

    Parameters
    ----------
    spec : str
        A policy spec or a ``runtime:`` spec.
    timeout : float or None
        The per-call time limit of the policy (:func:`time_limited`) or of
        a user's runtime; None: none (a caged runtime keeps the default).

    Raises
    ------
    PolicyError
        as :func:`load_policy` and :func:`load_runtime`.
    """
    parsed = parse_spec(spec)
    if parsed.kind.is_runtime:
        return load_runtime(parsed, timeout)
    return model_system(spec, load_policy(spec), timeout)


def model_system(spec: str, policy: Policy, timeout: float | None = None) -> ModelSystem:
    """The model runtime running a loaded ``policy`` (time-limited if
    ``timeout`` is given), recorded in traces as ``spec``."""
    from prunecheck.model.model_system import ModelSystem, reads_times
    from prunecheck.sim.subjects.time_limit import time_limited

    limited = policy if timeout is None else time_limited(policy, timeout)
    return ModelSystem(limited, spec, timed=reads_times(policy))


def _runtime_spec(spec: str) -> PolicyError:
    return PolicyError(
        f"policy spec {spec!r}",
        "names a runtime under test, not a policy.",
        "load it with load_system (the command line does), which drives the runtime itself.",
    )


def load_policy(spec: str) -> Policy:
    """The policy a spec names: a built-in in-process, anything else caged
    in its own worker process.

    Raises
    ------
    PolicyError
        if the spec is malformed, names a runtime (see :func:`load_system`),
        the module or file cannot be imported, or the attribute is missing
        or not a policy.
    """
    parsed = parse_spec(spec)
    if parsed.kind.is_runtime:
        raise _runtime_spec(spec)
    if parsed.kind in (SpecKind.BUILTIN, SpecKind.OBSERVED):
        return load_local(spec)
    from prunecheck.sim.subjects.cage import caged
    from prunecheck.sim.subjects.time_limit import DEFAULT_TIMEOUT
    from prunecheck.sim.support.environment import cage_enabled

    if not cage_enabled():  # in-process, for a debugger: its prints still go to stderr
        from prunecheck.sim.subjects.in_process import InProcessPolicy, quiet

        with quiet():
            return InProcessPolicy(load_local(spec))
    return caged(spec, DEFAULT_TIMEOUT)


def load_local(spec: str) -> Policy:
    """The policy a spec names, loaded in this process (no cage).

    Raises
    ------
    PolicyError
        as :func:`load_policy`.
    """
    parsed = parse_spec(spec)
    if parsed.kind is SpecKind.BUILTIN:
        builtin = builtin_policy(spec)
        assert builtin is not None  # parse_spec said it is one
        return builtin
    if parsed.kind is SpecKind.OBSERVED:  # data: the removals a log showed
        return parse_observed(spec)
    if parsed.kind.is_runtime:
        raise _runtime_spec(spec)
    adapted = _adapted(parsed)
    if adapted is not None:
        return adapted
    obj = _find(parsed)
    attr = parsed.attr
    if _is_list_function(obj):
        raise PolicyError(
            f"policy spec {spec!r}",
            f"{attr} takes one argument, like a list "
            "function trim(messages), not a policy select(view, need).",
            FORMAT_HINT,
        )
    try:
        return as_policy(obj, attr)
    except TypeError:
        raise PolicyError(
            f"policy spec {spec!r}",
            f"{attr} is {type(obj).__name__}, neither a "
            "callable select(view, need) nor an object with a select method.",
            "point the spec at your select function or policy object.",
        ) from None
    except Exception as exc:
        raise PolicyError(
            f"policy spec {spec!r}",
            f"instantiating {attr} raised {type(exc).__name__}: {exc}{where_raised(exc)}.",
        ) from None


def adapter_policy(spec: str) -> Policy | None:
    """The policy of an adapter spec (``file.py:trim@openai``,
    ``mod:trim@anthropic``, a framework's ``ADAPTER:k=v,...``), or None if
    ``spec`` is not one."""
    return _adapted(parse_spec(spec))


def _adapted(parsed: PolicySpec) -> Policy | None:
    if parsed.kind is SpecKind.FRAMEWORK:  # autogen:context=buffered, langchain:...
        from prunecheck.sim.subjects.frameworks import framework_policy

        policy: Policy = framework_policy(parsed.text)
        return policy
    if parsed.kind is not SpecKind.LIST:
        return None
    assert parsed.format is not None
    fn = _find(parsed)
    if isinstance(fn, type) or hasattr(fn, "select") or not callable(fn):
        raise PolicyError(
            f"policy spec {parsed.text!r}",
            f"{parsed.attr} is a select(view, "
            "need) policy object, not a list function trim(messages).",
            f"drop the @{parsed.format} suffix to check it as a policy.",
        )
    from prunecheck.sim.subjects.lists import list_policy

    return list_policy(fn, parsed.format, name=parsed.text)


def _find(parsed: PolicySpec) -> object:
    return find_object(parsed.where, parsed.attr, f"policy spec {parsed.text!r}")


def _is_list_function(obj: object) -> bool:
    """A plain function of one positional parameter (trim(messages))."""
    if isinstance(obj, type) or hasattr(obj, "select") or not callable(obj):
        return False
    import inspect

    try:
        params = inspect.signature(obj).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    variadic = any(p.kind is p.VAR_POSITIONAL for p in params)
    return len(positional) == 1 and not variadic


def resolve_attribute(spec: str) -> tuple[object, str]:
    """``(object, attr)`` that ``module:attr`` or ``file.py:attr`` names.

    Raises
    ------
    PolicyError
        if the spec is malformed, cannot be imported, or lacks the attribute.
    """
    parsed = parse_spec(spec)
    if parsed.kind not in (SpecKind.ATTRIBUTE, SpecKind.LIST):
        raise PolicyError(
            f"policy spec {spec!r}",
            "does not name user code as module:attr or file.py:attr.",
            "for example mypkg.trim:select.",
        )
    return _find(parsed), parsed.attr


def load_runtime(spec: str | PolicySpec, timeout: float | None = None) -> JudgedSystem:
    """The runtime a ``runtime:`` spec names, judged against ground truth.

    * ``runtime:FILE.py:CLASS`` or ``runtime:module:CLASS`` — your runtime,
      built with ``budget=`` and ``hard_ceiling=``;
    * ``runtime:guard:POLICY`` — prunecheck's reference runtime with
      :class:`prunecheck.guard.CommitGuard` wrapping ``POLICY`` (any policy
      spec, list functions included: ``runtime:guard:trim.py:trim@openai``);
    * ``runtime:model:POLICY`` — the model runtime itself, through the protocol.

    ``timeout`` (seconds, None or 0 or less: the default) limits each call
    into a user's runtime, which runs in its own worker (:mod:`.runtime_cage`).

    Raises
    ------
    PolicyError
        if the spec is malformed or names no runtime.
    """
    from prunecheck.sim.subjects.in_process import InProcessRuntime, quiet
    from prunecheck.sim.subjects.runtime_cage import caged_runtime
    from prunecheck.sim.subjects.runtimes.guard_runtime import GuardedRuntime
    from prunecheck.sim.subjects.runtimes.judged import JudgedSystem, factory_from
    from prunecheck.sim.subjects.runtimes.model_runtime import ModelRuntime
    from prunecheck.sim.subjects.time_limit import DEFAULT_TIMEOUT
    from prunecheck.sim.support.environment import cage_enabled

    parsed = spec if isinstance(spec, PolicySpec) else parse_spec(spec)
    text = parsed.text
    if parsed.inner is not None:
        policy = load_policy(parsed.inner.text)
        if parsed.kind is SpecKind.MODEL_RUNTIME:
            return JudgedSystem(text, lambda config: ModelRuntime(config, policy))
        return JudgedSystem(
            text, lambda config: GuardedRuntime(policy, config.budget, config.hard_ceiling)
        )
    if parsed.kind is not SpecKind.RUNTIME:
        raise PolicyError(
            f"runtime spec {text!r}",
            "must be runtime:FILE.py:CLASS, "
            "runtime:module:CLASS, runtime:guard:POLICY or runtime:model:POLICY.",
            "for example runtime:examples/agent_loop.py:NaiveLoop.",
        )
    if cage_enabled():  # the user's runtime runs in its own worker, like a policy
        caged_one = caged_runtime(text, DEFAULT_TIMEOUT)
        return caged_one if timeout is None or timeout <= 0 else caged_one.with_timeout(timeout)
    with quiet():
        obj = find_object(
            parsed.where,
            parsed.attr,
            f"runtime spec {text!r}",
            import_subject=f"policy spec {text!r}",
        )
    make = factory_from(obj, text)

    def quietly(config: RuntimeConfig) -> RuntimeUnderTest:
        with quiet():
            runtime = make(config)
        return cast("RuntimeUnderTest", InProcessRuntime(runtime, text))

    return JudgedSystem(text, quietly)

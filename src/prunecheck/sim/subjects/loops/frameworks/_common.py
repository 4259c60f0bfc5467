"""What the pydantic-ai and OpenAI Agents SDK adapters share: recognizing a
target (an agent, or a factory of one) and keeping executor work on the
event loop's thread; the line every framework's reproduction script
writes after its version gate (:data:`SCRIPT_EXCEPTHOOK`); and what the
provider that judged a schedule said (:func:`provider_says`), which a
script prints."""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import inspect
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..handoff import MARK

if TYPE_CHECKING:
    from prunecheck.model.incidents import Incident

    from ..contract import Adapter

__all__ = [
    "SCRIPT_EXCEPTHOOK",
    "InlineExecutor",
    "agent_argument",
    "also_shown",
    "build_target",
    "compact",
    "inline_executor",
    "provider_says",
    "rejections_said",
]

#: The line a reproduction script writes right after its version gate: any
#: error escaping later (a framework module failing to import, a setup step,
#: the replay itself) says ``could not run: ...`` and exits 2, never 1 (which
#: says "reproduced").
SCRIPT_EXCEPTHOOK = (
    "sys.excepthook = lambda kind, error, _: "
    '(print(f"could not run: {kind.__name__}: {error}", flush=True), os._exit(2))'
    "  # any error: could not run (exit 2), never 1"
)


#: A script's version gate, after its ``FOUND_ON`` line: exit 2, naming both versions, unless
#: every distribution is installed as found (one line: reproductions stay short).
VERSION_GATE = (
    'for dist, found in FOUND_ON.items(): (HAVE := {d.metadata["Name"]: d.version for d in '
    'importlib.metadata.distributions()}).get(dist) == found or sys.exit(print(f"could not run: '
    'found on {dist} {found}, installed {dist} {HAVE[dist]}" if dist in HAVE else f"could not run: '
    '{dist} is not installed (found on {dist} {found})") or 2)  # exit 2 unless installed as found'
)


def rejections_said(incidents: Iterable[Incident]) -> dict[str, tuple[str, str]]:
    """The first text the judged provider answered for each kind of rejection
    among ``incidents`` (``result_without_call``, ``call_without_result``,
    ``no_messages``…) → (provider, text), as the judge wrote them (its reason
    is ``provider:kind``)."""
    from ..judge import rejecting_provider

    out: dict[str, tuple[str, str]] = {}
    for incident in incidents:
        who, kind = rejecting_provider(incident)
        if who and incident.text:
            out.setdefault(kind, (who, incident.text))
    return out


def provider_says(
    adapter: Adapter, target_spec: str, schedule_json: str
) -> dict[str, tuple[str, str]]:
    """What the provider that judged ``schedule_json`` on ``target_spec`` answered
    (:func:`rejections_said` of the schedule retold once), for the script to
    print the text of the provider the agent talks to, not always OpenAI's."""
    from ..steps import schedule_from_json
    from ..story import retell
    from ..target import load_target

    framework = str(getattr(adapter, "framework", ""))
    target = load_target(f"loop:{framework}:{target_spec}").target
    return rejections_said(retell(adapter, target, schedule_from_json(schedule_json)).incidents)


def agent_argument(module: str, attr: str) -> str:
    """The line (in a script's ``main``) naming the user's agent: ``MODULE:NAME``,
    the one it was found on unless the script's argument names another that
    the same schedule breaks (a script several agents share,
    :mod:`prunecheck.sim.reports.loops_scripts`)."""
    default = f"{module}:{attr}"
    return (f"    module, name = (sys.argv[1:] or [{default!r}])[0].split(':')"
            "  # the user's agent; another: its MODULE:NAME as argument")  # fmt: skip


def also_shown(schedule: dict[str, Any]) -> str:
    """What a shared script's docstring adds after its agent: the others
    (``schedule["agents"]``, the first being its own) and how to pass them."""
    agents = [str(a) for a in schedule.get("agents") or ()]
    return f" (or {' or '.join(agents[1:])}, given as its argument)" if len(agents) > 1 else ""


def compact(script: str) -> str:
    """``script`` without its blank lines (the reproductions are read top to
    bottom, a comment at each part; issue 30 counts their lines)."""
    return "".join(line for line in script.splitlines(keepends=True) if line.strip())


def _of_package(obj: object, package: str) -> bool:
    return type(obj).__module__.split(".")[0] == package


def build_target(target: object, package: str, is_agent: Callable[[Any], bool]) -> Any:
    """The agent ``target`` stands for, or ``None`` if it is not ``package``'s.

    Parameters
    ----------
    target : object
        An agent, or a factory (a function, method or ``functools.partial``
        taking no argument) building one.  A factory is called each time:
        every loop gets a fresh agent.
    package : str
        The framework's top-level package (``"pydantic_ai"``, ``"agents"``):
        nothing is imported unless ``target`` (or what the factory built)
        comes from it.
    is_agent : Callable[[Any], bool]
        Whether an object of ``package`` is an agent.

    Returns
    -------
    object or None
        The agent (or what the factory returned, when its first element is an
        agent: ``(agent, run_config)``).
    """
    if _of_package(target, package):
        return target if is_agent(target) else None
    if callable(target) and _is_function(target) and _takes_no_argument(target):
        built = target()
        head = built[0] if isinstance(built, tuple) and built else built
        if _of_package(head, package) and is_agent(head):
            return built
    return None


def _is_function(target: object) -> bool:
    """Whether ``target`` is a factory to call: a function, a method or a
    ``functools.partial``, or one wrapped by a decorator that says so
    (``functools.cache``, ``functools.wraps``: its ``__wrapped__``).  An
    object whose class is callable (a Strands ``Agent``: calling it runs the
    agent) is never called to find out what it is."""
    inner = (
        inspect.unwrap(target) if callable(target) and hasattr(target, "__wrapped__") else target
    )
    return (
        inspect.isfunction(inner) or inspect.ismethod(inner) or isinstance(inner, functools.partial)
    )


def _takes_no_argument(fn: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return all(
        p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params
    )


class InlineExecutor(concurrent.futures.ThreadPoolExecutor):
    """An executor that runs each function at once on the calling thread.

    Frameworks hand blocking work to the loop's default executor
    (``asyncio.to_thread``: the Agents SDK's ``SQLiteSession``; sync history
    processors).  A worker thread finishes whenever the operating system lets
    it, which a deterministic harness cannot order; run inline, the work is
    done before the ``await`` that asked for it yields, and its result is one
    more ready callback of the loop.
    """

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # delivered to the awaiting task, as a worker would
            future.set_exception(exc)
        return future


def inline_executor() -> None:
    """Make the running loop's default executor an :class:`InlineExecutor` (idempotent).

    A harness's virtual loop keeps its own (:mod:`..handoff`: sync work on
    threads that run one at a time, which can also wait on the harness).
    """
    loop = asyncio.get_running_loop()
    if getattr(loop, MARK, False):
        return
    if not isinstance(getattr(loop, "_default_executor", None), InlineExecutor):
        loop.set_default_executor(InlineExecutor(max_workers=1))

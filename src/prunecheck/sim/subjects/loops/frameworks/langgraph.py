"""LangChain v1 ``create_agent`` on LangGraph, driven inside the loop harness.

The target is a factory the user already has, or writes in three lines: a
callable with a ``model`` parameter returning the compiled graph that
``langchain.agents.create_agent`` builds::

    def agent(model):
        return create_agent(model, tools=[search, send_email],
                            middleware=[SummarizationMiddleware(model=model, ...)],
                            checkpointer=SqliteSaver(...))

:meth:`LangGraphAdapter.open` calls it with :class:`~.lc_doubles.HarnessChatModel`
(so the agent's model and any middleware built on the same ``model``, a
summarizer, ask the harness; a middleware's own model, built from a provider
string, ``SummarizationMiddleware(model="openai:gpt-4.1-mini")``, or handed one
the module built, is pointed at the double too: :func:`point_middleware_models`),
replaces each tool in the graph's ``ToolNode``
by a fake of the same name and argument schema whose body is
``harness.tool``, and keeps every middleware, the system prompt and the
repair of invalid tool calls as built.  The checkpointer keeps its kind:
none stays none, ``InMemorySaver`` stays in memory (a crash loses it), any
other (SQLite, Postgres …) becomes LangGraph's SQLite checkpointer on
``harness.store`` (:class:`~.lc_doubles.InlineSqliteSaver`, whose module
docstring says why its async methods run inline).

LangGraph's prebuilt ``create_react_agent`` (the older API: no middleware
module is needed) and hand-built ``StateGraph`` s are driven the same way
(a graph whose tools are in a ``"tools"`` node); a ``pre_model_hook`` is the
trim hook, and so is a node of the user's own (what it sends the model is its
to pick: the plain agent's model is sent the whole state the node was called
with).  Sync nodes and hooks run on the harness's handoff threads, and a
sync ``model.invoke`` waits on the harness from there (:mod:`..handoff`).  A
middleware whose ``wrap_model_call`` or ``wrap_tool_call`` has no async form
makes LangChain refuse ``ainvoke``: such an app calls ``graph.invoke``, and so
does the loop (on a handoff thread; LangGraph's and ``ToolNode``'s thread
pools then run their tasks one after another on that thread).

Scenario classes: a turn is ``ainvoke`` on one ``thread_id`` (without a
checkpointer, with the conversation the last turn returned, as a stateless
app passes it); cancel is
``task.cancel()`` on the turn (LangGraph has no other cancel API); a crash
drops the graph, its task and the connection, and :meth:`open` builds a new
graph on the same checkpoint file; resume is ``ainvoke(None, config)``; a
new message after a crash is ``ainvoke`` on the same ``thread_id``;
approvals answer ``HumanInTheLoopMiddleware``'s interrupt, or the
``interrupt()`` of a tool that asks a human (its function calls LangGraph's
``interrupt``: the fake calls it first, then its body is the harness's),
with ``Command(resume=...)``.  LangGraph has no tool timeout of its own.

Releases: LangGraph 0.3+ (``create_react_agent``, no LangChain v1 needed) and
LangChain v1.  Without ``langgraph-checkpoint-sqlite`` installed, a factory's
checkpointer is LangGraph's ``InMemorySaver`` (a crash loses it: the crash
classes do not apply).

Limits: a tool body is never run, so a ``Command`` the user's tool returns,
or an ``interrupt()`` it raises from a helper function, is not reproduced
(the fake returns the harness's text).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from prunecheck.sim.subjects.loops.contract import Capability, Harness, Loop, ToolSpec
from prunecheck.sim.subjects.loops.versions import Needs, Supported

from .model_providers import ModelProvider, model_provider, models_provider

__all__ = [
    "SUPPORTED",
    "LangGraphAdapter",
    "LangGraphLoop",
    "ModuleGraph",
    "checkpoint_file",
    "module_graph",
]

#: The releases this adapter drives (:mod:`prunecheck.sim.subjects.loops.versions`; the
#: docs' table in docs/how-to/own-runtime.md says the same).
SUPPORTED = Supported(
    (Needs("langgraph", "0.3.34", "2"), Needs("langchain", "1.1.1", "2")),
    tested=("0.3.34", "1.0.4", "1.2.24"),
    oldest_pins=(
        "langchain-core==0.3.59", "langgraph-checkpoint==2.0.26", "langgraph-prebuilt==0.1.8",
        "langgraph-sdk==0.1.66", "langgraph==0.3.34",
    ),
)  # fmt: skip

_THREAD = "prunecheck"
_HITL = "HumanInTheLoopMiddleware"
#: The middleware hooks that rewrite what the model is sent: a middleware overriding one
#: (but human-in-the-loop approval) is the configuration's trimming.
_HOOKS = ("before_model", "abefore_model", "wrap_model_call", "awrap_model_call")
#: The hooks that return a state update the checkpointer stores (``RemoveMessage`` s, new
#: messages), read by the next request: at the start of a turn (``before_agent``), after a
#: model call (``after_model``) or at the end of a turn (``after_agent``).  The user's own
#: middleware there (a class of theirs, or one LangChain's decorators made of their
#: function: ``@after_agent``) is trimming too.  LangChain's own middleware at these
#: hooks trims nothing (``ToolCallLimitMiddleware``'s limit messages and its jump to the
#: end, a shell's session): it is no trim hook, though what it writes after the model is
#: on the history's path, so the plain agent is built without its ``after_model`` too.
_STATE_HOOKS = (
    "before_agent", "abefore_agent", "after_model", "aafter_model", "after_agent",
    "aafter_agent",
)  # fmt: skip
_AFTER = ("after_model", "aafter_model")
#: The graph nodes ``create_agent`` builds of a middleware's state hooks (``Name.after_agent``).
_HOOK_NODES = ("before_agent", "before_model", "after_model", "after_agent")
#: The names ``create_agent``'s model node reads the chained ``wrap_model_call`` s from.
_WRAP_HANDLERS = ("wrap_model_call_handler", "awrap_model_call_handler")


def checkpoint_file(store: Path) -> Path:
    """Where the SQLite checkpointer writes in ``store``."""
    return store / "langgraph-checkpoints.sqlite"


@dataclass(frozen=True, slots=True)
class _Pending:
    """A call waiting for a human: its interrupt, its place in it, the interrupt's mode."""

    interrupt: str
    position: int
    per_call: bool


@dataclass(frozen=True, slots=True)
class _Shape:
    """What a built graph is made of (read once per target)."""

    tools: tuple[Any, ...]
    middleware: tuple[Any, ...]
    checkpointer: str  # "none" | "memory" | "durable"
    pre_model_hook: bool  # create_react_agent's: what the model is sent, rewritten
    sync_only: bool  # a middleware hook with no async form: the app runs graph.invoke
    human: tuple[str, ...] = ()  # tools that ask a human: their own interrupt()
    own_saver: bool = False  # the app's InMemorySaver subclass writing its own put/aput
    own_nodes: tuple[str, ...] = ()  # nodes of the user's own functions (a hand-built graph)


class ModuleGraph:
    """A graph the user's module compiled at import (``agent = create_agent(
    "openai:gpt-4o", tools=[...])``, the quick start's spelling, or a hand-built
    ``StateGraph`` whose nodes call a model the module built, ``model =
    init_chat_model("openai:gpt-4.1").bind_tools(tools)``), as a factory:
    called with a model, it points the graph's models at it and returns the
    graph.

    ``create_agent`` resolves the provider string to a chat model (a
    ``ChatOpenAI``, built offline on a placeholder key) and keeps it in the
    closure of its model nodes; a hand-built graph's node functions read theirs
    from the module's globals (a chat model, or one with tools bound).  Every
    such place is pointed at the given model (the harness's double; a binding
    keeps what was bound, the tools), and the tools are faked by
    :meth:`LangGraphAdapter.open` from the tools as built.  The graph is one
    object: each :meth:`open` re-points it, which a schedule at a time allows.
    A ``create_agent`` graph's middleware cannot be built again without its
    hooks: the plain run sets them aside in the graph as built (:meth:`without`);
    a hand-built graph's own nodes run as written, and its plain run undoes what
    they trim (:func:`~.lc_doubles.whole_state`).  Each call puts back what a
    plain run set aside or wrapped.
    """

    def __init__(self, graph: Any, slots: list[_Slot]) -> None:
        self.graph = graph
        self._slots = slots
        # the node functions as the module built them (a plain run wraps them: undone here)
        self._nodes = {
            (name, attr): getattr(node.bound, attr, None)
            for name, node in graph.nodes.items()
            for attr in ("afunc", "func")
        }
        # the model node's chained wrap_model_call handlers (a plain run drops them)
        self._handlers = [
            (cell, cell.cell_contents) for cell in _handler_cells(graph) if _full(cell)
        ]

    def __call__(self, model: Any) -> Any:
        for slot in self._slots:
            slot.point(model)
        for (name, attr), fn in self._nodes.items():
            bound = self.graph.nodes[name].bound
            if getattr(bound, attr, None) is not fn:
                setattr(bound, attr, fn)
        for cell, handler in self._handlers:
            cell.cell_contents = handler
        return self.graph

    def without(self, classes: Sequence[type]) -> None:
        """The graph (as the last call left it) with the hooks of the middleware of
        ``classes`` set aside, as ``create_agent`` would build it without them: each
        of their hook nodes (``Name.after_agent`` …) passes the state through
        unchanged, and the model node calls the model directly when every chained
        ``wrap_model_call`` is theirs (a chain with another's is kept whole)."""
        kinds = tuple(classes)
        for name, node in self.graph.nodes.items():
            if name.rpartition(".")[2] not in _HOOK_NODES:
                continue
            bound = node.bound
            for attr in ("afunc", "func"):
                fn = getattr(bound, attr, None)
                owner = getattr(fn, "__self__", None)
                if fn is not None and type(owner) in kinds:
                    setattr(bound, attr, _passes_async if attr == "afunc" else _passes)
        wraps = ("wrap_model_call", "awrap_model_call")
        wrapping = [m for m in _middleware_of(self.graph) if any(_overrides(m, h) for h in wraps)]
        if all(type(m) in kinds for m in wrapping):
            for cell, _ in self._handlers:
                cell.cell_contents = None


def _passes(*_args: Any, **_kwargs: Any) -> None:
    """A middleware hook node set aside: no state update."""
    return None


async def _passes_async(*_args: Any, **_kwargs: Any) -> None:
    """A middleware's async hook node set aside: no state update."""
    return None


def _handler_cells(graph: Any) -> list[Any]:
    """The closure cells of ``create_agent``'s model node holding its chained
    ``wrap_model_call`` handlers (:data:`_WRAP_HANDLERS`), each once."""
    node = graph.nodes.get("model")
    found: dict[int, Any] = {}
    for attr in ("func", "afunc"):
        fn = getattr(getattr(node, "bound", None), attr, None)
        code = getattr(fn, "__code__", None)
        closure = getattr(fn, "__closure__", None) or ()
        for var, cell in zip(getattr(code, "co_freevars", ()), closure, strict=False):
            if var in _WRAP_HANDLERS:
                found.setdefault(id(cell), cell)
    return list(found.values())


def _full(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018
    except ValueError:  # an empty cell
        return False
    return True


@dataclass(frozen=True, slots=True)
class _Slot:
    """A place a node function reads a chat model from: a closure cell, or a name
    of its module's globals (``binding``: the model there is one with arguments
    bound, ``model.bind_tools(tools)``, re-bound on the given model)."""

    cell: Any = None
    scope: dict[str, Any] | None = None
    name: str = ""
    binding: Any = None

    def point(self, model: Any) -> None:
        if self.cell is not None:
            self.cell.cell_contents = model
        elif self.scope is not None:
            held = self.binding
            self.scope[self.name] = model if held is None else _rebound(held, model)


def _rebound(binding: Any, model: Any) -> Any:
    """``binding`` (a ``RunnableBinding`` over a chat model) over ``model`` instead,
    what it bound kept (the tools ``bind_tools`` formatted, their options)."""
    return binding.model_copy(update={"bound": model})


def _chat_model(held: Any) -> tuple[bool, Any]:
    """Whether ``held`` is a chat model or a binding over one; the binding, if it is one."""
    from langchain_core.language_models import BaseChatModel
    from langchain_core.runnables import RunnableBinding

    if isinstance(held, BaseChatModel):
        return True, None
    if isinstance(held, RunnableBinding) and isinstance(held.bound, BaseChatModel):
        return True, held
    return False, None


def _model_cells(graph: Any) -> list[_Slot]:
    """The places ``graph``'s nodes read a LangChain chat model from: closure cells
    (``create_agent``'s model node) and module globals their code names (a
    hand-built graph's nodes, ``model.invoke(...)`` on a module-level model)."""
    slots: dict[tuple[int, str], _Slot] = {}
    for node in graph.nodes.values():
        for attr in ("func", "afunc"):
            func = getattr(node.bound, attr, None)
            for cell in getattr(func, "__closure__", None) or ():
                try:
                    held = cell.cell_contents
                except ValueError:  # an empty cell
                    continue
                if _chat_model(held)[0]:
                    slots.setdefault((id(cell), ""), _Slot(cell=cell))
            scope = getattr(func, "__globals__", None)
            code = getattr(func, "__code__", None)
            module = str(getattr(func, "__module__", "") or "").split(".")[0]
            if scope is None or code is None or module in _FRAMEWORK_MODULES:
                continue
            for name in code.co_names:
                found, binding = _chat_model(scope.get(name))
                if found:
                    slots.setdefault((id(scope), name), _Slot(scope=scope, name=name,
                                                              binding=binding))  # fmt: skip
    return list(slots.values())


def module_graph(target: object) -> ModuleGraph | None:
    """``target`` as a :class:`ModuleGraph` if it is a compiled graph whose nodes
    read a chat model (``create_agent``'s, or a module-level model a hand-built
    graph's nodes call), else None."""
    try:
        from langgraph.graph.state import CompiledStateGraph
    except ImportError:
        return None
    if not isinstance(target, CompiledStateGraph):
        return None
    known = _MODULE_GRAPHS.get(id(target))
    if known is not None and known.graph is target:  # read as the module built it, once
        return known
    slots = _model_cells(target)
    if not slots:
        return None
    _MODULE_GRAPHS[id(target)] = found = ModuleGraph(target, slots)
    return found


#: Each module graph read once, by graph: its places and node functions are those the
#: module built (a plain run's adapter, a new one, must not read the graph re-pointed
#: or with its nodes wrapped by an earlier run).
_MODULE_GRAPHS: dict[int, ModuleGraph] = {}


def _is_factory(target: object) -> bool:
    if not callable(target) or isinstance(target, type):
        return False
    try:
        params = inspect.signature(target).parameters
    except (TypeError, ValueError):
        return False
    return "model" in params


def _takes_checkpointer(target: Callable[..., Any]) -> bool:
    return "checkpointer" in inspect.signature(target).parameters


def _build(target: Callable[..., Any], model: Any, checkpointer: Any = None) -> Any:
    if _takes_checkpointer(target):
        return target(model=model, checkpointer=checkpointer)
    return target(model=model)


def _middleware_base() -> Any:
    """LangChain v1's ``AgentMiddleware``, or None where it does not ship (a graph of
    LangGraph's prebuilt ``create_react_agent`` or a hand-built one has no middleware)."""
    try:
        from langchain.agents.middleware import AgentMiddleware
    except ImportError:
        return None
    return AgentMiddleware


def _middleware_of(graph: Any) -> list[Any]:
    AgentMiddleware = _middleware_base()
    if AgentMiddleware is None:
        return []

    found: dict[int, Any] = {}

    def visit(obj: Any, depth: int) -> None:
        if depth > 8 or obj is None:
            return
        owner = getattr(obj, "__self__", None)
        if isinstance(owner, AgentMiddleware):
            found.setdefault(id(owner), owner)
            return
        for cell in getattr(obj, "__closure__", None) or ():
            try:
                visit(cell.cell_contents, depth + 1)
            except ValueError:  # an empty cell
                continue

    for name, node in graph.nodes.items():
        bound = node.bound
        if name == "model":
            for cell in bound.afunc.__closure__ or ():
                try:
                    visit(cell.cell_contents, 0)
                except ValueError:
                    continue
        for attr in ("func", "afunc"):
            visit(getattr(bound, attr, None), 0)
    return sorted(found.values(), key=lambda m: str(m.name))


def point_middleware_models(middleware: Sequence[Any], model: Any) -> int:
    """Point every chat model a middleware holds at the harness's double ``model``; the
    number of places pointed.

    A middleware builds its own model from a provider string
    (``SummarizationMiddleware(model="openai:gpt-4.1-mini")``: ``init_chat_model``, a
    ``ChatOpenAI`` on the placeholder key; ``ModelFallbackMiddleware``'s list,
    ``LLMToolSelectorMiddleware``'s, ``LLMToolEmulator``'s model) or is handed one the
    module built: left as built, its request would go to the provider (refused
    offline, and never counted as the summarizer's call).  Each attribute holding a
    chat model, a binding over one (the summarizer's ``model.with_retry(...)``: what it
    bound kept), or a list, tuple or dict of them, of every middleware on the graph,
    the user's own classes included, gets a copy of the double with the user's model's
    ``profile`` (what a ``("fraction", 0.8)`` trigger reads); the double itself, handed
    to a factory's middleware, stays.  A module's graph is one object: each open
    points its middleware again, at its own double."""
    from langchain_core.language_models import BaseChatModel
    from langchain_core.runnables.base import RunnableBindingBase

    from .lc_doubles import HarnessChatModel

    pointed = 0
    doubles: dict[int, Any] = {}  # one double per model of the user's

    def point(held: Any) -> Any:
        """``held`` on the double, or ``held`` itself if it holds no model of the user's."""
        nonlocal pointed
        if type(held) in (list, tuple):
            return type(held)(point(h) for h in held)
        if type(held) is dict:
            return {k: point(v) for k, v in held.items()}
        binding = isinstance(held, RunnableBindingBase)
        inner = held.bound if binding else held
        if not isinstance(inner, BaseChatModel) or inner is model:
            return held
        if isinstance(inner, HarnessChatModel) and inner.harness is model.harness:
            return held
        double = doubles.get(id(inner))
        if double is None:
            profile = getattr(inner, "profile", None)
            double = model.model_copy(update={"profile": profile}) if profile else model
            doubles[id(inner)] = double
        pointed += 1
        return held.model_copy(update={"bound": double}) if binding else double

    for m in middleware:
        for name, held in list(vars(m).items()):
            before = pointed
            new = point(held)
            if pointed != before:
                setattr(m, name, new)
    return pointed


def _shape(target: Callable[..., Any]) -> _Shape:
    from langgraph.checkpoint.memory import InMemorySaver

    from .lc_doubles import HarnessChatModel, asks_human

    durable = _takes_checkpointer(target)
    graph = _build(target, HarnessChatModel(), InMemorySaver() if durable else None)
    node = graph.nodes.get("tools")
    tools = tuple(node.bound.tools_by_name.values()) if node is not None else ()
    saver = graph.checkpointer
    if durable or (saver not in (None, False) and not isinstance(saver, InMemorySaver)):
        # without langgraph-checkpoint-sqlite (a LangGraph 0.x install), kept in memory:
        # the crash classes do not apply
        kind = "durable" if _sqlite_saver() else "memory"
    else:
        kind = "none" if saver in (None, False) else "memory"
    middleware = tuple(_middleware_of(graph))
    return _Shape(tools=tools, middleware=middleware, checkpointer=kind,
                  own_saver=_rewrites(saver), own_nodes=_own_nodes(graph),
                  pre_model_hook="pre_model_hook" in graph.nodes,
                  sync_only=any(_sync_only(m) for m in middleware),
                  human=tuple(t.name for t in tools if asks_human(t)))  # fmt: skip


#: Modules whose node functions are the frameworks' own (``create_agent``'s model
#: node and middleware hooks, ``create_react_agent``'s, ``ToolNode``, the graph's start).
_FRAMEWORK_MODULES = ("langgraph", "langchain", "langchain_core")


def _own_nodes(graph: Any) -> tuple[str, ...]:
    """The nodes of ``graph`` that run the user's own functions (a hand-built
    ``StateGraph``'s model node: what it sends the model is the user's to pick,
    a trim inside it included), but a ``pre_model_hook`` (a hook of its own) and
    a middleware's hook (``create_agent``'s ``Name.before_model`` nodes, bound
    methods of an ``AgentMiddleware``: the middleware is the trim hook, and the
    plain agent is built without it)."""
    own: list[str] = []
    for name, node in graph.nodes.items():
        if name == "pre_model_hook":
            continue
        for attr in ("afunc", "func"):
            fn = getattr(node.bound, attr, None)
            if _is_middleware(getattr(fn, "__self__", None)):
                break
            module = str(getattr(fn, "__module__", "") or "")
            if callable(fn) and module and module.split(".")[0] not in _FRAMEWORK_MODULES:
                own.append(name)
                break
    return tuple(own)


def _is_middleware(owner: object) -> bool:
    """Whether ``owner`` is a LangChain v1 ``AgentMiddleware`` (not installed: no)."""
    base = _middleware_base()
    return base is not None and isinstance(owner, base)


def _rewrites(saver: Any) -> bool:
    """Whether ``saver`` is the app's own ``InMemorySaver`` subclass that overrides how
    a checkpoint is written (``put``/``aput``): what it stores is on the history's path."""
    from langgraph.checkpoint.memory import InMemorySaver

    cls = type(saver)
    return (
        isinstance(saver, InMemorySaver)
        and cls is not InMemorySaver
        and any(getattr(cls, m) is not getattr(InMemorySaver, m) for m in ("put", "aput"))
    )


def _fresh_saver(saver: Any) -> Any:
    """A new, empty checkpointer of ``saver``'s class (the app's subclass, built with
    no arguments as its module builds it), else LangGraph's ``InMemorySaver``."""
    from langgraph.checkpoint.memory import InMemorySaver

    if saver is not None and type(saver) is not InMemorySaver:
        try:
            return type(saver)()
        except Exception:  # a subclass that needs arguments: a copy is not ours to guess
            return saver
    return InMemorySaver()


def _sqlite_saver() -> bool:
    """Whether LangGraph's SQLite checkpointer is installed (the durable kind's store)."""
    import importlib.util

    try:
        return importlib.util.find_spec("langgraph.checkpoint.sqlite") is not None
    except ModuleNotFoundError:
        return False


def _sync_only(middleware: Any) -> bool:
    """Whether a middleware wraps the model or tool calls in a sync hook only: LangChain
    refuses it under ``ainvoke``, so the app runs the agent with ``invoke``."""
    return any(
        _overrides(middleware, hook) and not _overrides(middleware, "a" + hook)
        for hook in ("wrap_model_call", "wrap_tool_call")
    )


def _users_own(middleware: Any) -> bool:
    """Whether ``middleware`` is the user's code: a class of theirs, or one LangChain's
    hook decorators (``@after_agent`` …) made of their function (a class defined in
    ``langchain.agents.middleware.types``, where only ``AgentMiddleware`` is written)."""
    module = str(getattr(type(middleware), "__module__", "") or "")
    return module == "langchain.agents.middleware.types" or (
        module.split(".")[0] not in _FRAMEWORK_MODULES
    )


def _overrides(middleware: Any, hook: str) -> bool:
    return getattr(type(middleware), hook, None) is not getattr(_middleware_base(), hook, None)


@contextmanager
def _without_hooks(classes: list[type]) -> Iterator[None]:
    """While building a graph: each middleware class of ``classes`` without its
    hooks on the history's path (:data:`_HOOKS`, :data:`_STATE_HOOKS`:
    ``before_agent``, ``before_model``, ``wrap_model_call``, ``after_model``,
    ``after_agent`` and their async twins), so that ``create_agent`` leaves it
    out of that path."""
    if not classes:  # nothing to set aside (and LangChain v1 may not be installed)
        yield
        return
    from langchain.agents.middleware import AgentMiddleware

    saved: list[tuple[type, str, object]] = []
    try:
        for cls in dict.fromkeys(classes):
            for hook in (*_HOOKS, *_STATE_HOOKS):
                if getattr(cls, hook, None) is not getattr(AgentMiddleware, hook):
                    saved.append((cls, hook, cls.__dict__.get(hook, _ABSENT)))
                    setattr(cls, hook, getattr(AgentMiddleware, hook))
        yield
    finally:
        for cls, hook, before in reversed(saved):
            if before is _ABSENT:
                delattr(cls, hook)
            else:
                setattr(cls, hook, before)


_ABSENT = object()


class LangGraphAdapter:
    """The :class:`~prunecheck.sim.subjects.loops.contract.Adapter` of LangChain v1 agents.

    ``plain``: open the framework's plain agent, the user's graph built with
    its message-rewriting middleware left off the history's path
    (:meth:`without_trimming`, for whose failure a finding is).
    """

    framework = "langgraph"
    supported: ClassVar[Supported] = SUPPORTED
    #: A summarizer on the agent's model asks the harness: its request may fail (``model_error``).
    model_faults = True

    def __init__(self, *, plain: bool = False) -> None:
        self._shapes: dict[int, _Shape] = {}
        self._graphs: dict[int, ModuleGraph] = {}
        self.plain = plain

    def _factory(self, target: object) -> Callable[..., Any]:
        """``target``, or the :class:`ModuleGraph` of a module-level compiled graph."""
        if id(target) in self._graphs:
            return self._graphs[id(target)]
        found = module_graph(target)
        if found is not None:
            self._graphs[id(target)] = found
            return found
        assert callable(target)
        return target

    def untimed_faults(self, target: object) -> bool:
        """Whether a failed side request (a summarizer's) is not retried after a
        backoff: a hand-built graph's own node calls its model once (no LangChain
        middleware, whose summarizer retries, on the history's path), so its
        ``model_error`` is offered in every class, the trimming class included."""
        shape = self._shape_of(target)
        return bool(shape.own_nodes) and not shape.middleware

    def without_trimming(self) -> LangGraphAdapter:
        """This adapter opening the framework's plain agent (``plain``)."""
        return LangGraphAdapter(plain=True)

    def _trimming(self, target: object) -> list[type]:
        """The classes of the middleware that trim: those that rewrite what the model
        is sent (:data:`_HOOKS`), and the user's own that update the thread's messages
        at the start or end of a turn or after the model (:data:`_STATE_HOOKS`)."""
        return [
            type(m)
            for m in self._shape_of(target).middleware
            if type(m).__name__ != _HITL
            and (
                any(_overrides(m, h) for h in _HOOKS)
                or (_users_own(m) and any(_overrides(m, h) for h in _STATE_HOOKS))
            )
        ]

    def _on_path(self, target: object) -> list[type]:
        """The classes of the middleware the plain agent is built without: those that
        trim, and those that write messages after the model (:data:`_AFTER`)."""
        trimming = self._trimming(target)
        return trimming + [
            type(m)
            for m in self._shape_of(target).middleware
            if type(m).__name__ != _HITL
            and type(m) not in trimming
            and any(_overrides(m, h) for h in _AFTER)
        ]

    def _shape_of(self, target: object) -> _Shape:
        key = id(target)
        if key not in self._shapes:
            self._shapes[key] = _shape(self._factory(target))
        return self._shapes[key]

    def provider(self, target: object) -> ModelProvider:
        """The provider the user's chat model talks to (:func:`.model_providers.model_provider`:
        ``ChatOpenAI``, with ``use_responses_api=True`` the Responses API;
        ``ChatAnthropic``; ``init_chat_model("openai:gpt-4o")``'s model…): the
        model a module-level graph was built with (:func:`graph_provider`), or
        the default of a factory's ``model`` parameter; a factory prunecheck hands
        its model to states none (unknown)."""
        return graph_provider(target)

    def providers(self, target: object) -> frozenset[str]:
        """The providers whose rules judge the requests (:meth:`provider`)."""
        return self.provider(target).names

    def accepts(self, target: object) -> bool:
        """A callable with a ``model`` parameter returning a LangGraph ``CompiledStateGraph``,
        or a compiled graph the module built with its model (:class:`ModuleGraph`)."""
        if module_graph(target) is not None:
            graph_provider(target)  # read before an open points the graph at the double
            return True
        if not _is_factory(target):
            return False
        try:
            from langgraph.graph.state import CompiledStateGraph

            from .lc_doubles import HarnessChatModel

            assert callable(target)
            return isinstance(_build(target, HarnessChatModel()), CompiledStateGraph)
        except Exception:
            return False

    def capabilities(self, target: object) -> frozenset[Capability]:
        """Cancel always; crash scenarios with a durable checkpointer; interrupts
        with ``HumanInTheLoopMiddleware`` and a checkpointer; the trim hook when
        another middleware rewrites what the model is sent (``before_model``,
        ``wrap_model_call``), the user's own middleware updates the thread's
        messages (``before_agent``, ``after_model``, ``after_agent``), a prebuilt
        ``create_react_agent`` has a ``pre_model_hook``, the app's own
        ``InMemorySaver`` subclass overrides how a checkpoint is written, or a
        hand-built graph's own node picks what the model is sent (its trimming,
        if any, is then the class's: a node that never cuts makes it vacuous)."""
        shape = self._shape_of(target)
        caps = {Capability.CANCEL}
        if shape.checkpointer == "durable":
            caps |= {Capability.CRASH_RESUME, Capability.CRASH_NEW_MESSAGE}
        names = {type(m).__name__ for m in shape.middleware}
        if (_HITL in names or shape.human) and shape.checkpointer != "none":
            caps.add(Capability.INTERRUPT)
        if not self.plain and (
            shape.pre_model_hook or shape.own_saver or shape.own_nodes or self._trimming(target)
        ):
            caps.add(Capability.TRIM_HOOK)
        return frozenset(caps)

    def tools(self, target: object) -> list[ToolSpec]:
        """The names and schemas of the tools in the agent's ``ToolNode``."""
        from .lc_doubles import tool_spec

        return [tool_spec(t) for t in self._shape_of(target).tools]

    def open(self, target: object, harness: Harness) -> Loop:
        """A new graph from the factory: the model double, fake tools, the
        checkpointer on ``harness.store``."""
        from langgraph.checkpoint.memory import InMemorySaver

        from .lc_doubles import (
            HarnessChatModel,
            fake_tool,
            inline_langsmith,
            inline_sync_executors,
        )

        factory = self._factory(target)
        inline_langsmith()
        sync = self._shape_of(target).sync_only
        if sync:
            inline_sync_executors()
        # the plain agent of a hand-built graph: its own nodes run as written, but the
        # model is sent the whole state each was called with (a trim inside them undone)
        undo = self.plain and bool(self._shape_of(target).own_nodes)
        model = HarnessChatModel(harness=harness, whole_state=undo)
        saver: Any = None
        given: Any = None  # the checkpointer handed to a factory that takes one
        if self._shape_of(target).checkpointer == "durable":
            from .lc_saver import InlineSqliteSaver

            saver = given = InlineSqliteSaver.at(checkpoint_file(harness.store))
        elif _takes_checkpointer(factory):  # no SQLite checkpointer installed: in memory
            given = InMemorySaver()
        if self.plain:
            with _without_hooks(self._on_path(target)):
                graph = _build(factory, model, given)
            if isinstance(factory, ModuleGraph):  # built already: its hooks set aside here
                factory.without(self._on_path(target))
        else:
            graph = _build(factory, model, given)
        if undo:
            from .lc_doubles import whole_state

            for name in self._shape_of(target).own_nodes:
                bound = graph.nodes[name].bound
                for attr in ("afunc", "func"):
                    fn = getattr(bound, attr, None)
                    if callable(fn):
                        setattr(bound, attr, whole_state(fn))
        node = graph.nodes.get("tools")
        if node is not None:
            by_name = node.bound.tools_by_name
            human = self._shape_of(target).human
            built = {
                t.name: t for t in self._shape_of(target).tools
            }  # a module graph's: faked once
            for name, tool in list(by_name.items()):
                by_name[name] = fake_tool(built.get(name, tool), harness, human=name in human)
        point_middleware_models(_middleware_of(graph), model)  # "openai:gpt-4.1-mini" …
        if saver is not None:
            graph.checkpointer = saver  # the user's own durable kind, pointed at the store
        elif isinstance(graph.checkpointer, InMemorySaver):  # in memory: a crash loses it
            # the app's own subclass (one that caps or rewrites what it stores) as written;
            # the plain agent on LangGraph's own
            graph.checkpointer = _fresh_saver(None if self.plain else graph.checkpointer)
        return LangGraphLoop(graph, harness, saver, sync=sync)

    #: How :meth:`count_tokens` counts (the figures of a verdict say it).
    token_counter = "LangChain's count_tokens_approximately"

    def count_tokens(self, messages: list[Any]) -> int:
        """Tokens of OpenAI chat messages by LangChain's own approximate counter."""
        from .budgets import langchain_tokens

        return langchain_tokens(messages)

    def budget(self, target: object) -> Any:
        """The budget a ``SummarizationMiddleware`` or ``ContextEditingMiddleware`` states."""
        from .budgets import langchain_budget

        return langchain_budget(self._shape_of(target).middleware)

    def script(self, target_spec: str, schedule_json: str, *, folder: Path | None = None) -> str:
        """A standalone script replaying the schedule with LangChain and LangGraph alone
        (:func:`~.langgraph_repro.repro_script`: the user's factory imported relative to
        ``folder``, its checkpointer's kind kept)."""
        import json

        from prunecheck.sim.subjects.policy_spec import split_reference
        from prunecheck.sim.subjects.user_code import find_object

        from ._common import provider_says
        from .langgraph_repro import repro_script

        where, attr = split_reference(target_spec)
        target = find_object(where, attr, f"loop target {target_spec!r}")
        kind = self._shape_of(target).checkpointer
        return repro_script(
            target_spec, json.loads(schedule_json), checkpointer=kind, folder=folder,
            module_graph=module_graph(target) is not None,
            says=provider_says(self, target_spec, schedule_json),
        )  # fmt: skip


class LangGraphLoop:
    """One live graph on one ``thread_id``."""

    def __init__(self, graph: Any, harness: Harness, saver: Any, *, sync: bool = False) -> None:
        self._graph = graph
        self._sync = sync
        self._harness = harness
        self._saver = saver
        self._config: dict[str, Any] = {"configurable": {"thread_id": _THREAD}}
        self._messages: list[Any] = []
        self._awaiting: dict[str, _Pending] = {}
        self._decisions: dict[str, bool] = {}

    async def _run(self, payload: Any) -> None:
        if self._sync:  # graph.invoke, as the app calls it, on a handoff thread (..handoff)
            result = await asyncio.to_thread(self._graph.invoke, payload, self._config)
        else:
            result = await self._graph.ainvoke(payload, self._config)
        if isinstance(result, dict) and "messages" in result:
            self._messages = list(result["messages"])
        await self._collect_interrupts()

    async def _collect_interrupts(self) -> None:
        from .lc_doubles import ASKS_HUMAN

        self._awaiting.clear()
        self._decisions.clear()
        if self._graph.checkpointer in (None, False):
            return
        state = await self._graph.aget_state(self._config)
        self._messages = list(state.values.get("messages", self._messages))
        last_calls = _last_tool_calls(self._messages)
        for intr in _interrupts(state):
            value = intr.value
            if not isinstance(value, dict):
                continue
            if value.get("type") in ("tool_approval", ASKS_HUMAN):  # one call per interrupt
                self._awaiting[str(value["tool_call_id"])] = _Pending(_interrupt_id(intr), 0, True)
                continue
            free = list(last_calls)  # batched mode: action requests in the calls' order
            for pos, req in enumerate(value.get("action_requests") or []):
                match = next(
                    (
                        c
                        for c in free
                        if (c["name"], c["args"]) == (req.get("name"), req.get("args"))
                    ),
                    None,
                )
                if match is not None:
                    free.remove(match)
                    self._awaiting[str(match["id"])] = _Pending(intr.id, pos, False)
        for call_id in self._awaiting:
            self._harness.awaiting_approval(call_id)

    async def send(self, text: str) -> None:
        """One user turn: ``ainvoke({"messages": [user]}, config)``.

        Without a checkpointer the graph remembers nothing between turns, so
        the app passes the conversation so far, as LangChain's docs do: the
        messages the last ``ainvoke`` returned, then the new user message.  A
        turn that never returned (cancelled) leaves that conversation as it was.
        """
        from langchain_core.messages import HumanMessage

        user = HumanMessage(content=text)
        stateless = self._graph.checkpointer in (None, False)
        await self._run({"messages": [*self._messages, user] if stateless else [user]})

    async def cancel(self, turn: Any) -> None:
        """LangGraph's cancel: cancel the task running ``ainvoke``."""
        turn.cancel()

    async def resume(self) -> None:
        """After a crash: ``ainvoke(None, config)`` continues from the last checkpoint."""
        await self._run(None)

    async def approve(self, call_id: str, approved: bool) -> None:
        """Record the decision; once every awaited call has one, resume with
        ``Command(resume={interrupt_id: answer})`` (a batched interrupt's answer
        lists its decisions in order; a per-call interrupt's is one decision)."""
        from langgraph.types import Command

        if call_id not in self._awaiting:
            raise KeyError(f"no approval is awaited for call {call_id!r}")
        self._decisions[call_id] = approved
        if set(self._decisions) != set(self._awaiting):
            return
        batched: dict[str, list[tuple[int, dict[str, str]]]] = {}
        answers: dict[str, Any] = {}
        for cid, pending in self._awaiting.items():
            decision = _decision(self._decisions[cid])
            if pending.per_call:
                answers[pending.interrupt] = decision
            else:
                batched.setdefault(pending.interrupt, []).append((pending.position, decision))
        for interrupt, items in batched.items():
            answers[interrupt] = {"decisions": [d for _, d in sorted(items)]}
        if "" in answers:  # LangGraph 0.3 names no interrupt: one answer resumes them all
            await self._run(Command(resume=answers[""]))
            return
        await self._run(Command(resume=answers))

    def history(self) -> list[dict[str, object]]:
        """The thread's messages as checkpointed (the last result's without a checkpointer)."""
        from .lc_doubles import render_messages

        messages = self._messages
        if self._graph.checkpointer not in (None, False):
            state = self._graph.get_state(self._config)
            messages = list(state.values.get("messages", messages))
        return render_messages(messages)

    def abandon(self) -> None:
        """A crash: close the checkpoint connection, committing nothing more."""
        if self._saver is not None:
            self._saver.abandon()


def _interrupts(state: Any) -> list[Any]:
    """The pending interrupts of a state snapshot (LangGraph 0.3: only its tasks')."""
    found = getattr(state, "interrupts", None)
    if found is not None:
        return list(found)
    return [i for task in state.tasks for i in task.interrupts]


def _interrupt_id(intr: Any) -> str:
    """An interrupt's id (``id``; ``interrupt_id`` in LangGraph 0.4-0.5; "" in 0.3)."""
    return str(getattr(intr, "id", None) or getattr(intr, "interrupt_id", None) or "")


def _decision(approved: bool) -> dict[str, str]:
    if approved:
        return {"type": "approve"}
    return {"type": "reject", "message": "The user rejected this tool call."}


def _last_tool_calls(messages: list[Any]) -> list[dict[str, Any]]:
    from langchain_core.messages import AIMessage

    for message in reversed(messages):
        if isinstance(message, AIMessage):
            return [dict(c) for c in message.tool_calls]
    return []


#: The provider of each module-level graph, read the first time it is seen (an
#: open points the graph's model at the harness's double): id → (graph, provider).
_GRAPH_PROVIDERS: dict[int, tuple[Any, ModelProvider]] = {}


def _held(fn: Any) -> list[Any]:
    """What ``fn`` reads: its closure cells' contents and the module globals its code names."""
    out: list[Any] = []
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            out.append(cell.cell_contents)
        except ValueError:  # an empty cell
            continue
    scope = getattr(fn, "__globals__", None)
    code = getattr(fn, "__code__", None)
    if isinstance(scope, dict) and code is not None:
        out += [scope[n] for n in code.co_names if n in scope]
    return out


def _chat_models(graph: Any) -> list[Any]:
    """The user's chat models (or bindings of one: ``model.bind_tools(...)``) the
    graph's node functions hold; the harness's double left out."""
    from langchain_core.language_models import BaseChatModel

    from .lc_doubles import HarnessChatModel

    found: dict[int, Any] = {}
    for node in graph.nodes.values():
        for attr in ("func", "afunc"):
            for held in _held(getattr(node.bound, attr, None)):
                inner = getattr(held, "bound", held)
                if isinstance(inner, BaseChatModel) and not isinstance(inner, HarnessChatModel):
                    found.setdefault(id(held), held)
    return list(found.values())


def graph_provider(target: object) -> ModelProvider:
    """The provider of the user's model (:meth:`LangGraphAdapter.provider`)."""
    held = _GRAPH_PROVIDERS.get(id(target))
    if held is not None and held[0] is target:
        return held[1]
    if module_graph(target) is not None:
        models = _chat_models(target)
        if not models:
            return ModelProvider(frozenset(), "the graph holds no chat model of the user's")
        found = models_provider(models)
        _GRAPH_PROVIDERS[id(target)] = (target, found)
        return found
    try:
        default = inspect.signature(target).parameters["model"].default  # type: ignore[arg-type]
    except (KeyError, TypeError, ValueError):
        default = inspect.Parameter.empty
    if default is inspect.Parameter.empty or default is None:
        return ModelProvider(frozenset(), "a factory prunecheck hands its model to: it names "
                             "no provider")  # fmt: skip
    return model_provider(default)

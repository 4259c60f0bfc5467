"""One shrinker module for every subject (issue 30): the only delta-debugging
pass of ``src/prunecheck`` is :func:`prunecheck.sim.drivers.shrinking.ddmin`.

Read from the source (ast, no import):

* no other module defines a ``ddmin`` or ``delta_debug...`` function;
* every function named as a shrinker (``minimize...``, ``shrink...``,
  ``polish...``, ``simplify...``) reaches ``ddmin`` through what it calls;
* no function outside the module splices a sequence around a window
  (``xs[:i] + xs[j:]``), the way a hand-written deletion loop does.

Then, run on small inputs, each shrinking entry point of a subject (a
trace, a search's run, a loop's schedule) really calls the one pass.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

import prunecheck
from prunecheck.model.model_system import ModelSystem
from prunecheck.model.trace import Trace
from prunecheck.sim.drivers import shrinking

SRC = Path(prunecheck.__file__).resolve().parent
ONE = "prunecheck.sim.drivers.shrinking"
PASS = (ONE, "ddmin")
#: Names of a shrinker: each must reach the one pass.
SHRINKER = re.compile(r"^_?(minimi[sz]e|shrink|polish|simplif)\w*$")
#: Names only the one module may define.
OWN = re.compile(r"^_?(ddmin|delta_debug)\w*$")
#: Shrinker-named functions that shrink nothing, and why.
NOT_SHRINKERS = {
    ("prunecheck.sim.api.minimal", "shrink_note"): "words a bundle's meta in one sentence",
}
#: The entry points of every subject's shrinking (the test below runs each).
ENTRY_POINTS = {
    ("prunecheck.sim.api.minimal", "shrink_trace"),
    ("prunecheck.sim.drivers.polish", "minimize"),
    ("prunecheck.sim.drivers.polish", "minimize_timed"),
    ("prunecheck.sim.drivers.action_search", "minimize"),
}

Key = tuple[str, str]
#: Text that may hold a splice (``xs[:i] + ``): only such modules are parsed for it.
SPLICE = re.compile(r"\[\s*:[^\]\[]*\]\)?\s*\+")


@functools.cache
def _sources() -> dict[str, str]:
    """Every module's text by its dotted name (read, not parsed: a module is
    parsed only when a check needs it, which keeps this test cheap)."""
    out = {}
    for path in sorted(SRC.rglob("*.py")):
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path.read_text("utf-8")
    return out


@functools.cache
def _tree(module: str) -> ast.Module:
    return ast.parse(_sources()[module], module)


def _base(module: str, level: int, target: str | None) -> str:
    """The absolute module a ``from ... import`` names."""
    if not level:
        return target or ""
    package = (SRC.parent / module.replace(".", "/") / "__init__.py").exists()
    parts = module.split(".")
    parts = parts[: len(parts) - level + (1 if package else 0)]
    return ".".join(parts + ([target] if target else []))


@functools.cache
def _calls(module: str) -> dict[str, set[Key]]:
    """What each function of ``module`` calls (nested functions' calls count
    for the functions around them too): a call by name goes to the function
    of that name in the module, or to what it was imported as; a call of an
    attribute (``self.attempt``, ``Edits(...).other``) to every function of
    that name in the module (methods included)."""
    tree = _tree(module)
    imported: dict[str, Key] = {}
    local: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = _base(module, node.level, node.module)
            for alias in node.names:
                imported[alias.asname or alias.name] = (base, alias.name)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            local.add(node.name)
    calls: dict[str, set[Key]] = {}

    def visit(node: ast.AST, around: tuple[str, ...]) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            around = (*around, node.name)
            calls.setdefault(node.name, set())
        elif isinstance(node, ast.Call) and around:
            f = node.func
            name = (
                f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            )
            key = (
                (module, name)
                if name in local
                else imported.get(name)
                if isinstance(f, ast.Name)
                else None
            )
            if key is not None:
                for fn in around:
                    calls[fn].add(key)
        for child in ast.iter_child_nodes(node):
            visit(child, around)

    visit(tree, ())
    return calls


def _reaches(start: Key, goal: Key) -> bool:
    seen, todo = {start}, [start]
    while todo:
        module, name = todo.pop()
        if module not in _sources():
            continue  # another package's function
        for nxt in _calls(module).get(name, ()):
            if nxt == goal:
                return True
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return False


def _named(pattern: re.Pattern[str]) -> set[Key]:
    """The functions (methods too) whose names match, found in the text."""
    found = set()
    for module, text in _sources().items():
        for name in re.findall(r"^\s*(?:async\s+)?def\s+(\w+)", text, re.M):
            if pattern.match(name):
                found.add((module, name))
    return found


def test_only_the_one_module_defines_a_delta_debugging_pass() -> None:
    assert (ONE, "ddmin") in _named(OWN)
    others = sorted(key for key in _named(OWN) if key[0] != ONE)
    assert not others, f"a delta-debugging pass outside {ONE}: {others}"


def test_every_shrinker_reaches_the_one_pass() -> None:
    named = {key for key in _named(SHRINKER) if key[0] != ONE}
    assert named >= ENTRY_POINTS  # the list of entry points is not stale
    astray = sorted(k for k in named - NOT_SHRINKERS.keys() if not _reaches(k, PASS))
    assert not astray, f"shrinkers that do not use {ONE}.ddmin: {astray}"
    assert not any(_reaches(k, PASS) for k in NOT_SHRINKERS), "a listed non-shrinker shrinks"


def _splices(node: ast.AST) -> bool:
    """``xs[:i] + xs[j:]`` (or with ``tuple(...)``/``list(...)`` around each)."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)):
        return False

    def cut(side: ast.expr, head: bool) -> str | None:
        if isinstance(side, ast.Call) and len(side.args) == 1:
            side = side.args[0]
        if not (isinstance(side, ast.Subscript) and isinstance(side.slice, ast.Slice)):
            return None
        s = side.slice
        bound, open_end = (s.upper, s.lower) if head else (s.lower, s.upper)
        return ast.dump(side.value) if bound is not None and open_end is None else None

    left, right = cut(node.left, True), cut(node.right, False)
    return left is not None and left == right


def test_no_function_outside_the_module_deletes_a_window_by_hand() -> None:
    maybe = [m for m, text in _sources().items() if m != ONE and SPLICE.search(text)]
    found = sorted(m for m in maybe for n in ast.walk(_tree(m)) if _splices(n))
    assert not found, f"a sequence spliced around a window (a deletion loop?) in {found}"


def test_the_splice_check_sees_the_old_loop_deletion() -> None:
    old = "def minimize(best, i, width):\n    return best.steps[:i] + best.steps[i + width :]\n"
    assert SPLICE.search(old) and any(_splices(n) for n in ast.walk(ast.parse(old)))
    fine = "def f(a, b, i):\n    return a[:i] + b[i:]\n"
    assert not any(_splices(n) for n in ast.walk(ast.parse(fine)))


# ------------------------------------------------------- the entry points, run


@pytest.fixture()
def passes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records each run of the one pass (its schedules are looked up at call time)."""
    seen: list[str] = []
    for name in ("_halving", "_windows"):
        real = getattr(shrinking, name)

        def spy(*args: object, _real=real, _name=name) -> object:  # type: ignore[no-untyped-def]
            seen.append(_name)
            return _real(*args)

        monkeypatch.setattr(shrinking, name, spy)
    return seen


def _failing_trace() -> tuple[Trace, ModelSystem]:
    from prunecheck.model.config import RuntimeConfig
    from prunecheck.model.events import (
        CallSpec,
        ExternalWrite,
        IssueBatch,
        ResultChunk,
        SystemPrompt,
        UserMessage,
    )
    from prunecheck.model.policies import builtin_policy

    events = (SystemPrompt(100), UserMessage(100), ExternalWrite("a"),
              IssueBatch((CallSpec("read_file", "a"), CallSpec("grep", "b")), 100),
              ExternalWrite("b"), ResultChunk("c1", 900), ResultChunk("c2", 10))  # fmt: skip
    trace = Trace("lowest_salience", RuntimeConfig(budget=1000, hard_ceiling=2000), events)
    policy = builtin_policy("lowest_salience")
    assert policy is not None
    return trace, ModelSystem(policy)


def test_a_trace_shrinks_through_the_one_pass(passes: list[str]) -> None:
    from prunecheck.sim.api.minimal import shrink_trace

    trace, system = _failing_trace()
    assert shrink_trace(trace, system).events < len(trace.events)
    assert passes and set(passes) == {"_halving"}


def test_a_search_run_is_polished_through_the_one_pass(passes: list[str]) -> None:
    from prunecheck.sim.drivers.polish import minimize, minimize_timed
    from prunecheck.sim.drivers.shape import Shape

    trace, system = _failing_trace()
    shape = Shape.for_budget(trace.config.budget)
    kept = minimize(trace.events, trace.config, system, shape)
    assert len(kept) < len(trace.events) and passes == ["_halving"] * len(passes) != []
    passes.clear()
    times = [float(i) for i in range(len(trace.events))]
    assert len(minimize_timed(trace.events, times, trace.config, system, shape)[0]) == len(kept)
    assert passes and set(passes) == {"_halving"}


def test_a_loop_schedule_shrinks_through_the_one_pass(passes: list[str]) -> None:
    from loops_fake import FakeAdapter, buggy

    from prunecheck.sim.drivers.action_search import search
    from prunecheck.sim.subjects.loops.scenarios import SCENARIOS, ScenarioClass
    from prunecheck.sim.subjects.loops.system import LoopSystem

    system = LoopSystem.of(FakeAdapter(), buggy, SCENARIOS[ScenarioClass.CANCEL])
    found = search(system, seed=1, max_examples=20, shrink_runs=0, polish_runs=4)  # fmt: skip
    assert found.found is not None and passes == ["_windows"]

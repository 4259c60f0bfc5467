"""One public map: every ``__all__`` name resolves, no module re-exports a
name it does not define, every import in the tree names the defining
module, and the top-level functions run the commands from Python."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import warnings
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest

import prunecheck
import prunecheck.sim

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"

#: The modules users import: the package, a policy author's, the runtime-side
#: gate, the System protocol's (once it exists), and every subpackage of the shell.
PUBLIC = [
    "prunecheck",
    "prunecheck.model",
    "prunecheck.guard",
    "prunecheck.runtime",
    *sorted(
        info.name
        for info in pkgutil.iter_modules(prunecheck.sim.__path__, "prunecheck.sim.")
        if info.ispkg
    ),
]


def _every_module() -> list[str]:
    names = ["prunecheck"]
    for info in pkgutil.walk_packages(prunecheck.__path__, "prunecheck."):
        if info.name.endswith(("__main__", "cage_worker")):
            continue  # run as programs, not imported
        names.append(info.name)
    return sorted(names)


MODULES = _every_module()


def _import(name: str) -> ModuleType:
    return importlib.import_module(name)


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_name_resolves(name: str) -> None:
    module = _import(name)
    exported = getattr(module, "__all__", None)
    assert exported is not None, f"{name} has no __all__"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a public name never warns
        missing = [n for n in exported if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ names what it lacks: {missing}"
    assert len(set(exported)) == len(exported), f"{name}.__all__ repeats a name"


@pytest.mark.parametrize("name", MODULES)
def test_every_all_name_of_every_module_resolves(name: str) -> None:
    module = importlib.import_module(name)
    missing = [n for n in getattr(module, "__all__", ()) if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ names what it lacks: {missing}"


@cache
def _tree(name: str) -> tuple[ast.Module, bool]:
    """The module's syntax tree, and whether it is a package."""
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.origin is not None, name
    path = Path(spec.origin)
    return ast.parse(path.read_text(encoding="utf-8")), path.name == "__init__.py"


_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def _statements(tree: ast.Module) -> Iterator[ast.AST]:
    """Every statement of ``tree``, at any depth (inside functions, classes,
    ``if``, ``try``, ``with``, ``match``...): the nodes of :func:`ast.walk`
    that can bind a name by def, class or assignment or import one, found
    without visiting the expressions, most of a tree's nodes."""
    todo: list[ast.AST] = [tree]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.stmt):
            yield node
        for field in _BLOCKS:
            todo.extend(getattr(node, field, ()))


@cache  # one walk per tree (_tree is cached): the import check asks thousands of times
def _defined(tree: ast.Module) -> frozenset[str]:
    """Names a module's own top level binds by def, class or assignment."""
    names: set[str] = set()
    for node in _statements(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            targets: list[ast.expr] = list(node.targets)
            for target in targets:
                for leaf in ast.walk(target):
                    if isinstance(leaf, ast.Name):
                        names.add(leaf.id)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return frozenset(names)


def _all_of(tree: ast.Module) -> list[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                value = ast.literal_eval(node.value)
                assert isinstance(value, list)
                return [str(v) for v in value]
    return []


@pytest.mark.parametrize("name", MODULES)
def test_no_module_re_exports_a_name_it_does_not_define(name: str) -> None:
    """A package's ``__init__`` and a public module of the map may gather
    other modules' names; any other module lists in ``__all__`` only what it
    defines."""
    tree, is_package = _tree(name)
    if is_package or name in PUBLIC:
        return
    foreign = sorted(set(_all_of(tree)) - _defined(tree))
    assert not foreign, f"{name} re-exports {foreign}: import them from where they are defined"


def _absolute(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    base = parts if is_package else parts[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _may_import(home: str, name: str) -> bool:
    """``from home import name`` names the defining module (or an export of a
    package or of a public module of the map, or a submodule)."""
    tree, is_package = _tree(home)
    if name in _defined(tree):
        return True
    if home in PUBLIC and name in _all_of(tree):
        return True
    return is_package and (
        name in _all_of(tree) or importlib.util.find_spec(f"{home}.{name}") is not None
    )


def _sources() -> list[tuple[str, Path]]:
    found = [(name, Path(importlib.util.find_spec(name).origin or "")) for name in MODULES]  # type: ignore[union-attr]
    for folder in ("tests", "benchmarks", "examples"):
        found += [(f"{folder}.{p.stem}", p) for p in sorted((ROOT / folder).rglob("*.py"))]
    return found


def test_every_import_in_the_tree_names_the_defining_module() -> None:
    wrong = []
    for module, path in _sources():
        is_package = path.name == "__init__.py"
        tree = _tree(module)[0] if module in MODULES else ast.parse(path.read_text("utf-8"))
        for node in _statements(tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            home = _absolute(module, node, is_package)
            if not home.startswith("prunecheck") or home == "prunecheck.sim.cli":
                continue  # prunecheck.sim.cli: the console script's main
            for alias in node.names:
                if not _may_import(home, alias.name):
                    wrong.append(f"{path.relative_to(ROOT)}:{node.lineno}: {home}.{alias.name}")
    assert not wrong, "imported from a module that does not define it:\n" + "\n".join(wrong)


def test_the_checker_catches_a_re_exported_import(tmp_path: Path) -> None:
    """The rule above fails on the pattern it forbids (0.2's model.runtime)."""
    assert not _may_import("prunecheck.model.runtime", "RuntimeConfig")
    assert _may_import("prunecheck.model.config", "RuntimeConfig")
    assert _may_import("prunecheck.model", "ContextView")  # a package's own export
    assert _may_import("prunecheck.sim", "drivers")  # a submodule


def test_the_model_exports_what_a_policy_author_needs() -> None:
    import prunecheck.model as model

    assert set(model.__all__) == {
        *("ContextView", "Message", "Role"),
        *("Evict", "Clear", "Summarize"),
        *("Policy", "as_policy", "BUILTINS", "builtin_policy"),
        *("PrunecheckError", "PolicyError", "PolicyTimeout", "ConfigError"),
        *("TraceError", "TranscriptError"),
    }
    assert dir(model) == sorted(model.__all__)
    for name in model.__all__:  # documented in the package's map
        assert f"``{name}``" in (model.__doc__ or ""), name


def test_top_level_exports_are_documented_in_its_map() -> None:
    for name in prunecheck.__all__:
        assert f"``{name}``" in (prunecheck.__doc__ or ""), name


def test_search_explore_replay_and_validate_from_python() -> None:
    found = prunecheck.search_policy("lowest_salience", max_examples=40, seed=1)
    assert isinstance(found, prunecheck.SearchResult) and found.found
    assert found.trace is not None
    replayed = prunecheck.replay_trace(found.trace)
    assert isinstance(replayed, prunecheck.ReplayResult)
    assert not replayed.safe
    assert f"verdict: {len(replayed.violations)} violation" in replayed.narrative
    assert {i.kind for i in replayed.violations} == {
        i.kind for i in found.incidents if i.is_violation
    }

    under_the_gate = prunecheck.replay_trace(found.trace, "unit_safe", gate="commit")
    assert under_the_gate.trace.policy == "unit_safe" and under_the_gate.safe

    explored = prunecheck.explore_policy("unit_safe", depth=3)
    assert isinstance(explored, prunecheck.ExploreResult)
    assert explored.counterexample is None and explored.states > 1

    clean = [{"role": "user", "content": "hi"}]
    orphan = [*clean, {"role": "tool", "tool_call_id": "c1", "content": "x"}]
    assert prunecheck.validate_request(clean, "openai") == ()
    (error,) = prunecheck.validate_request(orphan, "openai")
    assert isinstance(error, prunecheck.ProviderError) and error.kind == "result_without_call"


def test_replay_trace_reads_a_trace_file() -> None:
    replayed = prunecheck.replay_trace(CORPUS / "seed_parallel_batch.json")
    assert replayed.violations and replayed.trace.events


def test_framework_policy_is_importable_from_the_package() -> None:
    pytest.importorskip("autogen_core")
    policy = prunecheck.framework_policy("autogen", context="buffered", buffer_size=6)
    assert "autogen" in policy.name

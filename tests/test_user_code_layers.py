"""How user code is reached: the subjects' adapters → the runtimes under test,
never back; the drivers take a policy and import nothing from
the subjects; no import loop inside the subjects; the explorer does not import
the search; one module imports user files.

Imports are read from the source (every ``import``, also inside functions),
so a lazy import that hides a loop at run time still counts.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

import prunecheck.sim

SIM = Path(prunecheck.sim.__file__).resolve().parent
PREFIX = "prunecheck.sim."


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SIM).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return PREFIX + ".".join(parts) if parts else "prunecheck.sim"


@functools.cache  # the tree does not change during the session: each file parsed once
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports (absolute names; ``from X import y``
    counts X, and X.y when that is a module of sim)."""
    tree = _tree(path)
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                if _path_of(candidate) is not None:
                    found.add(candidate)
    return found


def _path_of(module: str) -> Path | None:
    if not module.startswith(PREFIX):
        return None
    rel = Path(*module[len(PREFIX) :].split("."))
    for path in (SIM / rel.with_suffix(".py"), SIM / rel / "__init__.py"):
        if path.is_file():
            return path
    return None


def _package(sub: str) -> dict[str, set[str]]:
    return {_module_name(p): _imports(p) for p in sorted((SIM / sub).rglob("*.py"))}


def _adapter(module: str) -> bool:
    """A module of the subjects other than the runtimes under test."""
    return module.startswith(PREFIX + "subjects") and not module.startswith(
        PREFIX + "subjects.runtimes"
    )


@pytest.mark.parametrize("sub", ["drivers", "subjects/runtimes"])
def test_drivers_and_runtimes_import_nothing_from_adapters(sub: str) -> None:
    upward = {
        mod: sorted(i for i in imports if _adapter(i)) for mod, imports in _package(sub).items()
    }
    assert {mod: found for mod, found in upward.items() if found} == {}


def test_the_explorer_does_not_import_the_search() -> None:
    imports = _package("drivers")[PREFIX + "drivers.explore"]
    assert PREFIX + "drivers.search" not in imports
    assert PREFIX + "drivers.found" in imports


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_loop_inside_the_subjects() -> None:
    assert _cycles(_package("subjects")) == []


def test_the_loop_finder_finds_a_loop() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


def _calls_file_import(path: Path) -> bool:
    """Whether ``path``'s code (not its strings: a script template may)
    imports a file by path."""
    if "spec_from_file_location" not in path.read_text(encoding="utf-8"):
        return False  # the attribute's name is in the source of any code that uses it
    tree = _tree(path)
    return any(
        isinstance(node, ast.Attribute) and node.attr == "spec_from_file_location"
        for node in ast.walk(tree)
    )


def test_user_files_are_imported_in_one_module() -> None:
    importers = sorted(_module_name(p) for p in SIM.rglob("*.py") if _calls_file_import(p))
    assert importers == [PREFIX + "subjects.user_code"]


def test_runtime_loading_lives_in_the_subjects() -> None:
    from prunecheck.model.errors import PolicyError
    from prunecheck.sim.subjects.loader import load_policy, load_runtime, load_system
    from prunecheck.sim.subjects.runtimes import judged

    assert not hasattr(judged, "load_runtime")
    runtime = load_runtime("runtime:guard:recency")
    assert runtime.name == "runtime:guard:recency"
    assert load_system("runtime:model:unit_safe").name == "runtime:model:unit_safe"
    with pytest.raises(PolicyError, match="names a runtime under test, not a policy"):
        load_policy("runtime:model:unit_safe")

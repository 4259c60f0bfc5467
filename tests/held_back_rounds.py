"""What every held-back round's test file shares (tests/test_user_agents_r34.py …
_r37.py, tests/test_held_back.py): a row's pytest parameter, and the fast twin's
checks, which read each module's source only (importing one builds framework
clients and costs seconds)."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

import pytest
from test_user_agents import Row


def top_level_names(tree: ast.Module) -> set[str]:
    """The functions, classes and assigned names a module defines at its top level."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def param(row: Row, folder: str) -> object:
    """``row`` as a pytest parameter, a strict xfail when it is wrong today."""
    marks = [pytest.mark.xfail(strict=True, reason=row.wrong_today)] if row.wrong_today else []
    return pytest.param(row, id=row.id.removeprefix(f"{folder}/"), marks=marks)


def assert_every_module_has_a_row(here: Path, folder: str, rows: Iterable[Row]) -> None:
    """Every module of the round's folder has a row, and every row a module."""
    on_disk = {p.name for p in here.glob("*.py") if p.stem != "__init__"}
    in_table = {row.spec.removeprefix(f"{folder}/").split(":")[0] for row in rows}
    assert on_disk == in_table


def assert_module_states_its_verdict(here: Path, folder: str, row: Row) -> None:
    """The row's module states its expected verdict, says it is held back, and
    defines the attribute the row names."""
    file, attr = row.spec.removeprefix(f"{folder}/").split(":")
    tree = ast.parse((here / file).read_text(encoding="utf-8"))
    doc = ast.get_docstring(tree) or ""
    assert "Expected (before running)" in doc, f"{file} does not state its expected verdict"
    assert "prunecheck not changed for it" in doc, f"{file} does not say it is held back"
    assert attr in top_level_names(tree), f"{file} defines no {attr}"

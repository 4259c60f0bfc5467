"""The documentation site: its generated reference pages match the code, and
its navigation names every page.

``docs/gen_cli.py`` writes ``docs/reference/cli.md`` from the argument parser
and ``docs/reference/incidents.md`` from ``IncidentKind``; these tests fail
when a flag, a command or an incident class changes and the committed page
was not regenerated (``make docs`` does it).  The examples on the pages run
in ``tests/test_docs_examples.py``.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

from prunecheck.model.incidents import IncidentKind
from prunecheck.sim.cli import build_parser
from prunecheck.sim.cli.commands import COMMANDS

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _gen_cli() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_cli", DOCS / "gen_cli.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_reference_pages_are_what_gen_cli_writes() -> None:
    for path, text in _gen_cli().pages().items():
        assert path.is_file(), f"{path} missing: run 'python docs/gen_cli.py'"
        assert path.read_text(encoding="utf-8") == text, (
            f"{path} is out of date: run 'python docs/gen_cli.py'"
        )


def test_the_check_mode_finds_a_stale_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gen = _gen_cli()
    stale = tmp_path / "reference" / "cli.md"
    stale.parent.mkdir()
    stale.write_text("# Command line\n", encoding="utf-8")
    monkeypatch.setattr(gen, "HERE", tmp_path)
    assert gen.main(["--check"]) == 1
    assert gen.main([]) == 0  # writes both pages
    assert gen.main(["--check"]) == 0


def test_the_cli_page_has_every_command_and_every_flag() -> None:
    page = (DOCS / "reference" / "cli.md").read_text(encoding="utf-8")
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    for name in COMMANDS:
        assert f"## `{name}`" in page
        section = page.split(f"## `{name}`", 1)[1].split("\n## `", 1)[0]
        for action in sub.choices[name]._actions:
            if action.help == argparse.SUPPRESS or isinstance(action, argparse._HelpAction):
                continue
            for option in action.option_strings:
                assert f"`{option}`" in section, f"{name}: {option} missing"


def test_the_incident_page_lists_every_class() -> None:
    page = (DOCS / "reference" / "incidents.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([A-Z_]+)` \| `([a-z_]+)` \|", page, flags=re.MULTILINE)
    assert rows == [(k.name, k.value) for k in IncidentKind]


def test_the_nav_names_every_page_and_only_pages_that_exist() -> None:
    config = (DOCS.parent / "mkdocs.yml").read_text(encoding="utf-8")
    named = set(
        re.findall(r'^\s*- (?:(?:"[^"\n]+"|[^:\n]+): )?([\w./-]+\.md)$', config, flags=re.MULTILINE)
    )
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert named == pages

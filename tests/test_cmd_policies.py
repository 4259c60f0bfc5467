"""``prunecheck policies`` and the examples in every command's --help."""

from __future__ import annotations

import argparse

import pytest

from prunecheck.model.policies import BUILTINS
from prunecheck.sim.cli.app import build_parser, main
from prunecheck.sim.cli.commands import COMMANDS


def test_policies_lists_every_builtin_with_its_description(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["policies"]) == 0
    out = capsys.readouterr().out
    for name in BUILTINS:
        line = next(line for line in out.splitlines() if line.strip().startswith(name + " "))
        assert len(line.split(name, 1)[1].strip()) > 20
    assert "Evict the lowest-salience messages first" in out
    assert "file.py:trim@openai" in out and "langchain:" in out


def test_every_command_help_has_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    registered = [name for name in COMMANDS if name in subparsers.choices]
    assert {"check", "regress", "baseline", "policies"} <= set(registered)
    for name in registered:
        assert main([name, "--help"]) == 0
        text = capsys.readouterr().out
        assert "example" in text.lower() and f"prunecheck {name}" in text, name

"""Inputs users trip over (issue 8, point 4): ``--format`` on every command
that takes a policy, a list function's own provider rules by default, one
default runtime and shape for search and check (and explore's reason)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from check_runs import QUICK_FIND
from timeline_sketch import timeline_sketched

from prunecheck.model.config import RuntimeConfig
from prunecheck.model.trace import loads
from prunecheck.sim.cli.app import build_parser, main
from prunecheck.sim.cli.sweep import grid
from prunecheck.sim.drivers.shape import Shape
from prunecheck.sim.subjects.policy_spec import list_format, with_format

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
KEEP_LAST = f"{EXAMPLES}/openai_keep_last.py:trim"
OPENAI_400 = (
    "Invalid parameter: messages with role 'tool'",
    "An assistant message with 'tool_calls'",
)


@pytest.fixture(autouse=True)
def _no_timeline_drawn() -> Iterator[None]:
    """The bundles written here are read for their trace, narrative or
    request, not their timeline's pixels (tests/timeline_sketch.py)."""
    with timeline_sketched():
        yield


def _bundle(folder: Path) -> tuple[str, str]:
    trace = loads((folder / "trace.json").read_text(), "trace.json")
    return str(trace.config.provider), (folder / "narrative.md").read_text()


@pytest.mark.parametrize("how", [["--format", "openai"], ["@openai"]])
def test_search_renders_an_openai_list_function_with_openai_rules(
    how: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = KEEP_LAST + how[0] if how == ["@openai"] else KEEP_LAST
    flags = [] if how == ["@openai"] else how
    assert (
        main(
            [
                "search",
                "--policy",
                spec,
                *flags,
                "--target",
                "provider_rejection",
                "--max-examples",
                "60",
                *QUICK_FIND,
                "--out",
                str(tmp_path),
            ]
        )
        == 1
    )
    assert "provider openai" in capsys.readouterr().out
    provider, narrative = _bundle(tmp_path)
    assert provider == "openai" and any(text in narrative for text in OPENAI_400)


def test_provider_flag_still_wins(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            [
                "search",
                "--policy",
                KEEP_LAST,
                "--format",
                "openai",
                "--provider",
                "anthropic",
                "--target",
                "provider_rejection",
                "--max-examples",
                "60",
                *QUICK_FIND,
                "--out",
                str(tmp_path),
            ]
        )
        == 1
    )
    capsys.readouterr()
    provider, narrative = _bundle(tmp_path)
    assert provider == "anthropic" and "tool_use" in narrative


def test_explore_and_check_take_format(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", "--policy", KEEP_LAST, "--format", "openai", "--depth", "6"]) == 1
    assert "provider openai" in capsys.readouterr().out
    # A spec that names its format gets its provider in check too.
    assert (
        main(
            [
                "check",
                KEEP_LAST + "@openai",
                "--levels",
                "0.6",
                "--seeds",
                "1",
                "--max-examples",
                "0",  # the suite finds it: the provider is the point, not the search
                "--check-at",
                "after_append",
            ]
        )
        == 1
    )
    assert "provider openai" in capsys.readouterr().out


def test_baseline_and_regress_take_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "b.json"
    small = ["--levels", "0.2", "--seeds", "1", "--horizon", "30", "--corpus", str(tmp_path)]
    assert (
        main(["baseline", "--out", str(out), "--policy", KEEP_LAST, "--format", "openai", *small])
        == 0
    )
    data = json.loads(out.read_text())
    assert data["policy"].endswith("@openai") and data["config"]["provider"] == "openai"
    assert (
        main(
            [
                "regress",
                "--baseline",
                str(out),
                "--policy",
                KEEP_LAST,
                "--format",
                "openai",
                "--corpus",
                str(tmp_path),
            ]
        )
        == 0
    )
    assert "changed: nothing (same policy source sha256:" in capsys.readouterr().out


def test_sweep_and_report_take_format() -> None:
    args = build_parser().parse_args(
        [
            "sweep",
            "--out",
            "x.jsonl",
            "--policy",
            KEEP_LAST,
            "--policy",
            "recency",
            "--format",
            "openai",
        ]
    )
    policies, runtime, *_ = grid(args)
    assert policies == [KEEP_LAST + "@openai", "recency"]
    assert {str(c.provider) for c in runtime} == {"openai"}
    report = build_parser().parse_args(["report", "--policy", KEEP_LAST, "--format", "openai"])
    assert isinstance(report, argparse.Namespace) and report.format == "openai"


@pytest.mark.parametrize(
    "command", ["check", "search", "explore", "sweep", "report", "baseline", "regress"]
)
def test_every_help_documents_format(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([command, "--help"]) == 0
    assert "--format {anthropic,openai}" in capsys.readouterr().out


def test_format_helpers() -> None:
    assert with_format("a.py:trim", "anthropic") == "a.py:trim@anthropic"
    assert with_format("a.py:trim@openai", "anthropic") == "a.py:trim@openai"
    assert with_format("recency", "openai") == "recency"
    assert list_format("langchain:strategy=last") == "openai"


def test_search_explore_and_check_share_the_default_runtime(
    capsys: pytest.CaptureFixture[str],
) -> None:
    parser = build_parser()
    for argv in (
        ["search", "--policy", "recency"],
        ["explore", "--policy", "recency", "--depth", "3"],
    ):
        args = parser.parse_args(argv)
        from prunecheck.sim.cli.driver_options import config_from_args

        assert config_from_args(args) == RuntimeConfig()  # check's default runtime
    # search's default shape is the one check's search uses: Shape.for_budget(budget).
    from prunecheck.sim.cli.driver_options import shape_from_args

    args = parser.parse_args(["search", "--policy", "recency"])
    assert shape_from_args(args, Shape.for_budget) == Shape.for_budget(RuntimeConfig().budget)
    assert main(["explore", "--help"]) == 0
    assert "but not the shape" in " ".join(capsys.readouterr().out.split())
    # ... and explore's output says so next to its shortest counterexample.
    assert main(["explore", "--policy", "lowest_salience", "--depth", "5"]) == 1
    out = capsys.readouterr().out
    assert "smaller than the one search and check draw from" in out
    assert "shortest counterexample (" in out

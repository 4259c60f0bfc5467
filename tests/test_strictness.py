"""The provider strictness matrix (issue 34): ``docs/reference/provider-strictness.md``
is generated from the histories of :mod:`prunecheck.sim.reports.strictness`,
rendered and validated per provider, and the committed page is what the code
writes now."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from prunecheck.model.provider import Provider, pairing_errors, render, validate
from prunecheck.model.provider.openai_responses import reasoning_record
from prunecheck.sim.api.providers import judgeable
from prunecheck.sim.reports import strictness
from prunecheck.sim.reports.repair_layers import LAYERS, available, repair
from prunecheck.sim.reports.strictness import HISTORIES, history, judge, main, providers

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "reference" / "provider-strictness.md"


REPAIRS = "## Framework repair layers"


@cache
def page() -> str:
    """The page without its framework repair section (which imports the
    frameworks, about 3 s of CPU: its tests are slow ones)."""
    return strictness.page(repairs=False)


needs_frameworks = pytest.mark.skipif(
    not available(), reason="the repair layers' frameworks (prunecheck[loops]) are not installed"
)


def test_the_committed_matrix_is_a_fresh_generation() -> None:
    committed = PAGE.read_text(encoding="utf-8")
    assert REPAIRS in committed
    assert committed[: committed.index(REPAIRS)].rstrip() + "\n" == page(), (
        "docs/reference/provider-strictness.md is out of date: run 'make docs'"
    )


@pytest.mark.slow
@needs_frameworks
def test_the_committed_page_is_a_fresh_generation() -> None:
    assert PAGE.read_text(encoding="utf-8") == strictness.page(), (
        "docs/reference/provider-strictness.md is out of date: run 'make docs'"
    )


def test_the_page_is_in_the_docs_navigation() -> None:
    assert "reference/provider-strictness.md" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")


def test_every_provider_is_a_column_and_every_history_a_row() -> None:
    text = page()
    header = next(line for line in text.splitlines() if line.startswith("| history |"))
    assert providers() == judgeable() and {Provider.OPENAI, Provider.ANTHROPIC} <= set(providers())
    assert all(f"`{p}`" in header for p in providers())
    for h in HISTORIES:
        assert f"| {h.title} |" in text and f"### {h.title}" in text


def test_the_issue_s_kinds_of_history_are_rows() -> None:
    keys = {h.key for h in HISTORIES}
    assert {"result_without_call", "call_without_result", "partial_batch", "cleared_result",
            "summary_for_unit", "whole_call_dropped"} <= keys  # fmt: skip


@pytest.mark.parametrize("h", HISTORIES, ids=lambda h: h.key)
def test_each_cell_is_the_provider_s_own_first_error(h: object) -> None:
    cells = judge(h)  # type: ignore[arg-type]
    text = page()
    for provider, cell in cells.items():
        messages = h.messages  # type: ignore[attr-defined]
        errors = validate(render(messages, provider), provider, stored=reasoning_record(messages))
        assert cell.error == (errors[0] if errors else None)
        assert pairing_errors(messages, provider)[:1] == errors[:1]
        if cell.error is not None:  # the page shows its exact text and location
            assert cell.error.text.replace("|", "\\|") in text
            assert f"`{cell.error.path}`" in text


def test_the_control_is_accepted_and_a_cut_unit_rejected_everywhere() -> None:
    assert all(c.accepts for c in judge(history("intact")).values())
    for key in ("result_without_call", "call_without_result", "partial_batch"):
        assert not any(c.accepts for c in judge(history(key)).values()), key
    # a repair that hides the cut passes every provider: the matrix says so
    assert all(c.accepts for c in judge(history("synthesized_result")).values())


@pytest.mark.slow
@needs_frameworks
def test_the_generator_writes_the_page(tmp_path: Path) -> None:
    out = tmp_path / "page.md"
    assert main(["--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == strictness.page()


@pytest.mark.slow
@needs_frameworks
def test_pydantic_ai_s_repair_hides_the_400_with_a_false_placeholder() -> None:
    layer = next(x for x in LAYERS if x.name == "pydantic-ai")
    done = repair(layer, history("partial_batch").messages, providers())
    assert done.synthesized and done.synthesized[0][0] == "c2"
    assert done.synthesized[0][1] == "The tool call was interrupted before a result was produced."
    assert not done.honest and "not run" in done.synthesized[0][2]
    assert all(done.before.values()) and not any(done.after.values())
    orphans = repair(layer, history("result_without_call").messages, providers())
    assert orphans.dropped_results == ("c1", "c2") and not orphans.honest


@pytest.mark.slow
@needs_frameworks
def test_the_agents_sdk_drops_calls_without_output_and_keeps_orphaned_outputs() -> None:
    layer = next(x for x in LAYERS if x.name == "OpenAI Agents SDK")
    done = repair(layer, history("call_without_result").messages, providers())
    assert done.dropped_calls == ("c1", "c2") and not done.honest
    assert not any(done.after.values())
    kept = repair(layer, history("result_without_call").messages, providers())
    assert not kept.changed and all(kept.after.values())

"""The page of a reproduction bundle (prunecheck.sim.evidence.page):
every step, the context after it, the prune, the request and the provider's
answer."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from prunecheck.model.model_system import ModelSystem
from prunecheck.model.policies import builtin_policy
from prunecheck.model.trace import Trace, loads
from prunecheck.sim.evidence.bundle import write_bundle
from prunecheck.sim.evidence.page import context_after

CORPUS = Path(__file__).parent / "corpus"


def _corpus(name: str) -> Trace:
    return loads((CORPUS / name).read_text(encoding="utf-8"), name)


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    out = tmp_path_factory.mktemp("pages")
    names = {"orphan": "orphan_in_flight_batch.json", "retry": "retry_duplicates_read.json"}
    return {
        key: (write_bundle(_corpus(name), out / key) / "index.html").read_text(encoding="utf-8")
        for key, name in names.items()
    }


def test_the_page_has_every_step_and_the_context_after_it(pages: dict[str, str]) -> None:
    trace = _corpus("orphan_in_flight_batch.json")
    html = pages["orphan"]
    steps = re.findall(r'<div class="step[^"]*" id="step-(\d+)">', html)
    assert steps == [str(i + 1) for i in range(len(trace.events))]
    policy = builtin_policy(trace.policy)
    assert policy is not None
    contexts = context_after(trace, ModelSystem(policy))
    sizes = re.findall(r"context after this step: (\d+) messages?, ([\d,]+) tokens", html)
    assert sizes == [(str(len(c)), f"{sum(m.tokens for m in c):,}") for c in contexts]


def test_the_page_shows_the_prune_and_the_violation(pages: dict[str, str]) -> None:
    html = pages["orphan"]
    assert "<strong>the prune:</strong> evicted" in html
    assert re.search(r'<div class="step bad" id="step-\d+">', html)
    assert 'class="violation">VIOLATION: ' in html
    assert "left the context" in html


def test_the_page_shows_the_request_and_the_provider_answer(pages: dict[str, str]) -> None:
    html = pages["retry"]
    assert "The provider answers HTTP 400:" in html
    assert "unexpected `tool_use_id` found in `tool_result` blocks" in html.replace("&#x27;", "'")
    assert "<summary>request.json</summary><pre>{" in html
    assert '<img src="timeline.png"' in html
    assert "<script" not in html and "http://" not in html and "https://" not in html

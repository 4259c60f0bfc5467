"""The "Deploy the commit gate" example (docs/how-to/deploy-guard.md) shows
the guard at work: its budget is crossed, and the reader sees every decision
the guard makes — defer, prune grown to whole units, a proposal shrunk,
spill past the hard ceiling, a unit brought back — and a history the
provider accepts.  (tests/test_docs_examples.py checks the output the page
shows; tests/test_install.py runs the page in the guard-only install.)"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from test_docs_examples import ALL, _folder, run_pycon, run_python

from prunecheck.guard import CommitGuard
from prunecheck.model.provider.rules import validate
from prunecheck.model.provider.vocabulary import Provider

PAGE = "docs/how-to/deploy-guard.md"


def _run_page(tmp_path: Path) -> dict[str, Any]:
    """The page's Python and pycon blocks, in order, in one namespace."""
    here = Path.cwd()
    os.chdir(_folder(tmp_path))  # store="spill.db" is relative
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    try:
        for block in ALL[PAGE][0]:
            if block.lang == "python" and block.marker is None:
                run_python(block, namespace)
            elif block.lang == "pycon" and block.marker is None:
                run_pycon(block, namespace)
    finally:
        os.chdir(here)
    return namespace


def test_the_example_crosses_its_budget_and_shows_every_decision(tmp_path: Path) -> None:
    names = _run_page(tmp_path)
    guard = names["guard"]
    assert isinstance(guard, CommitGuard)
    stats = guard.stats
    assert stats.checks >= 4 and stats.deferred >= 1 and stats.prunes >= 1
    assert stats.grown >= 1 and stats.shrunk >= 1  # the trimmer's cuts, made whole
    assert stats.spills >= 1 and stats.reinjections == 1 and stats.lost == 0
    assert stats.overruns == 0  # the example never needs to fail loudly
    assert guard.used <= guard.budget  # the last check brought it back under budget
    history = list(names["history"].values())
    assert len(history) < 10  # messages left the list
    assert validate(history, Provider.OPENAI) == []

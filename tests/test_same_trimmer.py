"""The same trimmer in reports/frameworks.md and reports/loops.md (issue 31):
each pair of :data:`~prunecheck.sim.reports.same_trimmer.SAME_TRIMMER` is the
same code, and the committed pages do give the verdicts the table says they
give, so the cross-reference each page prints is not stale."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from prunecheck.sim.reports.same_trimmer import SAME_TRIMMER, SameTrimmer, for_loop, for_policy
from prunecheck.sim.subjects.loops.scenarios import SCENARIOS, ScenarioClass

ROOT = Path(__file__).resolve().parent.parent


def _row(page: str, spec: str) -> list[str]:
    text = (ROOT / "reports" / page).read_text(encoding="utf-8")
    line = next(ln for ln in text.splitlines() if ln.startswith("|") and f"`{spec}`" in ln)
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _body(path: str, name: str) -> str:
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    fn = next(n for n in ast.walk(tree) if isinstance(n, ast.AsyncFunctionDef | ast.FunctionDef)
              and n.name == name)  # fmt: skip
    body = fn.body[1:] if isinstance(fn.body[0], ast.Expr) else fn.body  # without its docstring
    return textwrap.dedent("\n".join(ast.unparse(b) for b in body))


@pytest.mark.parametrize("same", SAME_TRIMMER, ids=[s.loop for s in SAME_TRIMMER])
def test_the_committed_pages_give_the_verdicts_the_table_says(same: SameTrimmer) -> None:
    alone = _row("frameworks.md", same.policy)
    before_invoke = alone[5]  # library, version, setting, after_append, after_batch, before_invoke
    assert before_invoke.replace("*", "").startswith(same.alone), alone
    loop = _row("loops.md", same.loop)
    titles = [s.title for s in SCENARIOS.values()]
    trim = loop[2 + titles.index(SCENARIOS[ScenarioClass.TRIM].title)]
    assert trim.replace("*", "").startswith(same.in_loop), loop
    assert same.alone != same.in_loop  # listed only where they differ


@pytest.mark.parametrize("same", SAME_TRIMMER, ids=[s.loop for s in SAME_TRIMMER])
def test_both_pages_check_the_same_trimmer(same: SameTrimmer) -> None:
    where, name = same.policy.split("processor=", 1)[1].rsplit(":", 1)
    agent_file = same.loop.removeprefix("loop:").rsplit(":", 1)[0]
    assert _body(where, name) == _body(agent_file, name)
    assert for_policy(same.policy) is same and for_loop(same.loop) is same
    assert for_policy(same.loop) is None and for_loop(same.policy) is None


def test_the_loops_page_names_the_other_verdict_where_they_differ() -> None:
    """A trim cell of an agent whose trimmer the frameworks page checks alone
    with another verdict says so, and the page's last section says why."""
    from loops_fake import FakeAdapter, careful

    from prunecheck.sim.api.loop_verdict import Cell, CellVerdict, LoopCheck
    from prunecheck.sim.reports.loops import Row, render
    from prunecheck.sim.subjects.loops.target import LoopTarget

    same = SAME_TRIMMER[0]
    target = LoopTarget(same.loop, "agent", careful, FakeAdapter())
    cells = tuple(Cell(s, CellVerdict.SAFE, None, 5, 5, 3, "") for s in SCENARIOS.values())
    row = Row(same.loop, "pydantic-ai", LoopCheck(target, cells, 1), "", {}, 1.0, False,
              "trimming")  # fmt: skip
    page = render([row], seed=1, max_examples=5)
    line = next(ln for ln in page.splitlines() if ln.startswith(f"| `{same.loop}`"))
    assert line.count(f"alone {same.alone} ([frameworks.md](frameworks.md)") == 1
    assert "## The same trimmer alone" in page and same.why in page
    other = Row("loop:examples/loops/other.py:agent", "pydantic-ai", LoopCheck(target, cells, 1),
                "", {}, 1.0, False, "trimming")  # fmt: skip
    assert "frameworks.md" not in render([other], seed=1, max_examples=5)

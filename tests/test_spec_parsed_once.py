"""A spec string is parsed in one place (issue 30): the subjects layer's
parser, :mod:`prunecheck.sim.subjects.policy_spec`.  Every other module asks
it (``parse_spec``, ``split_reference``, ``is_loop_spec`` …) instead of
splitting a spec at its colons or testing its prefix itself; a second parser
drifts from the first (two spellings accepted here and refused there).

The scan reads every module of the package: a call splitting a string at
``":"`` or testing a spec prefix (``"runtime:"``, ``"loop:"``,
``"observed:"``) outside the parser fails, unless :data:`NOT_SPECS` says
what else the string is.
"""

from __future__ import annotations

import ast
from pathlib import Path

from prunecheck.sim.subjects.loops.target import FRAMEWORKS
from prunecheck.sim.subjects.policy_spec import (
    LOOP_FRAMEWORKS,
    SpecKind,
    parse_spec,
)

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "prunecheck"
PARSER = PACKAGE / "sim" / "subjects" / "policy_spec.py"

_SPLITS = {"partition", "rpartition", "split", "rsplit"}
_PREFIX_TESTS = {"startswith", "removeprefix"}
_SPEC_PREFIXES = ("runtime:", "loop:", "observed:")

#: Module -> why its colon splits are not of a spec.
NOT_SPECS = {
    "sim/sweeps/dask_pool.py": "a scheduler address, host:port",
    "sim/reports/claims.py": "a verdict line, 'unsafe: ...'",
    "sim/subjects/blackbox/mcp_server.py": "the MCP server's --http address, host:port",
    "sim/subjects/blackbox/quiet.py": "a /proc/net/tcp line's address:port fields",
}


def _is_colon(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value == ":"


def _is_spec_prefix(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value in _SPEC_PREFIXES
    if isinstance(node, ast.Tuple):
        return any(_is_spec_prefix(e) for e in node.elts)
    return False


def _spec_parsing(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        name, args = node.func.attr, node.args
        if (name in _SPLITS and args and _is_colon(args[0])) or (
            name in _PREFIX_TESTS and args and _is_spec_prefix(args[0])
        ):
            found.append(f"{path.relative_to(PACKAGE).as_posix()}:{node.lineno}: .{name}()")
    return found


def test_only_the_parser_splits_a_spec() -> None:
    found = [
        hit
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != PARSER and path.relative_to(PACKAGE).as_posix() not in NOT_SPECS
        for hit in _spec_parsing(path)
    ]
    assert found == []


def test_the_scan_finds_a_second_parser(tmp_path: Path) -> None:
    """The scan is not vacuous: each way of parsing a spec by hand is caught."""
    (tmp_path / "x.py").write_text(
        "def f(spec):\n"
        "    head, _, tail = spec.partition(':')\n"
        "    where = spec.rpartition(':')[0]\n"
        "    return spec.startswith('runtime:'), spec.startswith(('x', 'loop:'))\n"
    )
    global PACKAGE
    saved, PACKAGE = PACKAGE, tmp_path
    try:
        hits = _spec_parsing(tmp_path / "x.py")
    finally:
        PACKAGE = saved
    assert sorted(h.rsplit(" ", 1)[1] for h in hits) == [
        ".partition()",
        ".rpartition()",
        ".startswith()",
        ".startswith()",
    ]


def test_every_exception_names_a_module_that_exists() -> None:
    for module in NOT_SPECS:
        assert (PACKAGE / module).is_file(), module


def test_the_parser_reads_loop_specs() -> None:
    """The loop harness's spellings are the parser's (one set of rules)."""
    named = parse_spec("loop:autogen:app/team.py:build")
    assert (named.kind, named.adapter, named.where, named.attr) == (
        SpecKind.LOOP,
        "autogen",
        "app/team.py",
        "build",
    )
    detected = parse_spec("loop:C:\\app\\agent.py:agent")
    assert (detected.adapter, detected.where, detected.attr) == ("", "C:\\app\\agent.py", "agent")
    module = parse_spec("loop:my_app.agent:agent")
    assert (module.where, module.is_file) == ("my_app.agent", False)
    assert tuple(FRAMEWORKS) == LOOP_FRAMEWORKS

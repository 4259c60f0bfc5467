"""A CI test that keeps a trimmer checked (the README's pytest example).

    pytest examples/test_trim_safety.py --prunecheck-out repro/

The keep-last-K trimmer fails with its minimal reproduction printed step by
step (and the bundle written to repro/test_keep_last_trim_is_safe/); the
commit-boundary trimmer passes.
"""

from pathlib import Path

HERE = Path(__file__).parent


def test_keep_last_trim_is_safe(prunecheck):
    prunecheck.assert_policy_safe(f"{HERE}/openai_keep_last.py:trim", format="openai")


def test_commit_boundary_trim_is_safe(prunecheck):
    prunecheck.assert_policy_safe(f"{HERE}/openai_commit_boundary.py:trim", format="openai")

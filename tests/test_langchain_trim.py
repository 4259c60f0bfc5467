"""LangChain's trim_messages as a list policy (skipped without the extra)."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path
from typing import Any

import pytest

from prunecheck import check_policy
from prunecheck.model.errors import PolicyError
from prunecheck.sim.subjects.langchain_trim import langchain_policy, make_trimmer, parse_settings
from prunecheck.sim.subjects.loader import load_local

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SMALL: dict[str, Any] = {"levels": (0.6,), "seeds": (1,), "max_examples": 30}


@pytest.fixture
def langchain() -> Any:
    return pytest.importorskip("langchain_core.messages")


def test_settings_parse_to_a_canonical_spec() -> None:
    settings = parse_settings(" end_on=human+tool, start_on=human,include_system=TRUE ")
    assert settings.spec() == (
        "langchain:strategy=last,start_on=human,end_on=human+tool,include_system=true"
    )
    assert parse_settings("counter=len,max=4").spec() == "langchain:strategy=last,counter=len,max=4"
    for bad, words in [
        ("strategy=middle", "strategy must be one of last, first"),
        ("start_on=user", "start_on names unknown value(s) ['user']"),
        ("max_tokens=5", "'max_tokens' is not a setting of langchain"),
        ("strategy=first,include_system=true", "only with strategy=last"),
    ]:
        with pytest.raises(
            PolicyError,
            match=words.replace("(", r"\(")
            .replace(")", r"\)")
            .replace("[", r"\[")
            .replace("]", r"\]"),
        ):
            parse_settings(bad)


def test_missing_extra_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "langchain_core.messages", None)
    with pytest.raises(PolicyError) as info:
        load_local("langchain:strategy=last")  # in-process: the patched modules apply
    assert "needs langchain-core, which is not installed" in info.value.rule
    assert "prunecheck[langchain]" in info.value.hint


def test_trimmer_returns_the_very_dicts_it_kept(langchain: Any) -> None:
    trim = make_trimmer(parse_settings("strategy=last,start_on=human"))
    messages = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "b"},
        {"role": "user", "content": "c"},
        {"role": "assistant", "content": "d"},
    ]
    sizes = {id(m): 10 for m in messages}
    kept = trim(messages, max_tokens=25, token_counter=lambda m: sizes[id(m)])
    assert kept == messages[3:] and all(a is b for a, b in zip(kept, messages[3:], strict=True))
    by_len = make_trimmer(parse_settings("counter=len,max=2"))(messages, 0, None)
    assert [m["content"] for m in by_len] == ["c", "d"]


@pytest.mark.parametrize(
    ("placements", "raw_examples"),
    [
        pytest.param(("after_append",), 0, id="after_append"),
        pytest.param(None, SMALL["max_examples"], id="every", marks=pytest.mark.slow),
    ],
)
def test_langchain_last_is_unsafe_and_safe_behind_the_commit_gate(
    langchain: Any, placements: tuple[str, ...] | None, raw_examples: int
) -> None:
    """At the strictest placement, unsafe from the suite alone (make test), and
    at every one, the search too (make test-all)."""
    spec = "langchain:strategy=last,start_on=human,end_on=human+tool,include_system=true"
    raw = check_policy(spec, placements=placements, **{**SMALL, "max_examples": raw_examples})
    assert not raw.safe and raw.reproduction is not None
    assert raw.policy == spec and raw.config.provider == "openai"
    assert "invalid prune" in raw.narrative
    assert check_policy(spec, gate="commit", placements=placements, **SMALL).safe
    assert langchain_policy("strategy=last").name == "langchain:strategy=last"


@pytest.mark.slow
def test_verdict_table_is_reproducible(langchain: Any, capsys: pytest.CaptureFixture[str]) -> None:
    runpy.run_path(str(EXAMPLES / "langchain_verdicts.py"), run_name="__main__")
    first = capsys.readouterr().out
    table = runpy.run_path(str(EXAMPLES / "langchain_verdicts.py"))["table"]()
    assert first.strip() == table.strip()
    assert first.count("| UNSAFE |") == 6 and first.count("| safe |") == 1

"""Bad input to the guard's Python API (issue 36): a harness name asked of
an install without the harness, a store's file mode, a conversation to
delete, a trimmer assigned after construction.  The guard is a library, not
a command: each misuse raises one exception whose message is one paragraph
naming the input, the rule and what to do, and changes nothing — no file
created, no trimmer replaced.  (The command line's bad-input suite is
tests/test_bad_inputs.py; the same paragraph for a command is its
``test_a_package_the_install_left_out_is_one_paragraph_naming_its_extra``.)"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

import prunecheck
from prunecheck.guard import CommitGuard, ListGuard, SpillStore


def _one_paragraph(error: BaseException) -> str:
    text = str(error)
    assert text and "\n" not in text and "Traceback" not in text
    return text


# ------------------------------------------------- an install without the harness
@pytest.mark.parametrize("name", ["check_policy", "list_policy", "replay_trace", "CheckResult"])
def test_a_harness_name_without_the_harness_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """As in the guard-only install (tests/test_install.py runs it there):
    the name is refused at import with the extra to install."""
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda n, *a: None if n == "hypothesis" else real(n, *a)
    )
    monkeypatch.delitem(vars(prunecheck), name, raising=False)  # not cached from an earlier use
    with pytest.raises(ModuleNotFoundError) as caught:
        exec(f"from prunecheck import {name}", {})
    assert _one_paragraph(caught.value) == (
        f"prunecheck.{name}: needs the package 'hypothesis', which is not installed (the base "
        "install, 'pip install prunecheck', is the commit guard alone). Hint: install the "
        "harness with: pip install 'prunecheck[harness]'"
    )
    assert caught.value.name == "hypothesis" and caught.value.__context__ is None
    assert name not in vars(prunecheck)  # nothing half-imported was cached


def test_what_the_base_install_has_needs_no_harness(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda *a: None)  # nothing is installed
    for name in ("validate_request", "ProviderError", "RuntimeConfig", "Trace"):
        monkeypatch.delitem(vars(prunecheck), name, raising=False)
        assert getattr(prunecheck, name) is not None
    assert prunecheck.validate_request([{"role": "user", "content": "hi"}], "openai") == ()


# ----------------------------------------------------------------- the store
@pytest.mark.parametrize("mode", [0o1000, -1, "0600", 384.0, True, None])
def test_a_store_mode_that_is_not_permission_bits_is_refused_and_no_file_made(
    tmp_path: Path, mode: Any
) -> None:
    with pytest.raises(ValueError) as caught:
        SpillStore(tmp_path / "spill.db", mode=mode)
    text = _one_paragraph(caught.value)
    assert text.startswith(f"mode ({mode!r}) must be permission bits from 0o000 to 0o777")
    assert "0o600" in text  # the hint: what to give
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("conversation", [None, 7, b"chat-1", ["chat-1"]])
def test_deleting_a_conversation_that_is_not_a_string_is_refused(conversation: Any) -> None:
    store = SpillStore(":memory:")
    store.put_many([], "chat-1")
    with pytest.raises(TypeError) as caught:
        store.delete_conversation(conversation)
    assert _one_paragraph(caught.value) == (
        f"conversation must be a string, got {type(conversation).__name__}"
    )


# ---------------------------------------------------- a trimmer assigned later
def _keep(view: object, need: int) -> list[str]:
    return []


@pytest.mark.parametrize("bad", [42, None, "keep_last"])
def test_a_non_trimmer_assigned_to_a_guard_is_refused_and_the_old_one_kept(bad: Any) -> None:
    guard = CommitGuard(_keep, budget=100)
    before = guard.trimmer
    with pytest.raises(TypeError) as caught:
        guard.trimmer = bad
    text = _one_paragraph(caught.value)
    assert text.startswith(f"{bad!r} is not a trimmer: a trimmer is a select(view, need) policy")
    assert "Hint:" in text and guard.trimmer is before


@pytest.mark.parametrize("bad", [42, None])
def test_a_non_callable_list_function_is_refused_naming_the_format(bad: Any) -> None:
    for guard in (
        CommitGuard(lambda messages: messages, format="openai", budget=100),
        ListGuard(lambda messages: messages, format="openai", budget=100),
    ):
        before = guard.trimmer
        with pytest.raises(TypeError) as caught:
            guard.trimmer = bad
        text = _one_paragraph(caught.value)
        assert text.startswith(f"{bad!r} is not a trimmer")
        assert "Hint:" in text and guard.trimmer is before


# ------------------------------------------------------------- the providers
@pytest.mark.parametrize(
    ("provider", "named"),
    [
        ("gpt-4", "'gpt-4' is not a provider whose rules prunecheck knows"),
        ("bedrock,,gemini", "'' is not a provider whose rules prunecheck knows"),
        (["gemini", 3], "3 is not a provider name"),
        (42, "42 is not a provider name nor a list of names"),
        (b"openai", "b'openai' is not a provider name nor a list of names"),
    ],
)
@pytest.mark.parametrize("make", ["CommitGuard", "ListGuard", "assigned"])
def test_a_provider_the_registry_does_not_know_is_refused_naming_the_known_ones(
    provider: Any, named: str, make: str
) -> None:
    """``provider=`` names the providers the guard previews a prune against:
    a name not in the registry is one paragraph naming it and every known
    name; an assignment refused keeps the providers the guard had."""
    guard = CommitGuard(lambda m: m, format="openai", budget=10, provider="openai")
    with pytest.raises(ValueError) as caught:
        if make == "CommitGuard":
            CommitGuard(lambda m: m, format="openai", budget=10, provider=provider)
        elif make == "ListGuard":
            ListGuard(lambda m: m, format="openai", budget=10, provider=provider)
        else:
            guard.providers = provider
    text = _one_paragraph(caught.value)
    assert text.startswith(f"provider={provider!r}: {named}")
    if "rules prunecheck knows" in named:  # an unknown name: every known one is listed
        from prunecheck.model.provider import CHECKED

        assert f"(one of {', '.join(p.value for p in CHECKED)})" in text
    assert "Hint: name the provider(s) your runtime sends to" in text
    assert guard.providers == ("openai",)

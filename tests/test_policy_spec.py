"""The one parser of policy specs (sim/subjects/policy_spec.py): every form,
valid and invalid, and the helpers the command line, sweeps and bundles use."""

from __future__ import annotations

from pathlib import Path

import pytest

from prunecheck.model.errors import PolicyError
from prunecheck.sim.subjects.policy_spec import (
    PolicySpec,
    SpecKind,
    list_format,
    parse_spec,
    parse_spec_or_none,
    policy_file,
    user_code_of,
    with_format,
)

# text, kind, where, attr, format, adapter, settings
VALID = [
    ("lowest_salience", SpecKind.BUILTIN, "", "", None, "", ""),
    ("unit_safe", SpecKind.BUILTIN, "", "", None, "", ""),
    ("mypkg.trim:select", SpecKind.ATTRIBUTE, "mypkg.trim", "select", None, "", ""),
    ("a.b:c", SpecKind.ATTRIBUTE, "a.b", "c", None, "", ""),
    ("a.b:Policy.select", SpecKind.ATTRIBUTE, "a.b", "Policy.select", None, "", ""),
    ("x.py:Cls", SpecKind.ATTRIBUTE, "x.py", "Cls", None, "", ""),
    ("policies/trim.py:trim", SpecKind.ATTRIBUTE, "policies/trim.py", "trim", None, "", ""),
    ("../up/p.py:select", SpecKind.ATTRIBUTE, "../up/p.py", "select", None, "", ""),
    (r"C:\policies\p.py:select", SpecKind.ATTRIBUTE, r"C:\policies\p.py", "select", None, "", ""),
    (r"C:\policies\p.py:trim@openai", SpecKind.LIST, r"C:\policies\p.py", "trim", "openai", "", ""),
    ("x.py:trim@openai", SpecKind.LIST, "x.py", "trim", "openai", "", ""),
    ("mypkg.trim:trim@anthropic", SpecKind.LIST, "mypkg.trim", "trim", "anthropic", "", ""),
    (
        "langchain:strategy=last,start_on=human",
        SpecKind.FRAMEWORK,
        "",
        "",
        None,
        "langchain",
        "strategy=last,start_on=human",
    ),
    ("autogen:context=buffered", SpecKind.FRAMEWORK, "", "", None, "autogen", "context=buffered"),
    ("autogen:", SpecKind.FRAMEWORK, "", "", None, "autogen", ""),
    # a setting's value may hold colons and slashes (a path to the user's object)
    (
        "pydantic-ai:processor=my/trim.py:keep",
        SpecKind.FRAMEWORK,
        "",
        "",
        None,
        "pydantic-ai",
        "processor=my/trim.py:keep",
    ),
    (
        "runtime:examples/agent_loop.py:NaiveLoop",
        SpecKind.RUNTIME,
        "examples/agent_loop.py",
        "NaiveLoop",
        None,
        "",
        "",
    ),
    ("runtime:mypkg.loop:Loop", SpecKind.RUNTIME, "mypkg.loop", "Loop", None, "", ""),
]


@pytest.mark.parametrize(("text", "kind", "where", "attr", "fmt", "adapter", "settings"), VALID)
def test_a_valid_spec_parses_to_its_parts(
    text: str, kind: SpecKind, where: str, attr: str, fmt: str | None, adapter: str, settings: str
) -> None:
    spec = parse_spec(text)
    assert spec == PolicySpec(text, kind, where, attr, fmt, adapter, settings)


@pytest.mark.parametrize(
    ("text", "inner_kind", "kind"),
    [
        ("runtime:guard:recency", SpecKind.BUILTIN, SpecKind.GUARD_RUNTIME),
        ("runtime:guard:trim.py:trim@openai", SpecKind.LIST, SpecKind.GUARD_RUNTIME),
        ("runtime:model:mypkg:select", SpecKind.ATTRIBUTE, SpecKind.MODEL_RUNTIME),
        ("runtime:guard:langchain:strategy=last", SpecKind.FRAMEWORK, SpecKind.GUARD_RUNTIME),
    ],
)
def test_a_wrapping_runtime_spec_parses_the_policy_it_wraps(
    text: str, inner_kind: SpecKind, kind: SpecKind
) -> None:
    spec = parse_spec(text)
    assert spec.kind is kind and spec.kind.is_runtime
    assert spec.inner is not None and spec.inner.kind is inner_kind
    assert "runtime:" + text.split(":", 2)[1] + ":" + spec.inner.text == text


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("no_such_policy", "neither a built-in policy nor of the form module:attr"),
        ("", "neither a built-in policy"),
        ("mypkg:", "needs both a module (or file) and an attribute"),
        (":select", "needs both a module (or file) and an attribute"),
        ("x.py:trim@openia", "list format 'openia' is unknown"),
        ("x.py:trim@", "list format '' is unknown"),
        ("runtime:", "must be runtime:FILE.py:CLASS"),
        ("runtime:loop.py", "must be runtime:FILE.py:CLASS"),
        ("runtime:guard:", "must be runtime:FILE.py:CLASS"),
        ("runtime:guard:no_such_policy", "neither a built-in policy"),
    ],
)
def test_an_invalid_spec_is_a_policy_error_naming_it(text: str, words: str) -> None:
    with pytest.raises(PolicyError) as raised:
        parse_spec(text)
    assert words in raised.value.paragraph()
    assert parse_spec_or_none(text) is None


def test_file_or_module_is_decided_by_one_rule() -> None:
    assert parse_spec("x.py:f").is_file and parse_spec("dir/x:f").is_file
    assert parse_spec(r"dir\x:f").is_file
    assert not parse_spec("pkg.mod:f").is_file
    assert parse_spec("runtime:loop.py:Loop").is_file


def test_tail_keeps_attribute_and_format_for_a_moved_file() -> None:
    spec = parse_spec("some/where/trim.py:trim@anthropic")
    assert "/tmp/copy.py" + spec.tail == "/tmp/copy.py:trim@anthropic"
    assert spec.reference == "some/where/trim.py:trim"


@pytest.mark.parametrize(
    ("text", "fmt", "expected"),
    [
        ("my_trim.py:trim", "openai", "my_trim.py:trim@openai"),
        ("mod:trim", "anthropic", "mod:trim@anthropic"),
        ("my_trim.py:trim@anthropic", "openai", "my_trim.py:trim@anthropic"),
        ("recency", "openai", "recency"),
        ("langchain:strategy=last", "openai", "langchain:strategy=last"),
        ("runtime:loop.py:Loop", "openai", "runtime:loop.py:Loop"),
        ("my_trim.py:trim", None, "my_trim.py:trim"),
        ("no_such_policy", "openai", "no_such_policy"),
    ],
)
def test_with_format(text: str, fmt: str | None, expected: str) -> None:
    assert with_format(text, fmt) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("my_trim.py:trim@anthropic", "anthropic"),
        ("mod:trim@openai", "openai"),
        ("autogen:context=buffered", "openai"),
        ("lowest_salience", None),
        ("mod:select", None),
        ("x.py:trim@bogus", None),
    ],
)
def test_list_format(text: str, expected: str | None) -> None:
    assert list_format(text) == expected


@pytest.mark.parametrize(
    ("text", "file"),
    [
        ("x.py:f", Path("x.py")),
        ("a/b.py:trim@openai", Path("a/b.py")),
        ("pkg.mod:f", None),
        ("recency", None),
        ("langchain:strategy=last", None),
        ("pydantic-ai:processor=my/trim.py:keep", None),
        ("runtime:loop.py:Loop", None),
        ("x.py:f@bogus", None),
    ],
)
def test_policy_file_is_a_users_file_only(text: str, file: Path | None) -> None:
    assert policy_file(text) == file
    assert (user_code_of(text) is not None) == (
        text in ("x.py:f", "a/b.py:trim@openai", "pkg.mod:f")
    )

"""The policy argument (sim/cli/policy_argument.py): every command takes
POLICY the same way, each kind of spec has one spelling, and the old
spellings still work with a one-line DeprecationWarning naming the new one
and the release it goes in."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from check_runs import QUICK_FIND

from prunecheck.model.errors import ConfigError
from prunecheck.sim.cli.app import build_parser, main
from prunecheck.sim.cli.policies import spellings
from prunecheck.sim.cli.policy_argument import REMOVED_IN, SPELLINGS, read_policy_argument

CORPUS = Path(__file__).resolve().parent / "corpus"
TRACE = str(CORPUS / "seed_parallel_batch.json")
LOOP = "examples/agent_loop.py"

# command, the words before POLICY, the words after it
COMMANDS = [
    ("check", [], []),
    ("search", [], []),
    ("explore", [], ["--depth", "2"]),
    ("replay", [TRACE], []),
    ("regress", ["--baseline", "b.json"], []),
    ("baseline", ["--out", "b.json"], []),
]
MANY = [("sweep", ["--out", "r.jsonl"]), ("report", ["--out", "rep"])]


def _parsed(argv: list[str]) -> argparse.Namespace:
    args = build_parser([argv[0]]).parse_args(argv)
    read_policy_argument(args)
    return args


@pytest.mark.parametrize(("command", "before", "after"), COMMANDS)
def test_every_command_takes_policy_as_a_positional_argument(
    command: str, before: list[str], after: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    args = _parsed([command, *before, "recency", *after])
    assert args.policy == "recency"
    assert capsys.readouterr().err == ""  # the canonical form warns of nothing


@pytest.mark.parametrize(("command", "before", "after"), COMMANDS)
def test_every_command_still_takes_the_deprecated_policy_option(
    command: str, before: list[str], after: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    args = _parsed([command, *before, "--policy", "recency", *after])
    assert args.policy == "recency"
    err = capsys.readouterr().err
    assert err == (
        f"DeprecationWarning: prunecheck {command}: --policy recency is deprecated and goes "
        f"in {REMOVED_IN}; write recency (the POLICY argument) instead.\n"
    )


@pytest.mark.parametrize(("command", "before", "after"), COMMANDS)
def test_both_forms_at_once_are_refused(
    command: str, before: list[str], after: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ConfigError) as raised:
        _parsed([command, *before, "recency", "--policy", "unit_safe", *after])
    assert "given twice" in raised.value.paragraph()
    assert "'recency'" in raised.value.paragraph() and "'unit_safe'" in raised.value.paragraph()


@pytest.mark.parametrize(("command", "before"), MANY)
def test_a_command_of_many_policies_takes_them_all_as_positional_arguments(
    command: str, before: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert _parsed([command, *before, "recency", "unit_safe"]).policy == ["recency", "unit_safe"]
    assert _parsed([command, *before]).policy == []
    assert capsys.readouterr().err == ""
    old = _parsed([command, *before, "--policy", "recency", "--policy", "unit_safe"])
    assert old.policy == ["recency", "unit_safe"]
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("DeprecationWarning: ")
    assert "write recency unit_safe (POLICY arguments) instead" in err
    with pytest.raises(ConfigError, match="two forms"):
        _parsed([command, *before, "recency", "--policy", "unit_safe"])


@pytest.mark.parametrize(
    ("argv", "spec", "new"),
    [
        (
            ["search", "--runtime", f"{LOOP}:NaiveLoop"],
            f"runtime:{LOOP}:NaiveLoop",
            f"the policy spec runtime:{LOOP}:NaiveLoop",
        ),
        (
            ["explore", "--runtime", "guard:lowest_salience", "--depth", "2"],
            "runtime:guard:lowest_salience",
            "the policy spec runtime:guard:lowest_salience",
        ),
        (
            ["search", "--runtime", "model:recency"],
            "runtime:model:recency",
            "the policy spec runtime:model:recency",
        ),
        (
            ["check", "--langchain", "strategy=last,start_on=human"],
            "langchain:strategy=last,start_on=human",
            "the policy spec langchain:strategy=last,start_on=human",
        ),
    ],
)
def test_an_old_spelling_reads_as_its_canonical_spec(
    argv: list[str], spec: str, new: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _parsed(argv).policy == spec
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"is deprecated and goes in {REMOVED_IN}; write {new} instead." in err


@pytest.mark.parametrize("command", ["check", "search", "baseline", "regress"])
def test_format_beside_one_policy_is_a_deprecated_spelling_of_its_suffix(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = {"baseline": ["--out", "b.json"], "regress": ["--baseline", "b.json"]}
    _parsed([command, *before.get(command, []), "my_trim.py:trim", "--format", "openai"])
    err = capsys.readouterr().err
    assert "--format openai is deprecated" in err
    assert "the spec ending in @openai (my_trim.py:trim@openai)" in err


def test_format_in_a_sweep_is_a_setting_not_a_spelling(capsys: pytest.CaptureFixture[str]) -> None:
    _parsed(["sweep", "--out", "r.jsonl", "my_trim.py:trim", "--format", "openai"])
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("argv", [["search"], ["explore", "--depth", "2"], ["check"]])
def test_a_command_that_needs_a_policy_says_so(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"prunecheck {argv[0]}: POLICY: is missing.")
    assert f"'prunecheck {argv[0]} lowest_salience'" in err


def test_the_old_and_new_spellings_find_the_same_violation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    quick = ["--max-examples", "30", "--seed", "2", *QUICK_FIND]
    new = ["search", "lowest_salience", *quick]
    old = ["search", "--policy", "lowest_salience", *quick]
    assert main(new) == 1
    found_new = capsys.readouterr()
    assert main(old) == 1
    found_old = capsys.readouterr()
    assert "DeprecationWarning" not in found_new.err
    assert found_old.err.startswith("DeprecationWarning: prunecheck search: --policy")

    def lines(out: str) -> list[str]:  # the same verdict, bar the time taken
        return [line.split("(")[0] for line in out.splitlines()]

    assert lines(found_new.out) == lines(found_old.out)


def test_policies_and_help_show_one_spelling_per_kind(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["policies"]) == 0
    out = capsys.readouterr().out
    assert spellings() in out
    for s in SPELLINGS:
        assert s.spec in out and s.example in out
    assert f"go in {REMOVED_IN}" in out and "--runtime guard:POLICY" in out
    assert main(["search", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "POLICY, the same in every command" in text
    assert "runtime:guard:POLICY" in text and f"Deprecated, going in {REMOVED_IN}" in text

"""The CI recipe ``examples/ci/prunecheck.yml`` (issue 23): a GitHub Actions
workflow that fails a pull request on a new violation and uploads the bundle.
Its every ``prunecheck`` command parses with the real argument parser, so a
renamed flag cannot leave the recipe behind."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from prunecheck.sim.cli.app import build_parser

RECIPE = Path(__file__).resolve().parent.parent / "examples" / "ci" / "prunecheck.yml"


def run_blocks(text: str) -> list[str]:
    """The shell text of every ``run:`` key (inline or ``|`` block), a tiny
    reading of the YAML subset workflows use."""
    lines = text.splitlines()
    blocks: list[str] = []
    for i, line in enumerate(lines):
        found = re.match(r"^(\s*)(?:- )?run:\s*(.*)$", line)
        if not found:
            continue
        indent, value = len(found.group(1)), found.group(2).strip()
        if value not in ("|", ">"):
            blocks.append(value)
            continue
        body = []
        for following in lines[i + 1 :]:
            if following.strip() and len(following) - len(following.lstrip()) <= indent:
                break
            body.append(following.strip())
        blocks.append("\n".join(body))
    return blocks


def commands(block: str) -> list[list[str]]:
    """Each command of a shell block, as words (continuations joined, redirections dropped)."""
    joined = re.sub(r"\\\n\s*", " ", block)
    out = []
    for line in joined.splitlines():
        words = shlex.split(line)
        if ">" in words:
            words = words[: words.index(">")]
        if words:
            out.append(words)
    return out


TEXT = RECIPE.read_text(encoding="utf-8")
PRUNECHECK = [c for b in run_blocks(TEXT) for c in commands(b) if c[0] == "prunecheck"]


def test_the_recipe_runs_check_and_regress_with_json_and_junit() -> None:
    assert [c[1] for c in PRUNECHECK] == ["check", "regress"]
    for words in PRUNECHECK:
        assert "--json" in words and "--junit" in words
    assert "--out" in PRUNECHECK[0]  # the bundle the upload step picks up
    assert re.search(r"^on:\n\s+pull_request:", TEXT, re.MULTILINE)


@pytest.mark.parametrize("words", PRUNECHECK, ids=[c[1] for c in PRUNECHECK])
def test_every_command_of_the_recipe_parses(words: list[str]) -> None:
    parser = build_parser([words[1]])
    args = parser.parse_args(words[1:])  # an unknown flag exits 2 here
    assert args.json is True and args.junit


def test_the_recipe_uploads_the_bundle_when_the_check_fails() -> None:
    uploads = [m.start() for m in re.finditer(r"uses: actions/upload-artifact@v\d+", TEXT)]
    assert len(uploads) == 2
    check = PRUNECHECK[0]
    bundle = check[check.index("--out") + 1]
    first_upload = TEXT[uploads[0] - 200 : TEXT.index("regress:")]
    assert "if: failure()" in first_upload and f"{bundle}/" in first_upload


def test_the_tiny_reader_sees_blocks_and_inline_runs() -> None:
    text = "steps:\n  - run: echo one\n  - run: |\n      prunecheck check x \\\n        --json\n"
    assert run_blocks(text) == ["echo one", "prunecheck check x \\\n--json"]
    assert commands(run_blocks(text)[1]) == [["prunecheck", "check", "x", "--json"]]

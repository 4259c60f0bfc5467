"""``baseline`` and ``regress`` run through the one orchestrator (issue 30):
``prunecheck.baseline_policy`` and ``regress_policy`` give the command
line's baseline file, comparison, status and current results byte for byte."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from prunecheck import BaselineRun, RegressResult, baseline_policy, regress_policy
from prunecheck.model.config import RuntimeConfig
from prunecheck.model.errors import ConfigError
from prunecheck.model.gates import Gate
from prunecheck.sim.api.baseline_file import read_baseline
from prunecheck.sim.cli.app import main

SUITE = ["--levels", "0.6", "--seeds", "1-3", "--horizon", "200"]


@pytest.fixture
def baselines(tmp_path: Path) -> tuple[Path, Path]:
    """One baseline written by the command line, one by the API, same suite."""
    cli, api, corpus = tmp_path / "cli.json", tmp_path / "api.json", tmp_path / "corpus"
    corpus.mkdir()
    argv = ["baseline", "--out", str(cli), "lowest_salience", "--gate", "commit"]
    assert main([*argv, "--corpus", str(corpus), *SUITE]) == 0
    run = baseline_policy(
        "lowest_salience",
        config=RuntimeConfig(gate=Gate.COMMIT),
        levels=(0.6,),
        seeds=(1, 2, 3),
        horizon=200,
        corpus=corpus,
        out=api,
    )
    assert isinstance(run, BaselineRun) and run.status == 0 and run.error is None
    return cli, api


def test_the_api_writes_the_command_lines_baseline(baselines: tuple[Path, Path]) -> None:
    cli, api = baselines
    assert cli.read_bytes() == api.read_bytes()
    assert read_baseline(str(api)).complete


def test_regress_from_python_is_the_command_lines_comparison(
    baselines: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cli, _ = baselines
    capsys.readouterr()
    current_cli, current_api = tmp_path / "now-cli.json", tmp_path / "now-api.json"
    argv = ["regress", "--baseline", str(cli), "--gate", "none", "--out", str(current_cli)]
    status = main(argv)
    printed = capsys.readouterr().out
    base = read_baseline(str(cli))
    result = regress_policy(cli, config=replace(base.config, gate=Gate.NONE), out=current_api)
    assert isinstance(result, RegressResult)
    assert status == result.status == 1 and result.regressed
    assert result.comparison.table() in printed
    assert current_cli.read_bytes() == current_api.read_bytes()
    unchanged = regress_policy(cli)
    assert (unchanged.status, unchanged.regressed) == (0, False)


def test_an_incomplete_baseline_is_refused_by_the_api_as_by_the_command_line(
    baselines: tuple[Path, Path], tmp_path: Path
) -> None:
    cli, _ = baselines
    text = cli.read_text().replace('"complete": true', '"complete": false')
    partial = tmp_path / "partial.json"
    partial.write_text(text)
    with pytest.raises(ConfigError, match="incomplete baseline"):
        regress_policy(partial)
    assert main(["regress", "--baseline", str(partial)]) == 2

"""matplotlib state is set only while the report draws (sim/reports/plotting.py)."""

from __future__ import annotations

from pathlib import Path

from prunecheck.sim.reports.plotting import STYLE, legend_line, pyplot, report_style, save


def test_the_report_style_holds_only_inside_its_block() -> None:
    plt = pyplot()
    before = {key: plt.rcParams[key] for key in STYLE}
    assert before["font.size"] != STYLE["font.size"]  # else the test could not fail
    with report_style():
        assert {key: plt.rcParams[key] for key in STYLE} == STYLE
    assert {key: plt.rcParams[key] for key in STYLE} == before


def test_pyplot_draws_on_agg_and_save_closes_the_figure(tmp_path: Path) -> None:
    plt = pyplot()
    assert plt.get_backend().lower() == "agg"
    fig, ax = plt.subplots()
    ax.legend(handles=[legend_line(color="#1f77b4", label="x")])
    save(fig, tmp_path / "x.png")
    assert (tmp_path / "x.png").read_bytes().startswith(b"\x89PNG")
    assert not plt.fignum_exists(fig.number)

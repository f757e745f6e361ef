"""The results notebooks run headless on a results tree and write their PNGs; damaged runs
are reported as skipped (with the reason), missing compare outputs as not found. The
notebooks only call seed.results and seed.plots: a few lines per cell, no plotting code."""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest
from tests.support.results_tree import BENCH, damage, make_run, make_tree

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))
import run_notebooks  # noqa: E402

MAX_CELL_LINES = 25


def _outputs(nb_path: Path) -> tuple[str, list[dict]]:
    nb = nbformat.read(nb_path, as_version=4)
    text, errors = [], []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                text.append(out["text"])
            if out.get("output_type") == "error":
                errors.append(out)
    return "".join(text), errors


@pytest.mark.parametrize("name", run_notebooks.DEFAULT_NOTEBOOKS)
def test_committed_notebooks_are_output_free_and_only_call_the_plots_module(name):
    nb = nbformat.read(REPO / "notebooks" / name, as_version=4)
    nbformat.validate(nb)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        assert cell.outputs == [] and cell.execution_count is None
        lines = cell.source.splitlines()
        assert len(lines) <= MAX_CELL_LINES, f"{name}: a cell of {len(lines)} lines: " \
            "figures belong in seed/plots, data in seed/results/"
        assert "matplotlib" not in cell.source and ".plot(" not in cell.source


def test_notebooks_plot_a_full_tree_and_report_skipped_runs(tmp_path):
    root = make_tree(tmp_path / "results")
    bad = make_run(root / BENCH / "seed" / "crashed", "seed", 7, 100.0)
    damage(bad, "truncated_row")
    nocfg = make_run(root / BENCH / "impala" / "lost", "impala", 8, 100.0)
    damage(nocfg, "no_config")
    plots = tmp_path / "plots"
    lines = []
    pngs = run_notebooks.run_notebooks(root, plots, echo=lines.append)
    names = {p.name for p in pngs}
    assert names == {"throughput_ratio.png", "throughput_runs.png", "fps_over_time.png",
                     "roofline_fraction.png", "sweep_toy_catch_compare_sweep.png",
                     f"reward_{BENCH}.png", f"diagnostics_{BENCH}.png"}
    assert all(p.stat().st_size > 5000 for p in pngs)
    for name in ("throughput.ipynb", "reward_curves.ipynb"):
        text, errors = _outputs(plots / name)
        assert errors == []
        assert f"skipped {bad}: {bad}/episodes.csv: line 50 has 3 fields" in text
        assert f"skipped {nocfg}: {nocfg}/config.json: missing" in text
        assert "4 run(s) found" in text
    text, _ = _outputs(plots / "throughput.ipynb")
    assert "not found" not in text and "not drawn" not in text
    text, _ = _outputs(plots / "reward_curves.ipynb")
    assert "not drawn" not in text


def test_throughput_degrades_without_compare_outputs(tmp_path):
    root = tmp_path / "results"
    for arch in ("seed", "impala"):
        make_run(root / BENCH / arch / "r0", arch, 0, 300.0)
    plots = tmp_path / "plots"
    pngs = run_notebooks.run_notebooks(root, plots, names=["throughput"], echo=lambda s: None)
    assert {p.name for p in pngs} == {"throughput_runs.png", "fps_over_time.png"}
    text, errors = _outputs(plots / "throughput.ipynb")
    assert errors == []
    for what in ("no compare.csv under", "throughput_ratio.png: not drawn: no compare with",
                 "no roofline", "no sweep.csv under"):
        assert what in text


def test_no_runs_is_a_one_line_error(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert run_notebooks.main(["--results", str(tmp_path / "empty")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("run_notebooks: error: no runs under") and "\n" not in err
    assert run_notebooks.main(["--results", str(tmp_path / "nope")]) == 1
    assert "does not exist" in capsys.readouterr().err


def test_missing_jupyter_packages_are_a_one_line_error(tmp_path, monkeypatch, capsys):
    make_run(tmp_path / "results" / BENCH / "seed" / "r0", "seed", 0, 100.0)
    monkeypatch.setitem(sys.modules, "nbclient", None)  # as if the extra were not installed
    assert run_notebooks.main(["--results", str(tmp_path / "results")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("run_notebooks: error: nbclient is not installed") and "\n" not in err
    assert "pip install -e '.[notebooks]'" in err

"""The results notebooks run headless on a results tree and write their PNGs; damaged runs
are reported as skipped (with the reason), missing compare outputs as not found."""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat

from test_results import BENCH, _damage, make_run, make_tree

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))
import build_notebooks  # noqa: E402
import run_notebooks  # noqa: E402


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


def test_committed_notebooks_are_output_free_and_match_the_builder():
    for name, build in build_notebooks.BUILDERS.items():
        committed = nbformat.read(REPO / "notebooks" / name, as_version=4)
        assert [c.source for c in committed.cells] == [c.source for c in build().cells], \
            f"notebooks/{name} is out of date: run python scripts/build_notebooks.py"
        for cell in committed.cells:
            if cell.cell_type == "code":
                assert cell.outputs == [] and cell.execution_count is None


def test_notebooks_plot_a_full_tree_and_report_skipped_runs(tmp_path):
    root = make_tree(tmp_path / "results")
    bad = make_run(root / BENCH / "seed" / "crashed", "seed", 7, 100.0)
    _damage(bad, "truncated_row")
    nocfg = make_run(root / BENCH / "impala" / "lost", "impala", 8, 100.0)
    _damage(nocfg, "no_config")
    plots = tmp_path / "plots"
    lines = []
    pngs = run_notebooks.run_notebooks(root, plots, echo=lines.append)
    names = {p.name for p in pngs}
    assert {"throughput_runs.png", "fps_over_time.png", "compare_fps.png",
            "roofline_fraction.png", "sweep_toy_catch_compare_sweep.png",
            f"reward_{BENCH}.png", f"diagnostics_{BENCH}.png"} <= names
    assert all(p.stat().st_size > 5000 for p in pngs)
    for name in ("throughput.ipynb", "reward_curves.ipynb"):
        text, errors = _outputs(plots / name)
        assert errors == []
        assert f"skipped {bad}: {bad}/episodes.csv: line 50 has 3 fields" in text
        assert f"skipped {nocfg}: {nocfg}/config.json: missing" in text
        assert "4 run(s) found" in text
    text, _ = _outputs(plots / "throughput.ipynb")
    assert "not found" not in text  # compare, roofline and sweep were all there


def test_throughput_degrades_without_compare_outputs(tmp_path):
    root = tmp_path / "results"
    for arch in ("seed", "impala"):
        make_run(root / BENCH / arch / "r0", arch, 0, 300.0)
    plots = tmp_path / "plots"
    pngs = run_notebooks.run_notebooks(root, plots, names=["throughput"], echo=lambda s: None)
    assert {p.name for p in pngs} == {"throughput_runs.png", "fps_over_time.png"}
    text, errors = _outputs(plots / "throughput.ipynb")
    assert errors == []
    for what in ("no compare.csv under", "no roofline", "no sweep.csv under"):
        assert what in text


def test_no_runs_is_a_one_line_error(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert run_notebooks.main(["--results", str(tmp_path / "empty")]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("run_notebooks: error: no runs under") and "\n" not in err
    assert run_notebooks.main(["--results", str(tmp_path / "nope")]) == 1
    assert "does not exist" in capsys.readouterr().err

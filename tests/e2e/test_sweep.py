"""`seed compare --sweep-network` end to end: a real sweep of two network sizes on Catch."""

import csv

import pytest

from seed.results.sweep import SIZE_COLUMNS
from seed.cli import main


@pytest.mark.slow
def test_sweep_csv_schema(tmp_path, capsys):
    out = tmp_path / "sw"
    rc = main(["compare", "--env", "toy:catch", "--actors", "1", "--envs-per-actor", "2",
               "--seconds", "2", "--mode", "serve", "--unroll-length", "5",
               "--sweep-network", "small,medium", "--logdir", str(out)])
    assert rc == 0, capsys.readouterr().out
    with open(out / "sweep.csv") as f:
        rows = list(csv.DictReader(f))
    assert [r["size"] for r in rows] == ["small", "medium"]
    assert set(SIZE_COLUMNS) <= set(rows[0])
    assert int(rows[1]["parameters"]) > int(rows[0]["parameters"])
    for r in rows:
        assert float(r["inf_cpu_us_per_sample_b1"]) > 0
        assert float(r["seed_fps"]) > 0 and float(r["impala_fps"]) > 0
    assert (out / "sweep.png").stat().st_size > 1000
    assert (out / "small" / "compare.json").exists()

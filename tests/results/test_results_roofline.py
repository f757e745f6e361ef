"""seed.results.roofline: a roofline file as a type; an old file read with its missing parts
absent, a newer one's unknown fields kept; the rows the terminal and the report share."""

from __future__ import annotations

import json

import pytest

from seed.results import files
from seed.results.roofline import Roofline, from_json, load_roofline, roofline_rows

OLD = {"env": "toy:catch", "network": "mlp", "config": {"actors": 2, "envs_per_actor": 4},
       "ceilings": {"seed_train": 1000.0, "seed_serve": 2500.0, "impala_train": 500.0,
                    "impala_serve": 800.0, "simulation_only": 9000.0},
       "simulation": {"cpu_s_per_frame": 2e-4, "frames_per_s": 9000.0, "processes": 2},
       "measured_at": "2026-12-01T10:20:30"}


def test_an_old_file_reads_with_what_it_lacks_absent(tmp_path):
    path = tmp_path / "roof.json"
    path.write_text(json.dumps(OLD))
    roof = load_roofline(path)
    assert roof.source == path and roof.agent == "vtrace" and roof.key() == (
        "toy:catch", "mlp", "vtrace")
    assert roof.bare_training is None and roof.seed_data_path is None and roof.turns() is None
    assert roof.ceiling("seed", "serve") == 2500.0 and roof.ceiling("seed", "nap") is None
    rows = {label: cells for label, *cells in roofline_rows([roof])}
    assert rows["measured"] == ["2026-12-01 10:20"]
    assert rows["shape"] == ["2 actors x 4 envs, unroll ?, train batch ?"]
    assert rows["simulation alone"] == ["200.0 us/frame; 9,000 frames/s with 2 processes"]
    assert rows["ceiling, SEED: serve / train"] == ["2,500 / 1,000"]
    assert rows["ceiling, IMPALA: serve / train"] == ["800 / 500"]
    assert "SEED data path alone" not in rows and "bare TensorFlow train step" not in rows
    text = roof.format()
    assert text.splitlines()[0].startswith("roofline toy:catch / mlp")
    assert "  ceiling, SEED: serve / train: 2,500 / 1,000" in text


def test_a_newer_files_fields_are_kept_and_written_back(tmp_path):
    data = {**OLD, "flops_per_frame": 1.5e6, "dtype": "bfloat16"}
    roof = from_json(data, tmp_path / "r.json")
    assert roof.extra == {"flops_per_frame": 1.5e6, "dtype": "bfloat16"}
    written = roof.to_json()
    assert written["flops_per_frame"] == 1.5e6 and written["ceilings"] == OLD["ceilings"]
    assert from_json(written, tmp_path / "r.json") == roof


def test_two_files_side_by_side_leave_a_row_neither_measured_out():
    a = Roofline("toy:catch", "mlp", {"seed_serve": 10.0}, measured_at="2026-12-01T10:20:30")
    b = Roofline("toy:catch", "mlp", {"seed_serve": 20.0},
                 bare_training={"wall_s_per_step": 0.04, "agent_over_bare": 0.5})
    rows = {label: cells for label, *cells in roofline_rows([a, b])}
    assert rows["measured"] == ["2026-12-01 10:20", "?"]
    assert rows["bare TensorFlow train step"] == ["-", "40.00 ms a step; agent at 0.50 of bare"]
    assert "SEED lock-step serve bound" not in rows


@pytest.mark.parametrize("text, says", [
    ("[1]", "expected a JSON object, got list"), ('{"env": "x"}', "has no 'ceilings' mapping"),
    ('{"ceilings": ', "not valid JSON")])
def test_a_foreign_or_damaged_file_is_one_line_naming_it(tmp_path, text, says):
    path = tmp_path / "roof.json"
    path.write_text(text)
    with pytest.raises(files.ResultsFileError) as e:
        load_roofline(path)
    assert str(e.value).startswith(f"{path}: ") and says in str(e.value)
    assert "\n" not in str(e.value)

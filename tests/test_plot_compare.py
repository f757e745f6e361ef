import csv
import json

from seed.bench.plot_compare import main, plot_compare
from seed.metrics.writer import METRICS_COLUMNS


def _run(dir_, fps):
    dir_.mkdir(parents=True)
    with (dir_ / "metrics.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(METRICS_COLUMNS)
        for i in range(1, 5):
            row = {c: "" for c in METRICS_COLUMNS}
            row.update(wall_time=i, env_steps=i * fps, env_frames=i * fps, fps=fps,
                       learner_steps=i)
            w.writerow([row[c] for c in METRICS_COLUMNS])


def test_plot_compare_writes_a_png_from_a_compare_dir(tmp_path):
    runs = [("seed-1", "seed", 300.0), ("impala-1", "impala", 100.0), ("seed-2", "seed", 280.0)]
    with (tmp_path / "compare.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["run", "arch", "fps", "run_dir"])
        for name, arch, fps in runs:
            _run(tmp_path / name, fps)
            w.writerow([name, arch, fps, str(tmp_path / name)])
    (tmp_path / "compare.json").write_text(json.dumps({"fps_ratio": 2.9, "mode": "serve"}))
    path = plot_compare(tmp_path)
    assert path == tmp_path / "compare.png"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 10_000


def test_plot_compare_on_a_dir_without_compare_csv_is_one_line(tmp_path, capsys):
    assert main([str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "has no compare.csv" in err and "Traceback" not in err

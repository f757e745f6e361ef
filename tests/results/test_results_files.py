"""seed.results.files: one result file read strictly, pandas parsing the CSV; whatever is
wrong with a file is one line naming it and, for a cell, its line and column."""

from __future__ import annotations

import numpy as np
import pytest

from seed.results import files
from seed.results.files import RunDirError

HEADER = "wall_time,env_frames,episode_return"


def _read(tmp_path, text: str | bytes, **kwargs):
    path = tmp_path / "metrics.csv"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return files.read_csv(path, ["wall_time", "env_frames"], RunDirError, **kwargs)


def test_values_are_read_as_python_reads_numbers(tmp_path):
    """Integer columns stay integers, others are floats as float() parses them: the
    figures a compare computed when it ran are the ones any later reader gets."""
    m = _read(tmp_path, "wall_time,env_steps,env_frames,fps,learner_fps,episodes,ret\n"
                        "1.0000000000000002,10,40,0.1,, 3 ,\n"
                        "2.5,20,80,0.30000000000000004,7e2,4,-1.25\n"
                        "3.5,30,90,inf,nan,5,-inf\n",
              optional=["parameter_pull_ms"])
    assert m["env_steps"].dtype == np.int64 and m["episodes"].dtype == np.int64
    assert m["wall_time"].tolist() == [float("1.0000000000000002"), 2.5, 3.5]
    assert m["fps"].tolist() == [0.1, float("0.30000000000000004"), float("inf")]
    assert np.isnan(m["learner_fps"].iloc[0]) and m["learner_fps"].iloc[1] == 700.0
    assert np.isnan(m["learner_fps"].iloc[2])  # "nan", as Python writes one, is no value
    assert m["ret"].iloc[1] == -1.25 and m["ret"].iloc[2] == float("-inf")
    assert list(m.columns)[-1] == "parameter_pull_ms" and m["parameter_pull_ms"].isna().all()


@pytest.mark.parametrize("text,message", [
    ("", "metrics.csv: empty (no header)"),
    ("  \n\n", "metrics.csv: empty (no header)"),
    (b"\xff\xfe\x00garbage\x00\x81", "metrics.csv: cannot be read (UnicodeDecodeError"),
    ("wall_time,episode_return\n1,2\n",
     "metrics.csv: missing column(s) env_frames (header is wall_time,episode_return)"),
    (HEADER + "\n", "metrics.csv: header only, no rows"),
    (HEADER + "\n1,2,3\n4,5\n",
     "metrics.csv: line 3 has 2 fields, the header has 3 (truncated or garbled row)"),
    (HEADER + "\n1,2,3\n\n4,5,6,7\n",  # a blank line still counts in the line number
     "metrics.csv: line 4 has 4 fields, the header has 3 (truncated or garbled row)"),
    (HEADER + "\n1,2,3\n4,x5,6\n", "metrics.csv: line 3, column env_frames: 'x5' is not a number"),
    (HEADER + "\n1,2,True\n", "metrics.csv: line 2, column episode_return: 'True' is not a number"),
    (HEADER + "\n1,2,3\n4,5,NA\n",
     "metrics.csv: line 3, column episode_return: 'NA' is not a number"),
    (HEADER + '\n1,2,"3\n', "metrics.csv: not valid CSV"),
])
def test_a_malformed_csv_is_one_line_naming_file_line_and_column(tmp_path, text, message):
    with pytest.raises(RunDirError) as e:
        _read(tmp_path, text)
    msg = str(e.value)
    assert msg.startswith(str(tmp_path / "metrics.csv")) and message in msg, msg
    assert "\n" not in msg


def test_missing_or_not_a_file(tmp_path):
    with pytest.raises(RunDirError, match="metrics.csv: missing$"):
        files.read_csv(tmp_path / "metrics.csv", [], RunDirError)
    (tmp_path / "metrics.csv").mkdir()
    with pytest.raises(RunDirError, match="metrics.csv: not a file"):
        files.read_csv(tmp_path / "metrics.csv", [], RunDirError)


def test_only_the_numeric_columns_must_be_numbers(tmp_path):
    path = tmp_path / "compare.csv"
    path.write_text("run,arch,fps,rc\nseed-1,seed,10.5,0\nimpala-1,impala,,timeout\n")
    df = files.read_csv(path, ["run", "fps"], files.ResultsFileError, numeric=("fps",))
    assert df["run"].tolist() == ["seed-1", "impala-1"] and df["rc"].tolist() == ["0", "timeout"]
    assert df["fps"].iloc[0] == 10.5 and np.isnan(df["fps"].iloc[1])


def test_header_only_allowed_gives_numeric_columns(tmp_path):
    df = _read(tmp_path, HEADER + "\n", allow_no_rows=True, optional=["episode_length"])
    assert len(df) == 0 and list(df.columns) == HEADER.split(",") + ["episode_length"]
    assert all(df[c].dtype == np.float64 for c in df.columns)


def test_read_json(tmp_path):
    path = tmp_path / "summary.json"
    with pytest.raises(RunDirError, match=r"summary.json: missing \(the run never ended\)$"):
        files.read_json(path, RunDirError, "the run never ended")
    path.write_text("{")
    with pytest.raises(RunDirError, match="summary.json: not valid JSON"):
        files.read_json(path, RunDirError)
    path.write_text('{"a": 1}')
    assert files.read_json(path, RunDirError) == {"a": 1}


def test_missing_root(tmp_path):
    with pytest.raises(files.ResultsError, match="does not exist"):
        files.check_root(tmp_path / "nope")
    (tmp_path / "f").write_text("")
    with pytest.raises(files.ResultsError, match="is not a directory"):
        files.check_root(tmp_path / "f")
    assert files.check_root(str(tmp_path)) == tmp_path

"""One result file read strictly, and the errors of the results package: every message is
one line naming the file (and, in a CSV, the line and column) and what is wrong with it."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

# Cells read as "no value": the writers leave a missing figure empty; "nan" is how Python
# writes one, as float() reads it.
_NO_VALUE = ["", "nan", "NaN"]


class ResultsError(ValueError):
    """Something under a results root cannot be read; the message is one line."""


class RunDirError(ResultsError):
    """A run directory that is partial or damaged."""


class ResultsFileError(ResultsError):
    """A compare/sweep/roofline/timeline file that is missing, empty or damaged."""


def load_all(root, finder, loader) -> tuple[list, list[tuple[Path, str]]]:
    """``loader`` over every file ``finder(root)`` finds: (loaded, [(file, reason)])."""
    loaded, skipped = [], []
    for p in finder(root):
        try:
            loaded.append(loader(p))
        except ResultsFileError as e:
            skipped.append((p, str(e)))
    return loaded, skipped


def write_rows(path: Path, rows: list[dict], columns: list[str]) -> None:
    """A CSV of ``rows`` in ``columns``: a missing figure empty, a float to 6 significant
    digits (what :func:`read_csv` reads back)."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(columns)
        for r in rows:
            w.writerow(["" if r.get(c) is None else
                        (f"{r[c]:.6g}" if isinstance(r[c], float) else r[c]) for c in columns])


def check_root(root) -> Path:
    """``root`` as a Path; ResultsError when it is missing or not a directory."""
    root = Path(root)
    if not root.exists():
        raise ResultsError(f"results root {root} does not exist")
    if not root.is_dir():
        raise ResultsError(f"results root {root} is not a directory")
    return root


def read_json(path: Path, error: type[ResultsError], what: str = ""):
    """A JSON file's value; ``error`` when it is missing (``what`` says what that means),
    unreadable or not JSON."""
    if not path.exists():
        raise error(f"{path}: missing" + (f" ({what})" if what else ""))
    try:
        return json.loads(path.read_text())
    except (OSError, UnicodeDecodeError) as e:
        raise error(f"{path}: cannot be read ({type(e).__name__}: {e})") from e
    except ValueError as e:
        raise error(f"{path}: not valid JSON ({e})") from e


def _text(path: Path, error: type[ResultsError]) -> str:
    if not path.exists():
        raise error(f"{path}: missing")
    if not path.is_file():
        raise error(f"{path}: not a file")
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise error(f"{path}: cannot be read ({type(e).__name__}: {e})") from e
    if not text.strip():
        raise error(f"{path}: empty (no header)")
    return text


def _row_lines(path: Path, text: str, error: type[ResultsError]) -> list[int]:
    """The line number of every non-blank row after the header; ``error`` at the first row
    whose field count is not the header's (pandas pads a short row with empty cells)."""
    reader = csv.reader(io.StringIO(text))
    try:
        width = len(next(reader))
        lines = []
        for row in reader:
            if not row:
                continue
            if len(row) != width:
                raise error(f"{path}: line {reader.line_num} has {len(row)} fields, the "
                            f"header has {width} (truncated or garbled row)")
            lines.append(reader.line_num)
    except csv.Error as e:
        raise error(f"{path}: not valid CSV (line {reader.line_num}: {e})") from e
    return lines


def read_csv(path, required: list[str], error: type[ResultsError], *,
             numeric: Collection[str] | None = None, optional: list[str] = (),
             allow_no_rows: bool = False) -> pd.DataFrame:
    """A CSV file parsed by pandas, then checked: every row has the header's field count,
    the ``required`` columns are there, there is a row (unless ``allow_no_rows``), and every
    cell of the ``numeric`` columns (None: every column) is a number or empty.

    A numeric column whose cells are all integers is int64, any other float64 (NaN where a
    cell is empty); values are parsed as Python's ``float()`` parses them. ``optional``
    columns the file lacks are added, all NaN. Anything wrong raises ``error`` naming the
    file and, for a cell, its line and column."""
    import pandas as pd  # here: a reader of JSON files alone (a roofline worker) needs none

    path = Path(path)
    text = _text(path, error)
    lines = _row_lines(path, text, error)
    try:
        df = pd.read_csv(io.StringIO(text), skipinitialspace=True, keep_default_na=False,
                         na_values=_NO_VALUE)
    except pd.errors.ParserError as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise error(f"{path}: not valid CSV ({first})") from e
    df.columns = [str(c).strip() for c in df.columns]
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise error(f"{path}: missing column(s) {', '.join(missing)} "
                    f"(header is {','.join(df.columns)[:120]})")
    if df.empty and not allow_no_rows:
        raise error(f"{path}: header only, no rows")
    for col in df.columns if numeric is None else [c for c in numeric if c in df.columns]:
        if df[col].dtype.kind in "iuf":
            continue
        # Text pandas did not take for numbers (True/False it reads as booleans: as text).
        cells = df[col].map(str, na_action="ignore")
        values = pd.to_numeric(cells.astype(object), errors="coerce").astype("float64")
        bad = values.isna() & df[col].notna()
        if bad.any():
            i = int(bad.to_numpy().argmax())
            raise error(f"{path}: line {lines[i]}, column {col}: "
                        f"{str(df[col].iloc[i]).strip()!r} is not a number")
        df[col] = values
    for col in optional:
        if col not in df.columns:
            df[col] = float("nan")
    return df

"""The report's one input that is not a run: ``references.yaml`` (per benchmark: thresholds,
goal, published references, typed by hand with their sources), and its section."""

from __future__ import annotations

from pathlib import Path

import yaml

from seed.report.text import heading
from seed.results.text import markdown_table

REFERENCES = "references.yaml"


class ReportError(ValueError):
    """The report cannot be written; the message is one line."""


def load_references(root: Path) -> dict:
    """``references.yaml``: per benchmark, ``thresholds`` (returns), optionally ``window``
    (episodes in the mean, default :data:`seed.report.learning.WINDOW`),
    ``evaluation_window`` (the same for
    evaluation envs' episodes, which are tabulated only where it is given) and
    ``references`` (each with ``what``, ``value``, ``unit``, ``source`` and optionally
    ``plot``, see :func:`reward_lines`); {} when absent."""
    path = root / REFERENCES
    if not path.exists():
        return {}
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as e:
        raise ReportError(f"{path}: not valid YAML ({str(e).splitlines()[0]})") from None
    if not isinstance(data, dict):
        raise ReportError(f"{path}: expected a mapping of benchmark -> entries")
    return data


def _frames_words(frames: int) -> str:
    """``1B``, ``250M``, ``50,000``: a reference's frames, short."""
    for scale, unit in ((10**9, "B"), (10**6, "M")):
        if frames >= scale:
            return f"{frames / scale:g}{unit}"
    return f"{frames:,}"


def reward_lines(bench: str, refs: dict) -> list[tuple[str, list[float]]]:
    """``(label, returns)`` of each published reference that gives a ``plot`` (``{returns:
    [200, 250] or 267.5, label: ..., frames: 1000000000}``: the returns to draw across the
    reward curves, and the frames the reference used where it trained for them), labelled
    ``<label>: 200, 250 after 1B frames``. ReportError (one line) on a malformed one."""
    lines = []
    for entry in refs.get("references") or []:
        plot = entry.get("plot") if isinstance(entry, dict) else None
        if plot is None:
            continue
        try:
            values = plot["returns"] if isinstance(plot["returns"], list) else [plot["returns"]]
            returns = [float(v) for v in values if not isinstance(v, bool)]
            label, frames = str(plot["label"]).strip(), plot.get("frames")
            ok = (returns and len(returns) == len(values) and label and set(plot) <= {
                "returns", "label", "frames"} and (frames is None or (
                    isinstance(frames, int) and not isinstance(frames, bool) and frames > 0)))
        except (TypeError, KeyError, ValueError, AttributeError):
            ok = False
        if not ok:
            raise ReportError(f"{REFERENCES}: {bench}: a reference's plot needs returns (a "
                              "number or a list of them), a label and optionally the frames "
                              "it used, as plot: {returns: [200, 250], frames: 1000000000, "
                              "label: IMPALA}")
        text = f"{label}: {', '.join(f'{v:g}' for v in returns)}"
        lines.append((text + (f" after {_frames_words(int(frames))} frames" if frames else ""),
                      returns))
    return lines


def section(bench: str, refs: dict) -> list[str]:
    entries = refs.get("references") or []
    head = [heading(bench, "published references"), ""]
    if not entries:
        return head + ["None recorded for this benchmark.", ""]
    return (head + markdown_table(["what", "value", "unit", "source"],
                                  [[e.get("what", ""), e.get("value", ""), e.get("unit", ""),
                                    e.get("source", "")] for e in entries]) + [""])

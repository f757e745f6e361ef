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
    ``references`` (each with ``what``, ``value``, ``unit``, ``source``); {} when absent."""
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


def section(bench: str, refs: dict) -> list[str]:
    entries = refs.get("references") or []
    head = [heading(bench, "published references"), ""]
    if not entries:
        return head + ["None recorded for this benchmark.", ""]
    return (head + markdown_table(["what", "value", "unit", "source"],
                                  [[e.get("what", ""), e.get("value", ""), e.get("unit", ""),
                                    e.get("source", "")] for e in entries]) + [""])

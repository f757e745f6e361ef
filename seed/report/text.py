"""The report's text: headings, paths, frames, spans, machines (the cell formats the result
types share are :mod:`seed.results.text`'s)."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

FIGURES = "report"  # folder beside REPORT.md, of the figures the report embeds


def rel(path, root: Path) -> str:
    return os.path.relpath(path, root)


def machine_text(machine: dict, device: str | None = None) -> str:
    """``2 cores, x86_64, no GPU; python 3.11.7, tensorflow-cpu 2.21.0, ...``."""
    accel = machine.get("accelerator") or device or "CPU"
    parts = [f"{machine.get('cpu_count', '?')} cores", str(machine.get("processor", "?")),
             "no GPU" if accel == "CPU" else accel]
    packages = machine.get("packages") or {}
    versions = [f"python {machine['python']}"] if machine.get("python") else []
    versions += [f"{k} {v}" for k, v in sorted(packages.items())]
    return ", ".join(parts) + ("; " + ", ".join(versions) if versions else "")


def frames_text(x) -> str:
    if x is None:
        return "-"
    return f"{x / 1e6:.2f}M" if x >= 1e6 else f"{x:,.0f}"


def span(values: list, fmt) -> str:
    """``median (min-max)`` of the values that exist; ``-`` for none."""
    present = [v for v in values if v is not None]
    if not present:
        return "-"
    s = pd.Series(present)
    text = fmt(float(s.median()))
    return text if len(present) == 1 else f"{text} ({fmt(float(s.min()))}-{fmt(float(s.max()))})"


def heading(bench: str, section: str) -> str:
    """``### atari_pong_vtrace throughput``: anchored ``#atari_pong_vtrace-throughput``."""
    return f"### {bench} {section}"


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"

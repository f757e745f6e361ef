"""How the report and the terminal write a figure: one place for the cell formats the result
types' rows and the report's sections share (``-`` where a figure was not measured)."""

from __future__ import annotations

import math


def num(x, fmt: str = ",.0f") -> str:
    """``x`` formatted by ``fmt``; ``-`` for None or NaN."""
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def us(seconds) -> str:
    """Seconds as microseconds, one decimal."""
    return num(None if seconds is None else 1e6 * seconds, ",.1f")


def ms(seconds) -> str:
    """Seconds as milliseconds, two decimals."""
    return num(None if seconds is None else 1e3 * seconds, ",.2f")


def markdown_table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A markdown table's lines."""
    return (["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
            + ["| " + " | ".join(map(str, r)) + " |" for r in rows])


def network_text(network: str, kwargs: dict | None) -> str:
    """``mlp hidden_sizes 64x64``: a network and its keyword arguments, short."""
    parts = [str(network or "?")]
    for k, v in sorted((kwargs or {}).items()):
        parts.append(f"{k} {'x'.join(map(str, v)) if isinstance(v, (list, tuple)) else v}")
    return " ".join(parts)

"""No figure of the suite's is typed by hand in the docs: README.md, results/README.md and
docs/*.md must not repeat a figure that results/REPORT.md's tables hold; they link the
report's section instead. A failure names the file, the line and the figure.

What counts as a figure, in the report and in the docs alike:

- a number written with at least three significant digits (257.85, 5,244, 871, 0.806, 3.43M,
  -20.72, both ends of 5.68M-7.61M): leading zeros do not count, nor the trailing zeros of a
  number without a decimal point (10,000 and 500K are round: budgets and settings, not
  measurements), while 10.00M counts four;
- or a decimal below 1 with two (0.92, -0.67): shares and ratios;

and none of these is one:

- a year (1900-2099 written without a comma) or a date or time of day (2026-12-06, 16:15);
- a number that is part of a name: run ids (s0-20261206), versions (2.21.0), arXiv ids,
  settings written as KEY=VALUE (T=20), sizes such as 2048x2048, paths;
- a value that a committed config (experiments/*.yaml, outside its comments) sets, such as the
  discount 0.99.

Numbers compare as written, without a sign: 3.43M is not 3.43, 5,244 is not 5244. Read from
the report: the body cells of its tables; header rows (thresholds such as "return 248") and the
published-references tables (others' figures, cited from results/references.yaml) are left
out. Read from a doc: everything but fenced code blocks, inline code, link targets and URLs,
and **one-off observations**: a blockquote (in a list item too) whose first words are the
label ``> One-off observation (DATE, MACHINE, LOAD):``, which may wrap (docs/design.md, "The
report is the record"), where a figure that no committed file holds may stand, with where it
came from. A blockquote that begins "One-off observation" without that label fails too.

The rule misses a figure typed with other digits than the report's (rounded: "about 3.4M" for
3.43M; or a percentage with two digits, "73%") and a sum or difference of report figures: those
are left to review.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

NUMBER = re.compile(
    r"(?<![\w.,/=#@+\-])[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?[MK%]?"
    r"(?![\w/]|[.,]\d|-\d)")
DATE_OR_TIME = re.compile(r"\d{4}-\d\d-\d\d|\d\d?:\d\d")
RANGE = re.compile(r"(?<![\w.,])(\d[\d,]*(?:\.\d+)?(?:[MK%]| s)?)-(?=\d)")  # 5.68M-7.61M
ONE_OFF = re.compile(r"One-off observation \(\d{4}-\d\d-\d\d[^,]*, [^,()]+, [^()]+\):")
PUBLISHED = re.compile(r"^#+ .* published references$")


def significant_digits(number: str) -> int:
    mantissa = re.split(r"[eE]", number.lstrip("+-").rstrip("MK%"))[0].replace(",", "")
    digits = mantissa.replace(".", "").lstrip("0")
    return len(digits if "." in mantissa else digits.rstrip("0"))


def is_figure(number: str) -> bool:
    """Whether a number, as a doc or the report writes it, is a figure (the module's rule,
    but for the config values)."""
    bare = number.lstrip("+-").rstrip("MK%").replace(",", "")
    if re.fullmatch(r"(19|20)\d\d", bare) and "," not in number:
        return False
    digits = significant_digits(number)
    below_one = "." in bare and "e" not in bare.lower() and float(bare) < 1
    return digits >= 3 or (digits == 2 and below_one)


def numbers_in(text: str) -> list[str]:
    """The numbers of a line of prose or a table cell, signs dropped, dates and times left out;
    both ends of a range (5.68M-7.61M, 1,081 s-2,024 s)."""
    text = RANGE.sub(r"\1 to ", DATE_OR_TIME.sub(" ", text))
    return [m.group().lstrip("+-") for m in NUMBER.finditer(text)]


def config_values(root: Path) -> set[str]:
    values = set()
    for path in sorted((root / "experiments").glob("*.yaml")):
        for line in path.read_text().splitlines():
            values.update(numbers_in(line.split("#")[0]))
    return values


def report_figures(report: str, settings: set[str] = frozenset()) -> set[str]:
    """The figures in the body cells of the report's tables, but its published references."""
    figures, published = set(), False
    lines = report.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("#"):
            published = bool(PUBLISHED.match(line))
        is_header = i + 1 < len(lines) and lines[i + 1].startswith("| ---")
        if published or not line.startswith("| ") or line.startswith("| ---") or is_header:
            continue
        figures.update(n for n in numbers_in(line) if is_figure(n) and n not in settings)
    return figures


def _name(doc: Path) -> Path:
    return doc.relative_to(ROOT) if doc.is_relative_to(ROOT) else doc


def doc_lines(doc: Path):
    """(line number, text) of the lines a figure must not be typed on: fenced code, inline
    code, link targets, URLs and one-off observations taken out."""
    lines = doc.read_text().splitlines()
    quoted = [line.lstrip().startswith(">") for line in lines]
    fenced = one_off = False
    for i, line in enumerate(lines):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        starts_quote = quoted[i] and (i == 0 or not quoted[i - 1])
        if starts_quote and line.lstrip().startswith("> One-off observation"):
            end = next((j for j in range(i, len(lines)) if not quoted[j]), len(lines))
            quote = " ".join(q.strip().lstrip(">").strip() for q in lines[i:end])
            assert ONE_OFF.match(quote), (
                f"{_name(doc)}:{i + 1}: a one-off observation's label is "
                "'> One-off observation (DATE, MACHINE, LOAD):'")
            one_off = True
        one_off = one_off and quoted[i]
        if one_off or re.match(r"\s*\[[^\]]+\]: ", line):
            continue
        text = re.sub(r"`[^`]*`", " ", line)
        text = re.sub(r"\]\([^)]*\)|<?https?://\S+", " ", text)
        yield i + 1, text


def repeated_figures(docs: list[Path], figures: set[str]) -> list[str]:
    """'file:line: figure' for each figure of ``figures`` a doc types outside the places it may."""
    return [f"{_name(doc)}:{number}: {n}" for doc in docs for number, text in doc_lines(doc)
            for n in numbers_in(text) if n in figures]


def _docs() -> list[Path]:
    return [ROOT / "README.md", ROOT / "results" / "README.md",
            *sorted((ROOT / "docs").glob("*.md"))]


def _figures() -> set[str]:
    return report_figures((ROOT / "results" / "REPORT.md").read_text(), config_values(ROOT))


def test_no_doc_repeats_a_figure_of_the_report():
    figures = _figures()
    assert len(figures) > 500  # the rule reads the tables at all
    repeated = repeated_figures(_docs(), figures)
    assert not repeated, (
        "figures typed by hand that results/REPORT.md holds (link the report's section, or "
        "label a one-off observation):\n" + "\n".join(repeated))


def test_the_rule_of_what_is_a_figure():
    line = ("257.85, 5,244 s, 871, 0.806, 3.43M, -20.72, 0.92, 10.00M, 108%, (5.68M-7.61M), "
            "(1,081 s-2,024 s); not: 0.5, 32, 100, 10,000, 500K, 1.5, 73%, 2026, "
            "2026-12-06 16:15-16:45, 2.21.0, s0-20261206, seed1-20261206, T=20, 2048x2048, v3, "
            "1e-5, issue14, x86-64, compare-dmlab/serve-20261206")
    assert [n for n in numbers_in(line) if is_figure(n)] == [
        "257.85", "5,244", "871", "0.806", "3.43M", "20.72", "0.92", "10.00M", "108%", "5.68M",
        "7.61M", "1,081", "2,024"]
    assert "0.99" in config_values(ROOT)  # the discount: a setting, not a figure
    assert "0.99" not in _figures()


def test_a_planted_figure_is_named_with_its_file_and_line(tmp_path):
    figures = _figures()
    report = (ROOT / "results" / "REPORT.md").read_text()
    # the SEED Breakout run's last-100 mean, read from the learning table
    row = next(line for line in report.splitlines()
               if line.startswith("| atari_breakout_vtrace/seed/") and " s |" in line)
    planted = row.split(" | ")[7]
    assert planted in figures and is_figure(planted)
    doc = tmp_path / "doc.md"
    doc.write_text(
        "# A doc\n"
        f"SEED ended at {planted} on Breakout.\n"                # 2: repeats it
        f"```\nseed report  # {planted}\n```\n"                   # 3-5: code
        f"The `{planted}` of a command, [a link](x.md#{planted}).\n"
        f"> One-off observation (2026-12-06, the 2-core VM, quiet): {planted} once,\n"
        f"> and {planted} again on its second line.\n"
        "\n"
        f"After the quote: {planted}.\n"                          # 10: repeats it
        f"> A plain quote with {planted}.\n"                      # 11: not labelled
        "\n"
        f"- an item, then its note:\n\n  > One-off observation (2026-12-06,\n"
        f"  > the 2-core VM, a test suite running): {planted}\n"
        "\n"
        f"| run | last 100 mean |\n| --- | --- |\n| s0 | {planted} |\n")  # 20: a table
    assert repeated_figures([doc], figures) == [
        f"{doc}:2: {planted}", f"{doc}:10: {planted}", f"{doc}:11: {planted}",
        f"{doc}:20: {planted}"]


def test_a_one_off_observation_without_its_label_is_refused(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text("> One-off observation: 871 s on some day.\n")
    with pytest.raises(AssertionError, match=r"doc\.md:1: .*\(DATE, MACHINE, LOAD\)"):
        repeated_figures([doc], {"871"})

"""Published returns (a reference's ``plot`` in references.yaml) drawn across a benchmark's
reward curves as labelled lines, with the frames each reference used."""

import pytest

from seed import report
from seed.plots.learning import reward_figure
from seed.report.references import reward_lines
from seed.results.run_dirs import load_run
from tests.results.test_report import _run


PLOTTED = {"references": [
    {"what": "a release", "value": "around 200 or 250", "unit": "return", "source": "its README",
     "plot": {"returns": [200, 250], "frames": 1_000_000_000, "label": "a release"}},
    {"what": "a human", "value": "267.5", "unit": "return", "source": "a table",
     "plot": {"returns": 267.5, "label": "human"}},
    {"what": "a paper, not drawn", "value": "17K", "unit": "frames/s", "source": "a paper"}]}


def test_published_returns_become_labelled_lines_across_the_reward_curves(tmp_path):
    lines = reward_lines("toy_catch", PLOTTED)
    assert lines == [("a release: 200, 250 after 1B frames", [200.0, 250.0]),
                     ("human: 267.5", [267.5])]
    fig = reward_figure([load_run(_run(tmp_path / "run", "seed", [0, 1, 1]))], lines=lines)
    for ax in fig.axes:  # against frames and against wall time
        black = [(line.get_label(), line.get_ydata()[0]) for line in ax.get_lines()
                 if line.get_color() == "black"]
        assert sorted(y for _, y in black) == [200, 250, 267.5]
        named = [label for label, _ in black if not label.startswith("_")]
        assert named == ["a release: 200, 250 after 1B frames", "human: 267.5"]
        assert set(named) <= {t.get_text() for t in ax.get_legend().get_texts()}


@pytest.mark.parametrize("plot", [{"returns": [], "label": "x"}, {"returns": [1]},
                                  {"returns": "high", "label": "x"},
                                  {"returns": 1, "label": "x", "frames": 1.5e9},
                                  {"returns": 1, "label": "x", "colour": "red"}])
def test_a_malformed_plot_is_refused_in_one_line(plot):
    refs = {"references": [{"what": "w", "value": "v", "unit": "u", "source": "s",
                            "plot": plot}]}
    with pytest.raises(report.ReportError) as e:
        reward_lines("toy_catch", refs)
    assert "toy_catch: a reference's plot needs returns" in str(e.value)
    assert "\n" not in str(e.value)


def test_the_report_draws_the_plot_of_each_reference_of_references_yaml(tmp_path):
    root = tmp_path / "results"
    _run(root / "toy_catch/seed/run-0", "seed", [0, 1, 1])
    entry = "    - {what: w, value: v, unit: u, source: s, plot: {returns: RETURNS, label: a}}\n"
    (root / "references.yaml").write_text(
        "toy_catch:\n  references:\n" + entry.replace("RETURNS", "5"))
    assert report.build(root, root / "REPORT.md") == []
    assert (root / "report" / "toy_catch_reward.png").stat().st_size > 10_000
    (root / "references.yaml").write_text(
        "toy_catch:\n  references:\n" + entry.replace("RETURNS", "five"))
    with pytest.raises(report.ReportError, match="toy_catch: a reference's plot needs returns"):
        report.build(root, root / "REPORT.md")

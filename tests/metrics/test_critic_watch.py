"""CriticWatch: a collapsed critic is said once, after five rows in a row, from 0.5M frames."""

import logging

from seed.metrics.critic_watch import COLUMN, CriticWatch, output_layer_column

RELU = ["dead_relu_0_conv", "dead_relu_1_fc"]


def _row(frames, ev, dead=0.1):
    return {"env_frames": frames, "explained_variance": ev, "dead_relu_1_fc": dead,
            "dead_relu_0_conv": 0.99}  # not the torso's output layer: never read


def test_five_flat_rows_after_half_a_million_frames(caplog):
    watch = CriticWatch(RELU)
    # Before 0.5M frames nothing is judged, however flat.
    assert [watch.check(_row(f, 0.0))[COLUMN] for f in (100_000, 499_999)] == [None, None]
    # Four flat rows, one that explains something (the streak starts again), then five.
    seen = [watch.check(_row(500_000 + i, ev))[COLUMN]
            for i, ev in enumerate([0.001, -0.01, 0.0, 0.005, 0.3,
                                    0.0, 0.0, 0.0, 0.0, -0.002, 0.4])]
    assert seen == [0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1]  # and it stays said
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "critic has collapsed at 500,009 frames" in warnings[0]
    assert "explained variance -0.0020" in warnings[0]


def test_a_dead_torso_alone_is_a_collapse_and_blanks_are_not_judged():
    watch = CriticWatch(RELU)
    assert watch.check({"env_frames": 600_000})[COLUMN] is None  # no train step logged
    seen = [watch.check(_row(600_000, 0.5, dead))[COLUMN]
            for dead in (0.71, 0.8, 0.9, 0.75, 0.7, 0.72, 0.72, 0.72, 0.72, 0.72)]
    assert seen == [0, 0, 0, 0, 0, 0, 0, 0, 0, 1]  # 0.7 itself is not above 0.7


def test_a_network_without_relu_columns_is_judged_by_its_value_alone():
    watch = CriticWatch([])
    assert [watch.check({"env_frames": 1e6, "explained_variance": ""})[COLUMN]
            for _ in range(6)] == [None] * 6
    assert [watch.check({"env_frames": 1e6, "explained_variance": 0})[COLUMN]
            for _ in range(5)][-1] == 1


def test_the_output_layer_is_the_last_relu_layer_called_whatever_the_order_given():
    # dead_relu_10 comes after dead_relu_2 in call order, though before it by name
    columns = ["dead_relu_10_fc2", "dead_relu_0_conv", "dead_relu_2_fc"]
    assert output_layer_column(columns) == "dead_relu_10_fc2"
    assert CriticWatch(columns).dead_column == "dead_relu_10_fc2"
    assert output_layer_column([]) is None and CriticWatch([]).dead_column is None

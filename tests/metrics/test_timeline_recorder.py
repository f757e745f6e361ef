"""The timeline recorders (seed/metrics/timeline.py): rings that keep the last rows, in order,
with their absolute indices, and files written whole."""

import json

import numpy as np

from seed.metrics import timeline as rec


def test_learner_ring_keeps_the_last_batches_and_their_requests_in_order(tmp_path):
    tl = rec.LearnerTimeline({"actors": 2}, max_batches=3, requests_per_batch=2)
    assert (tl.batch_capacity, tl.request_capacity) == (3, 6)
    for b in range(5):  # 5 batches of 2 requests: the first 2 batches fall out of the ring
        idx = [tl.request(a, 10 * a, b + 0.1 * a, b + 0.1 * a + 0.01) for a in (0, 1)]
        for i in idx:
            tl.mark(i, "submitted", b + 0.5)
        batch = tl.open_batch(b + 0.6)
        for k, field in enumerate(rec.BATCH_FIELDS[1:-1], 1):
            tl.mark_batch(batch, field, b + 0.6 + 0.01 * k)
        tl.close_batch(batch, idx, 8, b + 0.65)
        for i in idx:
            tl.mark(i, "yielded", b + 0.9)
    path = tl.write(tmp_path / rec.LEARNER_FILE)
    assert not list(tmp_path.glob("*.tmp*"))
    with np.load(path) as f:
        assert str(f["kind"]) == "seed-timeline-learner" and int(f["format"]) == rec.FORMAT
        meta = json.loads(str(f["meta"]))
        assert meta["actors"] == 2 and meta["cores"] >= 1
        assert f["batch_index"].tolist() == [2, 3, 4]
        assert f["batch_rows"].tolist() == [8, 8, 8]
        assert f["batch_t"][:, 0].tolist() == [2.6, 3.6, 4.6]
        np.testing.assert_allclose(f["batch_t"][0], [2.6, 2.61, 2.62, 2.63, 2.64, 2.65])
        assert f["request_index"].tolist() == [4, 5, 6, 7, 8, 9]
        assert f["request_batch"].tolist() == [2, 2, 3, 3, 4, 4]
        assert f["request_actor"].tolist() == [0, 1] * 3
        assert f["request_key"].tolist() == [0, 10] * 3
        t = f["request_t"]
        assert t[:, rec.IN].tolist() == [2.0, 2.1, 3.0, 3.1, 4.0, 4.1]
        assert t[:, rec.YIELDED].tolist() == [2.9, 2.9, 3.9, 3.9, 4.9, 4.9]
        assert np.isnan(t[:, rec.WOKEN]).all()  # never marked


def test_a_reused_request_row_starts_blank():
    tl = rec.LearnerTimeline({}, max_batches=1, requests_per_batch=1)
    first = tl.request(0, 0, 1.0, 1.1)
    tl.mark(first, "woken", 1.5)
    tl.close_batch(tl.open_batch(0.0), [first], 1, 5.0)
    second = tl.request(1, 4, 2.0, 2.1)  # the same ring row
    assert np.isnan(tl.request_t[0, rec.WOKEN]) and tl.request_batch[0] == -1
    assert second == 1 and tl.request_actor[0] == 1


def test_actor_ring_and_an_empty_actor(tmp_path):
    tl = rec.ActorTimeline(3, {"actor_splits": 1}, max_steps=4)
    tl.step(12, np.nan, np.nan, 0.5)  # the first request: no actions before it
    for i in range(1, 6):
        tl.step(12, i, i + 0.25, i + 0.5)
    with np.load(tl.write(tmp_path / "a.npz")) as f:
        assert str(f["kind"]) == "seed-timeline-actor"
        assert json.loads(str(f["meta"])) == {"actor_splits": 1, "task": 3}
        assert f["step_index"].tolist() == [2, 3, 4, 5]
        assert f["step_t"][:, 2].tolist() == [2.5, 3.5, 4.5, 5.5]
        assert f["step_key"].tolist() == [12] * 4
    with np.load(rec.ActorTimeline(0).write(tmp_path / "b.npz")) as f:
        assert f["step_t"].shape == (0, 3)


def test_write_into_a_missing_run_dir_warns_and_writes_nothing(tmp_path, caplog):
    tl = rec.ActorTimeline(0)
    assert tl.write_into(str(tmp_path / "elsewhere"), "x.npz") is None
    assert tl.write_into("") is None
    assert "not written" in caplog.text
    assert tl.write_into(str(tmp_path), "x.npz") == tmp_path / "x.npz"
    assert tl.write_into(str(tmp_path)) == tmp_path / rec.ACTOR_FILE.format(task=0)


def test_stamps_without_a_time_read_the_clock():
    tl = rec.LearnerTimeline({}, max_batches=2)
    before = tl.now()
    i = tl.request(0, 0, before)
    tl.mark(i, "yielded")
    b = tl.open_batch()
    tl.close_batch(b, [i], 1)
    after = tl.now()
    row = tl.request_t[0]
    assert before <= row[rec.DECODED] <= row[rec.YIELDED] <= after
    assert before <= tl.batch_t[0, 0] <= tl.batch_t[0, -1] <= after


def test_the_recorder_when_off_does_nothing_and_writes_nothing(tmp_path):
    off = rec.OFF
    assert off.now() == 0.0 and off.request(0, 0, 0.0) == -1 and off.open_batch() == -1
    off.mark(-1, "submitted")
    off.mark_batch(-1, "replied")
    off.close_batch(-1, [-1], 4)
    off.step(0, 0.0, 0.0)
    assert off.write_into(str(tmp_path)) is None and list(tmp_path.iterdir()) == []

"""seed timeline (seed/bench/timeline.py): a hand-built lock-step timeline whose segment
lengths are known, bad input named in one line, compare --timeline, and a real run."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from seed.bench import compare
from seed.bench import timeline as analysis
from seed.cli import main
from seed.config import make_config
from seed.metrics import timeline as rec
from seed.results.compare import RUN_COLUMNS
from seed.results.timeline import SEGMENTS, from_json

ROOT = Path(__file__).resolve().parents[2]
META = {"actors": 2, "envs_per_actor": 4, "actor_splits": 1, "inference_batch_size": 8,
        "lockstep": True, "train": False, "frames_per_step": 4, "cores": 2}
KEYS = {0: 0, 1: 4}  # each actor's stream: its first env id
T0 = 1000.0  # seconds, as perf_counter might read


def write_lockstep(run_dir: Path, full_batches: int = 41, meta: dict | None = None) -> None:
    """A lock-step run of 2 actors x 4 envs, in milliseconds:

    every batch: pre-inference 0.5, inference 3.0 (even batches) or 4.0 (odd), post-inference
    0.25, reply hand-off 0.1 to actor 0's stream and 0.2 to actor 1's, reply encode 0.05;
    both actors: reply transit 0.4, encode+send 0.3, request transit 0.5, decode 0.2,
    pre-submit 0.05; actor 0 simulates 2.0, actor 1 3.0, so actor 1 is always last and the
    next batch goes 0.05 after its request. Bookkeeping: from 0.3 after the reply is handed
    over, 1.0 long. After the full batches, one with actor 0's request alone (the stop).
    """
    run_dir.mkdir(parents=True, exist_ok=True)
    ms = 1e-3
    learner = rec.LearnerTimeline(meta or META)
    actors = {a: rec.ActorTimeline(a, {"actor_splits": 1}) for a in KEYS}
    sim, handoff = {0: 2.0, 1: 3.0}, {0: 0.1, 1: 0.2}

    def arrive(a, received, stepped, put):  # actor a's request reaches the learner
        actors[a].step(KEYS[a], received * ms, stepped * ms, put * ms)
        t_in = put + 0.5
        i = learner.request(a, KEYS[a], t_in * ms, (t_in + 0.2) * ms)
        learner.mark(i, "submitted", (t_in + 0.25) * ms)
        return i, t_in + 0.25

    t = T0 / ms
    pending = [arrive(0, math.nan, math.nan, t), arrive(1, math.nan, math.nan, t + 0.1)]
    for b in range(full_batches + 1):
        requests = [i for i, _ in pending]
        wake = max(s for _, s in pending) + 0.05
        infer0 = wake + 0.5
        infer1 = infer0 + (3.0 if b % 2 == 0 else 4.0)
        reply = infer1 + 0.25
        index = learner.open_batch(wake * ms)
        for field, t in (("infer_start", infer0), ("infer_end", infer1), ("reply_start", reply),
                         ("replied", reply + 0.3)):
            learner.mark_batch(index, field, t * ms)
        learner.close_batch(index, requests, 4 * len(requests), (reply + 1.3) * ms)
        if b == full_batches:
            break
        pending = []
        for a, i in zip(KEYS, requests):
            woken = reply + handoff[a]
            learner.mark(i, "woken", woken * ms)
            learner.mark(i, "yielded", (woken + 0.05) * ms)
            received = woken + 0.05 + 0.4
            stepped = received + sim[a]
            if b < full_batches - 1 or a == 0:  # actor 1's last request never arrives
                pending.append(arrive(a, received, stepped, stepped + 0.3))
    learner.write(run_dir / rec.LEARNER_FILE)
    for a, tl in actors.items():
        tl.write(run_dir / rec.ACTOR_FILE.format(task=a))


def _by_name(items):
    return {x["name"]: x for x in items}


def test_hand_built_timeline_gives_its_known_segments(tmp_path):
    write_lockstep(tmp_path)
    s = analysis.analyse(tmp_path, skip_first=0, skip_last=0).to_json()
    # 42 batches: 41 pairs of neighbours; the last pair holds actor 0 alone
    assert s["batches_recorded"] == 42 and s["cycles"] == 40
    assert s["skipped"] == {"not lock-step": 1, "incomplete stamps": 0, "no actor step": 0,
                            "out of order": 0}
    expected = {  # name: (mean, p50, p90) in ms; 20 cycles infer 3.0, 20 infer 4.0
        "pre-inference": (0.5, 0.5, 0.5), "inference": (3.5, 3.5, 4.0),
        "post-inference": (0.25, 0.25, 0.25), "reply hand-off": (0.2, 0.2, 0.2),
        "reply encode": (0.05, 0.05, 0.05), "reply transit": (0.4, 0.4, 0.4),
        "actor sim": (3.0, 3.0, 3.0), "actor encode+send": (0.3, 0.3, 0.3),
        "request transit": (0.5, 0.5, 0.5), "decode": (0.2, 0.2, 0.2),
        "pre-submit": (0.05, 0.05, 0.05), "batcher wake-up": (0.05, 0.05, 0.05)}
    segs = _by_name(s["segments"])
    assert list(segs) == [name for name, _ in SEGMENTS]
    for name, (mean, p50, p90) in expected.items():
        got = segs[name]
        assert (got["mean_ms"], got["p50_ms"], got["p90_ms"]) == \
            pytest.approx((mean, p50, p90), abs=1e-6), name
    # 8.5 ms cycles after an even batch, 9.5 after an odd one
    assert (s["interval"]["mean_ms"], s["interval"]["p50_ms"], s["interval"]["p90_ms"]) == \
        pytest.approx((9.0, 9.0, 9.5), abs=1e-6)
    assert s["check"]["sum_of_segments_ms"] == pytest.approx(9.0, abs=1e-6)
    assert s["check"]["interval_ms"] == pytest.approx(9.0, abs=1e-6)
    assert s["check"]["max_abs_difference_ms"] < 1e-6
    assert s["frames_per_s"] == pytest.approx(8 * 4 / 9.0e-3)
    off = _by_name(s["off_path"])
    assert off["gathering"]["mean_ms"] == pytest.approx(1.1)  # 1.0 more sim, 0.1 later reply
    assert off["post-reply bookkeeping"]["mean_ms"] == pytest.approx(1.0)
    # bookkeeping [reply + 0.3, reply + 1.3]; actor 1 simulates from reply + 0.65
    assert off["bookkeeping during sim"]["mean_ms"] == pytest.approx(0.65)
    assert off["inference thread busy"]["mean_ms"] == pytest.approx(0.5 + 3.5 + 0.25 + 1.3)
    assert (off["sim, every actor"]["mean_ms"], off["sim, every actor"]["p90_ms"]) == \
        pytest.approx((2.5, 3.0))
    during = s["bookkeeping_during_ms"]
    assert during["reply transit"] == pytest.approx(0.35)
    assert during["actor sim"] == pytest.approx(0.65)
    assert sum(during.values()) == pytest.approx(1.0)
    assert s["critical_actor_share"] == {1: 1.0}


def test_the_spans_chain_the_stamps_in_the_order_of_the_segments():
    assert list(analysis.SPANS) == [name for name, _ in SEGMENTS]
    spans = list(analysis.SPANS.values())
    assert spans[0][0] == "batch released" and spans[-1][1] == "next batch released"
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))


def test_the_summary_reads_back_as_it_was_written(tmp_path):
    write_lockstep(tmp_path)
    s = analysis.analyse(tmp_path, skip_first=0, skip_last=0)
    back = from_json(json.loads(json.dumps(s.to_json())), tmp_path / "timeline.json")
    assert back.segments == s.segments and back.off_path == s.off_path
    assert back.to_json() == json.loads(json.dumps(s.to_json()))
    assert back.format() == s.format()


def test_warm_up_and_the_end_are_left_out_by_default(tmp_path):
    write_lockstep(tmp_path)
    s = analysis.analyse(tmp_path).to_json()
    # 42 batches: the first ceil(4.2) = 5 and the last ceil(2.1) = 3 go; pairs of 5..38
    assert s["window"]["first"] == 5 and s["window"]["end"] == 39
    assert s["cycles"] == 33 and sum(s["skipped"].values()) == 0


def test_cli_prints_the_breakdown_and_writes_timeline_json(tmp_path, capsys):
    write_lockstep(tmp_path)
    assert main(["timeline", str(tmp_path), "--skip-first", "0", "--skip-last", "0"]) == 0
    out = capsys.readouterr().out
    assert "critical path" in out and "batcher wake-up" in out and "check:" in out
    assert "segments add up to 9.000 ms" in out and "actor 1 100%" in out
    saved = json.loads((tmp_path / "timeline.json").read_text())
    assert saved["cycles"] == 40 and saved["check"]["interval_ms"] == pytest.approx(9.0)


def _one_line_error(run_dir, *needles):
    with pytest.raises(analysis.TimelineError) as err:
        analysis.analyse(run_dir)
    message = str(err.value)
    assert "\n" not in message
    for needle in needles:
        assert needle in message, message
    return message


def test_bad_input_is_named_in_one_line(tmp_path, capsys):
    _one_line_error(tmp_path / "nope", "nope", "not a run directory")
    empty = tmp_path / "empty"
    empty.mkdir()
    _one_line_error(empty, rec.LEARNER_FILE, "missing", "--set timeline=true")

    run = tmp_path / "run"
    write_lockstep(run)
    learner = run / rec.LEARNER_FILE
    actor0 = run / rec.ACTOR_FILE.format(task=0)
    good, actor0_bytes = learner.read_bytes(), actor0.read_bytes()
    learner.write_text("not a zip")
    _one_line_error(run, str(learner), "not a SEED timeline")
    np.savez(learner, weights=np.zeros(3))  # someone else's npz (np.savez adds no suffix)
    _one_line_error(run, str(learner), "kind seed-timeline-learner", "kind: None")
    learner.write_bytes(actor0.read_bytes())  # an actor's file under the learner's name
    _one_line_error(run, str(learner), "kind: seed-timeline-actor")
    learner.write_bytes(good)
    with np.load(learner) as f:
        parts = {k: f[k] for k in f.files if k != "batch_t"}
    np.savez(learner, **parts)
    _one_line_error(run, str(learner), "damaged", "batch_t")
    learner.write_bytes(good)
    actor0.write_text("")
    _one_line_error(run, str(actor0), "not a SEED timeline")
    actor0.write_bytes(actor0_bytes)
    (run / rec.ACTOR_FILE.format(task=1)).unlink()  # one actor killed before it wrote
    _one_line_error(run, "no timeline-actor-1.npz", "served actor 1")
    for p in run.glob("timeline-actor-*.npz"):
        p.unlink()
    _one_line_error(run, "no timeline-actor-<task>.npz")

    split = tmp_path / "split"
    write_lockstep(split, meta={**META, "actor_splits": 2, "lockstep": False,
                                "inference_batch_size": 4})
    _one_line_error(split, "not lock-step", "actor_splits 2")

    assert main(["timeline", str(empty)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("seed: error: ") and "\n" not in err and str(empty) in err
    with pytest.raises(SystemExit):
        main(["timeline", str(run), "--skip-first", "0.7"])


def test_compare_timeline_records_and_breaks_down_the_seed_runs_only(tmp_path, monkeypatch):
    calls = []

    def fake_run_one(config_path, run_seconds, arch, run_dir, seconds, train, cores, echo,
                     budget, extra_args=()):
        calls.append((arch, tuple(extra_args)))
        if arch == "seed":
            write_lockstep(run_dir)
        else:
            run_dir.mkdir(parents=True)
        row = {c: None for c in RUN_COLUMNS}
        row.update(run=run_dir.name, arch=arch, rc=0, steady=True, fps=100.0,
                   run_dir=str(run_dir))
        return row

    monkeypatch.setattr(compare, "run_one", fake_run_one)
    config = make_config(env="toy:catch", actors=2, envs_per_actor=4, seconds=1.0)
    res = compare.run_compare(config, "serve", 1.0, tmp_path / "cmp", timeline=True,
                              echo=lambda *_: None)
    on = ("--set", "timeline=true")
    assert calls == [("seed", on), ("impala", ()), ("seed", on)]
    assert [r.get("timeline") is not None for r in res["runs"]] == [True, False, True]
    assert res["runs"][0]["timeline"]["cycles"] == 33
    assert (tmp_path / "cmp" / "seed-2" / "timeline.json").exists()
    assert "[seed-1] timeline of" in res["table"] and "[seed-2] timeline of" in res["table"]
    saved = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    # the default window: cycles after batches 5..37, 16 even (8.5 ms) and 17 odd (9.5 ms)
    assert saved["runs"][2]["timeline"]["check"]["interval_ms"] == \
        pytest.approx((16 * 8.5 + 17 * 9.5) / 33)

    calls.clear()  # without the flag: no extra flags, no breakdown
    res = compare.run_compare(config, "serve", 1.0, tmp_path / "plain", echo=lambda *_: None)
    assert calls == [("seed", ()), ("impala", ()), ("seed", ())]
    assert "timeline of" not in res["table"]
    assert main(["compare", "--env", "toy:catch", "--seconds", "1", "--timeline",
                 "--sweep-network", "small", "--logdir", str(tmp_path / "sweep")]) == 2


def test_a_real_seed_run_records_a_timeline_whose_segments_add_up(tmp_path):
    run_dir = tmp_path / "run"
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONUNBUFFERED="1")

    def seed_cli(*args):
        proc = subprocess.run([sys.executable, "-m", "seed.cli", *args], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        return proc.stdout

    seed_cli("train", "--env", "toy:catch", "--actors", "2", "--envs-per-actor", "2",
             "--frames", "6000", "--set", "train=false", "--set", "timeline=true",
             "--logdir", str(run_dir), "--no-progress")
    assert json.loads((run_dir / "config.json").read_text())["config"]["timeline"]
    for name in (rec.LEARNER_FILE, "timeline-actor-0.npz", "timeline-actor-1.npz"):
        assert (run_dir / name).exists(), name
    out = seed_cli("timeline", str(run_dir))
    assert "critical path" in out
    s = json.loads((run_dir / "timeline.json").read_text())
    assert s["cycles"] >= 100
    total = sum(seg["mean_ms"] for seg in s["segments"])
    assert total == pytest.approx(s["interval"]["mean_ms"], rel=1e-6)
    assert s["check"]["max_abs_difference_ms"] < 1e-6
    assert all(seg["mean_ms"] >= 0 for seg in s["segments"])

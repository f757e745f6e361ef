"""`make report`'s greedy episode: a strip of frames of the best run with a checkpoint here,
played again only when its checkpoint changed, kept when the checkpoint is gone, and a run
that cannot be played named in one line with the old strip left as it was."""

from __future__ import annotations

import csv
import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from seed import report
from seed.report import strips

CATCH = (5 * 26, 10 * 26 + 18)  # a 10x5 Catch board upscaled 26x, the return band above it
CATCH_STEPS = [0, 1, 3, 4, 5, 6, 8, 9]  # 8 of a 9-step episode's 10 frames: i * 9 / 7 rounded


def _copy(trained: Path, root: Path, name: str, returns: float | None = None) -> Path:
    """The trained run copied to ``root/toy_catch/seed/name``, every training episode's
    return set to ``returns`` where given (so that the runs rank as a test needs)."""
    d = root / "toy_catch" / "seed" / name
    shutil.copytree(trained, d, ignore=shutil.ignore_patterns("eval.csv", "tb"))
    if returns is not None:
        with (d / "episodes.csv").open(newline="") as f:
            rows = list(csv.DictReader(f))
        for r in rows:
            r["episode_return"] = returns
        with (d / "episodes.csv").open("w", newline="") as f:
            w = csv.DictWriter(f, list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    return d


@pytest.fixture
def counted(monkeypatch):
    """Each run strips.update played, by its path."""
    played = []
    real = strips.play

    def play(run, *args):
        played.append(run.path)
        return real(run, *args)

    monkeypatch.setattr(strips, "play", play)
    return played


def _record(root: Path) -> dict:
    return json.loads((root / "report" / "toy_catch_play.json").read_text())


def test_the_strip_is_played_once_per_checkpoint_and_kept_without_one(trained_catch, tmp_path,
                                                                        counted):
    from PIL import Image

    from seed import evaluate
    from seed.runtime import checkpoint
    root = tmp_path / "results"
    run = _copy(trained_catch, root, "run")
    out = root / "REPORT.md"
    assert report.build(root, out) == [] and counted == [run]
    png = root / "report" / "toy_catch_play.png"
    record = _record(root)
    data = (run / "checkpoint.npz").read_bytes()
    assert record["checkpoint"] == {"sha256": hashlib.sha256(data).hexdigest(),
                                    "bytes": len(data)}
    _, counters = checkpoint.load(run)
    alone = evaluate.evaluate(run, episodes=1, seed=0, eval_csv=False)
    assert record["run"] == "toy_catch/seed/run" and record["seed"] == 0
    assert record["trained_frames"] == counters["env_steps"]  # Catch: one frame a step
    assert record["episode_return"] == alone["mean_return"] in (-1.0, 1.0)
    assert record["episode_length"] == 9 and record["steps"] == CATCH_STEPS
    with Image.open(png) as im:
        w, h = CATCH
        assert im.size == (8 * w + 7 * strips.GAP, h + strips.LABEL)
        pixels = np.asarray(im.convert("RGB"))
    for i in range(1, 8):  # the gaps between 8 frames, and a frame's board after each
        gap = pixels[:, i * (w + strips.GAP) - strips.GAP:i * (w + strips.GAP)]
        assert (gap == strips.GAP_COLOUR).all()
        assert pixels[18:h, i * (w + strips.GAP):(i + 1) * w + i * strips.GAP].max() == 255
    assert png.stat().st_size < 300_000
    text = out.read_text()
    assert "![toy_catch: frames of one greedy episode](report/toy_catch_play.png)" in text
    assert (f"One greedy episode of `toy_catch/seed/run` (its checkpoint at "
            f"{counters['env_steps']:,} frames trained, sha256 {record['checkpoint']['sha256'][:12]}"
            f", eval seed 0): return {alone['mean_return']:g} over 9 steps; frames at steps "
            "0, 1, 3, 4, 5, 6, 8, 9,") in text
    assert "Not the benchmark's best run" not in text

    # Nothing changed: nothing played, the same report.
    mtime = png.stat().st_mtime_ns
    assert report.build(root, out) == [] and counted == [run]
    assert png.stat().st_mtime_ns == mtime and out.read_text() == text

    # A new checkpoint (more frames trained): played again.
    state, counters = checkpoint.load(run)
    checkpoint.save(run, state, {**counters, "env_steps": counters["env_steps"] + 100})
    report.build(root, out)
    assert counted == [run, run]
    assert _record(root)["checkpoint"]["sha256"] == hashlib.sha256(
        (run / "checkpoint.npz").read_bytes()).hexdigest()
    assert _record(root)["trained_frames"] == counters["env_steps"] + 100
    text = out.read_text()

    # No checkpoint (a fresh clone): the strip stays and is shown; nothing played.
    (run / "checkpoint.npz").unlink()
    report.build(root, out)
    assert counted == [run, run] and out.read_text() == text
    # Written elsewhere, without playing: the results root's strip comes along.
    elsewhere = tmp_path / "elsewhere" / "REPORT.md"
    report.build(root, elsewhere, play=False)
    assert elsewhere.read_text() == text
    assert (elsewhere.parent / "report" / png.name).read_bytes() == png.read_bytes()


def test_the_best_run_with_a_checkpoint_and_the_best_run(trained_catch, tmp_path, counted):
    root = tmp_path / "results"
    best = _copy(trained_catch, root, "best", returns=1.0)
    kept = tmp_path / "kept"
    kept.mkdir()
    shutil.move(best / "checkpoint.npz", kept / "checkpoint.npz")
    out = root / "REPORT.md"
    report.build(root, out)  # no checkpoint of any run here
    assert counted == [] and not (root / "report" / "toy_catch_play.png").exists()
    assert f"### toy_catch greedy episode\n\n{strips.NO_STRIP}.\n" in out.read_text()

    worse = _copy(trained_catch, root, "worse", returns=-1.0)
    report.build(root, out)
    assert counted == [worse] and _record(root)["run"] == "toy_catch/seed/worse"
    assert ("Not the benchmark's best run by last-100 mean: that is `toy_catch/seed/best` "
            "(1.00); the strip is of the best run whose checkpoint was on the machine that "
            "made it.") in out.read_text()

    shutil.copy(kept / "checkpoint.npz", best / "checkpoint.npz")  # the best run's, here
    report.build(root, out)
    assert counted == [worse, best] and _record(root)["run"] == "toy_catch/seed/best"
    assert "Not the benchmark's best run" not in out.read_text()
    (best / "checkpoint.npz").unlink()  # a worse run's checkpoint does not replace its strip
    report.build(root, out)
    assert counted == [worse, best] and _record(root)["run"] == "toy_catch/seed/best"


def test_a_run_that_cannot_be_played_is_named_and_its_old_strip_stays(trained_catch, tmp_path,
                                                                      counted, capsys,
                                                                      monkeypatch):
    import envs
    from seed.runtime import checkpoint
    root = tmp_path / "results"
    run = _copy(trained_catch, root, "run")
    out = root / "REPORT.md"
    report.build(root, out)
    png, sidecar = strips.strip_paths(root / "report", "toy_catch")
    before = (png.read_bytes(), sidecar.read_bytes(), out.read_text())
    capsys.readouterr()

    data = (run / "checkpoint.npz").read_bytes()
    (run / "checkpoint.npz").write_bytes(data[: len(data) // 2])
    assert report.build(root, out) == []
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("seed report: toy_catch: no greedy episode of toy_catch/seed/run "
                              "played (") and "checkpoint.npz is damaged" in err[-1]
    assert err[-1].endswith("; the strip of toy_catch/seed/run stays")
    assert (png.read_bytes(), sidecar.read_bytes(), out.read_text()) == before

    (run / "checkpoint.npz").write_bytes(data)
    state, counters = checkpoint.load(run)
    checkpoint.save(run, state, {**counters, "env_steps": counters["env_steps"] + 1})

    def no_engine(name, **kwargs):
        raise ImportError(f"No module named 'gfootball' (to make {name})")
    monkeypatch.setattr(envs, "make", no_engine)
    report.build(root, out)
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == ("seed report: toy_catch: no greedy episode of toy_catch/seed/run played "
                       "(No module named 'gfootball' (to make toy:catch)); the strip of "
                       "toy_catch/seed/run stays")
    assert (png.read_bytes(), sidecar.read_bytes(), out.read_text()) == before
    assert sorted(p.name for p in png.parent.iterdir()) == [
        "toy_catch_play.json", "toy_catch_play.png", "toy_catch_reward.png"]  # no temp file

    sidecar.write_text('{"run": ')
    report.build(root, out, play=False)
    assert "No strip: its record report/toy_catch_play.json is damaged (not readable JSON" \
        in out.read_text()


def test_frames_are_taken_evenly_over_an_episode_of_unknown_length():
    # 301 frames (steps 0-300): more than 32 kept doubles the stride, which ends at 16
    # (multiples of 16 to 288, 19 frames) with the last one, step 300. Targets i * 300 / 7
    # rounded: 0, 43, 86, 129, 171, 214, 257, 300; the nearest kept: 48, 80, 128, 176, 208.
    sampler = strips.FrameSampler(8)
    for step in range(301):
        sampler(f"frame {step}", 0, step)
        assert len(sampler.kept) <= 32
    assert [s for s, _ in sampler.picked()] == [0, 48, 80, 128, 176, 208, 256, 300]
    assert sampler.picked()[1] == (48, "frame 48")


def test_the_caption_says_where_the_episode_was_cut():
    record = {"run": "b/seed/r", "checkpoint": {"sha256": "ab" * 32, "bytes": 9},
              "trained_frames": 2_500_000, "seed": 0, "max_episode_steps": 2500,
              "episode_return": 21.0, "episode_length": 2500, "steps": [0, 1250, 2500]}
    text = strips.caption(record, [], Path("."))
    assert ("`b/seed/r` (its checkpoint at 2.50M frames trained, sha256 abababababab, eval "
            "seed 0): return 21 over 2,500 steps (cut at 2,500); frames at steps 0, 1,250, "
            "2,500,") in text

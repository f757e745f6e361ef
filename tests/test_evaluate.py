"""``seed evaluate``: plays a trained run's checkpoint locally, writes eval.csv, records a
video (read back here); one-line errors on partial or damaged run directories and on a video
that cannot be written, with nothing half-written left behind.

The one-line errors are read from ``seed.cli.main`` in this process (its exit code and
stderr); one test runs the command as a process, for the exit code and stderr a user sees.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from seed import evaluate as E

REPO = Path(__file__).resolve().parent.parent


def _seed(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "seed.cli", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=timeout)


def _read_eval(run: Path) -> list[dict]:
    with open(run / "eval.csv", newline="") as f:
        return list(csv.DictReader(f))


def test_evaluate_writes_eval_csv_and_gif(trained_catch, tmp_path, capsys):
    from seed.cli import main
    gif = tmp_path / "catch.gif"
    assert main(["evaluate", str(trained_catch), "--episodes", "4", "--video", str(gif)]) == 0
    stdout = capsys.readouterr().out
    rows = _read_eval(trained_catch)
    assert list(rows[0]) == ["episode", "return", "length", "frames"]
    assert [int(r["episode"]) for r in rows] == [0, 1, 2, 3]
    for r in rows:  # Catch: the ball falls 9 rows, one reward of +-1 at the bottom
        assert int(r["length"]) == 9 and int(r["frames"]) == 9
        assert float(r["return"]) in (-1.0, 1.0)
    mean = np.mean([float(r["return"]) for r in rows])
    assert f"return mean {mean:.3f}" in stdout and "greedy" in stdout and str(gif) in stdout
    from PIL import Image
    with Image.open(gif) as im:
        assert im.size == (5 * 26, 10 * 26 + 18)  # 10x5 board upscaled, the return above it


def test_two_seconds_of_catch_as_mp4_read_back(trained_catch, tmp_path):
    # 3 episodes of Catch are 3 x 10 frames (the reset and 9 steps): 2 s at 15 frames/s.
    import imageio.v2 as imageio
    mp4 = tmp_path / "catch.mp4"
    shown = []
    r = E.evaluate(trained_catch, episodes=3, video=str(mp4), eval_csv=False,
                   on_frame=lambda image, episode, step: shown.append((episode, step)))
    assert r["video"] == str(mp4) and r["eval_csv"] is None
    with imageio.get_reader(mp4, format="FFMPEG") as reader:
        meta = reader.get_meta_data()
        frames = np.stack([reader.get_data(i) for i in range(reader.count_frames())])
    assert frames.shape == (30, 10 * 26 + 18, 5 * 26, 3)  # 30 frames, even sizes kept
    assert meta["fps"] == E.VIDEO_FPS and meta["duration"] == pytest.approx(2.0, abs=0.1)
    assert shown[:2] == [(0, 0), (0, 1)] and shown[-1] == (2, 9)
    # the band above the board carries text (white pixels); the board below it is drawn
    assert frames[0, :18].max() > 200 and frames[0, 18:].max() > 200
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp file left


def test_video_of_a_run_without_checkpoint_is_one_line_and_writes_nothing(trained_catch, tmp_path):
    bare = tmp_path / "bare"
    bare.mkdir()
    shutil.copy(trained_catch / "config.json", bare / "config.json")
    video = tmp_path / "out.mp4"
    err = _error(_seed("evaluate", bare, "--video", video))
    assert "has no checkpoint.npz: nothing to evaluate" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bare"]
    assert sorted(p.name for p in bare.iterdir()) == ["config.json"]


def test_video_to_a_path_that_cannot_be_written(trained_catch, tmp_path, capsys):
    assert "folder" in _refused(capsys, trained_catch, "--video", tmp_path / "no" / "x.mp4")
    (tmp_path / "d.gif").mkdir()
    assert "is a folder" in _refused(capsys, trained_catch, "--video", tmp_path / "d.gif")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):  # root writes anywhere: nothing to refuse
            pytest.skip("running as root")
        assert "cannot be written" in _refused(capsys, trained_catch, "--video",
                                               locked / "x.mp4")
    finally:
        locked.chmod(0o700)
    assert list(locked.iterdir()) == []


def test_a_failure_while_recording_leaves_no_file(trained_catch, tmp_path):
    mp4 = tmp_path / "catch.mp4"

    def fail(image, episode, step):
        if step == 5:
            raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        E.evaluate(trained_catch, episodes=1, video=str(mp4), eval_csv=False, on_frame=fail)
    assert list(tmp_path.iterdir()) == []


def test_evaluate_in_process_epsilon_and_seed(trained_catch):
    a = E.evaluate(trained_catch, episodes=6, epsilon=1.0, seed=3)
    rows_a = _read_eval(trained_catch)
    b = E.evaluate(trained_catch, episodes=6, epsilon=1.0, seed=3)
    assert _read_eval(trained_catch) == rows_a  # same seed, same random actions, same episodes
    assert a["policy"] == "epsilon-greedy (epsilon 1)" and a["episodes"] == 6
    assert a["mean_return"] == b["mean_return"]
    assert a["trained_frames"] >= 3000


def _one_line(stderr: str) -> str:
    err = stderr.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    assert err.startswith("seed evaluate: error: ")
    return err


def _error(p) -> str:
    """The one error line of a ``seed evaluate`` process that exited 2."""
    assert p.returncode == 2, p.stderr[-2000:]
    return _one_line(p.stderr)


def _refused(capsys, *args) -> str:
    """The one error line of ``seed evaluate ARGS`` run by ``seed.cli.main`` here, which
    returns 2 (the exit code of the process above)."""
    from seed.cli import main
    capsys.readouterr()
    assert main(["evaluate", *map(str, args)]) == 2
    return _one_line(capsys.readouterr().err)


def test_partial_and_damaged_run_dirs(trained_catch, tmp_path, capsys):
    partial = tmp_path / "partial"
    partial.mkdir()
    assert "config.json: missing" in _refused(capsys, partial, "--episodes", 1)
    shutil.copy(trained_catch / "config.json", partial / "config.json")
    assert "has no checkpoint.npz" in _refused(capsys, partial, "--episodes", 1)
    data = (trained_catch / "checkpoint.npz").read_bytes()
    (partial / "checkpoint.npz").write_bytes(data[: len(data) // 2])
    assert "checkpoint.npz is damaged" in _refused(capsys, partial, "--episodes", 1)
    (partial / "config.json").write_text('{"config": ')
    assert "not valid JSON" in _refused(capsys, partial, "--episodes", 1)
    assert "no such directory" in _refused(capsys, tmp_path / "nope", "--episodes", 1)


def test_checkpoint_of_another_network_is_refused(trained_catch, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    shutil.copy(trained_catch / "checkpoint.npz", other / "checkpoint.npz")
    cfg = json.loads((trained_catch / "config.json").read_text())
    cfg["config"]["network_kwargs"] = {"hidden_sizes": [7]}
    (other / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(E.EvaluateError, match="does not fit the agent"):
        E.evaluate(other, episodes=1)


@pytest.mark.parametrize("args, fragment", [
    (["--episodes", 0], "--episodes must be at least 1"),
    (["--episodes", 1, "--epsilon", 1.5], "--epsilon must be in [0, 1]"),
    (["--episodes", 1, "--video", "out.txt"], "give a .mp4 or .gif"),
    ([], "give --episodes N (or --video PATH"),
])
def test_bad_arguments(trained_catch, args, fragment, capsys):
    assert fragment in _refused(capsys, trained_catch, *args)


def test_frame_to_image_shapes():
    atari = E.frame_to_image(np.zeros((84, 84, 1), np.uint8))
    assert atari.size == (336, 336) and atari.mode == "L"
    catch = np.zeros((10, 5), np.float32)
    catch[9, 2] = 1.0
    img = E.frame_to_image(catch)
    assert img.size == (130, 260) and np.asarray(img).max() == 255
    assert E.frame_to_image(np.zeros((72, 96, 3), np.uint8)).mode == "RGB"
    with pytest.raises(E.EvaluateError, match="image observations"):
        E.frame_to_image(np.zeros(4, np.float32), "toy:cartpole")


def _fresh_run(run_dir: Path, **fields) -> Path:
    """A run dir holding an untrained agent's checkpoint (what evaluate reads), no training."""
    import envs
    from seed.agents import make_agent
    from seed.config import make_config
    from seed.runtime import checkpoint
    config = make_config(**fields)
    env = envs.make(config.env, **config.env_kwargs)
    agent = make_agent(config, env.observation_space, env.action_space)
    run_dir.mkdir(parents=True)
    checkpoint.save(run_dir, agent.checkpoint_state(), {"env_steps": 0})
    (run_dir / "config.json").write_text(json.dumps(
        {"config": config.to_json(), "architecture": config.arch}))
    return run_dir


def test_r2d2_greedy_on_q_values(tmp_path):
    run = _fresh_run(tmp_path / "r2d2", agent="r2d2", env="toy:catch", actors=1,
                     envs_per_actor=2)
    r = E.evaluate(run, episodes=2)
    assert r["agent"] == "r2d2" and r["policy"] == "greedy"
    assert [int(x["length"]) for x in _read_eval(run)] == [9, 9]


def test_atari_frames_count_the_frame_skip_and_record_upscaled(tmp_path):
    run = _fresh_run(tmp_path / "pong", env="atari:Pong", network="nature_cnn", actors=1,
                     envs_per_actor=1)
    shown = []
    E.evaluate(run, episodes=1, max_episode_steps=6,
               on_frame=lambda image, episode, step: shown.append(image.size))
    [row] = _read_eval(run)
    assert int(row["length"]) == 6 and int(row["frames"]) == 24  # frame skip 4
    assert shown == [(336, 336 + 18)] * 7  # the reset frame and 6 steps, upscaled 4x


def test_football_planes_drawn_as_a_mini_map():
    # Two stacked SMM frames of 4 planes; the newest has the ball at (1, 2) and the left
    # team at (0, 0): those pixels take their colours, the rest is pitch.
    planes = np.zeros((3, 4, 8), np.uint8)
    planes[0, 0, 4] = 255
    planes[1, 2, 6] = 255
    planes[2, 3, 1] = 255  # the older frame's right team: not drawn
    image = E.football_image(planes)
    assert tuple(image[0, 0]) == tuple(E._SMM_COLOURS[0])
    assert tuple(image[1, 2]) == (255, 255, 255)
    assert tuple(image[2, 3]) == (30, 100, 40)

    class Packed:
        packed, num_planes = True, 8
    from envs.football_packing import pack_planes
    img = E.observation_image(pack_planes(planes), Packed())
    assert img.mode == "RGB" and img.size == (4 * 64, 3 * 64)

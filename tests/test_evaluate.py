"""``seed evaluate``: plays a trained run's checkpoint locally, writes eval.csv, records a GIF;
one-line errors on partial or damaged run directories."""

from __future__ import annotations

import csv
import json
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


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    run = tmp_path_factory.mktemp("eval") / "toy_catch" / "seed" / "run"
    p = _seed("train", "--env", "toy:catch", "--arch", "seed", "--actors", 1,
              "--envs-per-actor", 2, "--frames", 3000, "--no-progress", "--logdir", run)
    assert p.returncode == 0, p.stderr[-2000:]
    assert (run / "checkpoint.npz").exists()
    return run


def _read_eval(run: Path) -> list[dict]:
    with open(run / "eval.csv", newline="") as f:
        return list(csv.DictReader(f))


def test_evaluate_writes_eval_csv_and_gif(trained, tmp_path, capsys):
    from seed.cli import main
    gif = tmp_path / "catch.gif"
    assert main(["evaluate", str(trained), "--episodes", "4", "--record", str(gif)]) == 0
    stdout = capsys.readouterr().out
    rows = _read_eval(trained)
    assert list(rows[0]) == ["episode", "return", "length", "frames"]
    assert [int(r["episode"]) for r in rows] == [0, 1, 2, 3]
    for r in rows:  # Catch: the ball falls 9 rows, one reward of +-1 at the bottom
        assert int(r["length"]) == 9 and int(r["frames"]) == 9
        assert float(r["return"]) in (-1.0, 1.0)
    mean = np.mean([float(r["return"]) for r in rows])
    assert f"return mean {mean:.3f}" in stdout and "greedy" in stdout
    from PIL import Image
    with Image.open(gif) as im:
        assert im.n_frames == 10  # the reset observation + 9 steps
        assert im.size == (5 * 26, 10 * 26)  # 10x5 board upscaled to >= 256 px


def test_evaluate_in_process_epsilon_and_seed(trained):
    a = E.evaluate(trained, episodes=6, epsilon=1.0, seed=3)
    rows_a = _read_eval(trained)
    b = E.evaluate(trained, episodes=6, epsilon=1.0, seed=3)
    assert _read_eval(trained) == rows_a  # same seed, same random actions, same episodes
    assert a["policy"] == "epsilon-greedy (epsilon 1)" and a["episodes"] == 6
    assert a["mean_return"] == b["mean_return"]
    assert a["trained_frames"] >= 3000


def _error(p) -> str:
    assert p.returncode != 0
    err = p.stderr.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    assert err.startswith("seed evaluate: error: ")
    return err


def test_partial_and_damaged_run_dirs(trained, tmp_path):
    partial = tmp_path / "partial"
    partial.mkdir()
    assert "config.json: missing" in _error(_seed("evaluate", partial, "--episodes", 1))
    shutil.copy(trained / "config.json", partial / "config.json")
    assert "has no checkpoint.npz" in _error(_seed("evaluate", partial, "--episodes", 1))
    data = (trained / "checkpoint.npz").read_bytes()
    (partial / "checkpoint.npz").write_bytes(data[: len(data) // 2])
    assert "checkpoint.npz is damaged" in _error(_seed("evaluate", partial, "--episodes", 1))
    (partial / "config.json").write_text('{"config": ')
    assert "not valid JSON" in _error(_seed("evaluate", partial, "--episodes", 1))
    assert "no such directory" in _error(_seed("evaluate", tmp_path / "nope", "--episodes", 1))


def test_checkpoint_of_another_network_is_refused(trained, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    shutil.copy(trained / "checkpoint.npz", other / "checkpoint.npz")
    cfg = json.loads((trained / "config.json").read_text())
    cfg["config"]["network_kwargs"] = {"hidden_sizes": [7]}
    (other / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(E.EvaluateError, match="does not fit the agent"):
        E.evaluate(other, episodes=1)


@pytest.mark.parametrize("args, fragment", [
    (["--episodes", 0], "--episodes must be at least 1"),
    (["--episodes", 1, "--epsilon", 1.5], "--epsilon must be in [0, 1]"),
    (["--episodes", 1, "--record", "out.txt"], "give a .gif or .mp4"),
])
def test_bad_arguments(trained, args, fragment):
    assert fragment in _error(_seed("evaluate", trained, *args))


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
    gif = tmp_path / "pong.gif"
    E.evaluate(run, episodes=1, max_episode_steps=6, record=str(gif))
    [row] = _read_eval(run)
    assert int(row["length"]) == 6 and int(row["frames"]) == 24  # frame skip 4
    from PIL import Image
    with Image.open(gif) as im:
        assert im.size == (336, 336)
        # The reset frame and 6 steps. Pillow merges identical consecutive frames into one
        # of longer duration (a policy that leaves the screen unchanged), so count time.
        durations = []
        for i in range(im.n_frames):
            im.seek(i)
            durations.append(im.info["duration"])
    assert sum(durations) == 7 * E._GIF_MS_PER_FRAME

"""Short DMLab probes that find why the critic collapses (issue 32), one change at a time.

    python scripts/dmlab_probes.py run NAME [--frames F] [--arch A]   # one probe, then its row
    python scripts/dmlab_probes.py table                              # every probe run so far
    python scripts/dmlab_probes.py look RUN_DIR [--init]    # inside a checkpoint's network

Each probe is ``experiments/dmlab_seekavoid_arena_01.yaml`` as it was committed before the fix
the probes found (its torso He-initialised, ``HE``) with one change (``PROBES``),
run to ``--frames`` (600,000 by default) into
``results/dmlab_seekavoid_arena_01/probes/<arch>-<name>/``. Every probe, the baseline
included, holds the learning rate constant (``lr_decay_to_zero=false``): the committed config
decays it to zero over its 20M-frame budget, which a 0.6M-frame probe would otherwise
compress 33-fold; over the first 0.6M frames of the full budget it is 97-100% of the constant.

The table gives, over the log rows from ``--after`` to ``--until`` frames (500,000 to
600,000 by default; the committed runs are read over the same window): the median
explained variance (each row is the mean over its interval's train steps of a per-batch
figure, noisy on sparse rewards, hence the median), the mean dead share of the torso's FC
layer, and the mean return of the episodes that ended after it.

``look`` plays one episode's worth of steps (``--steps``, 300 by default) of the run's level
with the checkpoint's policy (or, with ``--init``, a freshly initialised network's) and
reports, over those steps: the torso's input to its FC layer and the FC's output (mean and
largest), the FC units zero on every step, the share of the LSTM's gate pre-activations
beyond +-5 (a saturated sigmoid or tanh passes no change on), and how much the value moves.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "experiments" / "dmlab_seekavoid_arena_01.yaml"
PROBE_ROOT = ROOT / "results" / "dmlab_seekavoid_arena_01" / "probes"
#: The committed config's own runs (3.4M frames each, the learning rate decaying over 20M):
#: the baseline every probe is read against.
COMMITTED = [ROOT / "results" / "dmlab_seekavoid_arena_01" / arch / "t20-20261206"
             for arch in ("impala", "seed")]
HE = ('network_kwargs={"lstm_size": 256, "channels": [16, 32, 32], "fc_size": 256, '
      '"kernel_init": "he_uniform"}')
# The config as it was before issue 32's fix (He-uniform torso), at a constant learning rate.
COMMON = ["lr_decay_to_zero=false", HE]

#: name -> (what differs from the committed config, its --set overrides)
PROBES = {
    "baseline": ("the committed config (its committed runs are the table's first rows)", []),
    "adam_beta1_0.9": ("Adam beta_1 0.9 (Keras' default) for upstream SEED's 0",
                       ["adam_beta1=0.9"]),
    "lr_div4": ("learning rate / 4 (5.6e-5): upstream's 2.3e-4 was tuned for 40x the batch",
                ["learning_rate=5.647e-05"]),
    "adam_epsilon_1e-5": ("Adam epsilon 1e-5 for upstream's 3.1e-9", ["adam_epsilon=1e-5"]),
    "glorot_init": ("Glorot-uniform torso as upstream's Keras layers, for He-uniform",
                    ['network_kwargs={"lstm_size": 256, "channels": [16, 32, 32], '
                     '"fc_size": 256, "kernel_init": "glorot_uniform"}']),
    "entropy_0.01": ("entropy cost 0.01 (Pong's) for 0.00097", ["entropy_cost=0.01"]),
    # On the Glorot torso (the first fix), which delayed the collapse but did not stop it:
    "glorot_adam_epsilon_1e-3": (
        "Glorot torso and Adam epsilon 1e-3 (upstream SEED's R2D2, whose LSTM learns here)",
        ['network_kwargs={"lstm_size": 256, "channels": [16, 32, 32], "fc_size": 256, '
         '"kernel_init": "glorot_uniform"}', "adam_epsilon=0.001"]),
    "glorot_fc_layer_norm": (
        "Glorot torso with its FC layer-normalised before the ReLU (the LSTM's input scale "
        "held whatever the torso grows to)",
        ['network_kwargs={"lstm_size": 256, "channels": [16, 32, 32], "fc_size": 256, '
         '"kernel_init": "glorot_uniform", "fc_layer_norm": true}']),
}


def run(name: str, frames: int, arch: str) -> Path:
    if name not in PROBES:
        sys.exit(f"unknown probe {name!r}; known: {', '.join(PROBES)}")
    run_dir = PROBE_ROOT / f"{arch}-{name}"
    if run_dir.exists():
        sys.exit(f"{run_dir} exists: resume it with seed train --resume, or remove it")
    sets = [a for s in COMMON + PROBES[name][1] for a in ("--set", s)]
    cmd = [sys.executable, "-m", "seed.cli", "train", "--config", str(CONFIG), "--arch", arch,
           "--frames", str(frames), "--logdir", str(run_dir), *sets]
    print(" ".join(cmd), flush=True)
    subprocess.run(cmd, cwd=ROOT, check=True)
    return run_dir


def row(run_dir: Path, after: int, until: int) -> dict:
    """The probe's figures over its log rows and episodes in ``[after, until]`` frames."""
    from seed.results.run_dirs import read_episodes, read_metrics
    metrics = read_metrics(run_dir / "metrics.csv")
    late = metrics[metrics["env_frames"].between(after, until)]
    episodes = read_episodes(run_dir / "episodes.csv")
    late_episodes = episodes[episodes["env_frames"].between(after, until)]
    dead = [c for c in metrics.columns if c.startswith("dead_relu_") and c.endswith("_fc")]
    return {
        "probe": run_dir.name,
        "frames": int(metrics["env_frames"].max()),
        "ev_median": float(late["explained_variance"].median()) if len(late) else None,
        "fc_dead": float(late[dead[0]].mean()) if dead and len(late) else None,
        "return": (float(late_episodes["episode_return"].mean()) if len(late_episodes)
                   else None),
        "episodes": int(len(late_episodes)),
    }


def table(after: int, until: int) -> None:
    def fmt(v, spec):
        return "-" if v is None or (isinstance(v, float) and np.isnan(v)) else format(v, spec)
    print(f"| probe | frames | explained variance (median, {after:,}-{until:,} frames) "
          f"| fc dead share | return (episodes) |")
    print("| --- | --- | --- | --- | --- |")
    probes = sorted(p for p in PROBE_ROOT.glob("*") if (p / "metrics.csv").exists())
    for run_dir in [p for p in COMMITTED if p.exists()] + probes:
        r = row(run_dir, after, until)
        name = r["probe"] if run_dir in probes else f"committed {run_dir.parent.name}"
        print(f"| {name} | {r['frames']:,} | {fmt(r['ev_median'], '.3f')} | "
              f"{fmt(r['fc_dead'], '.2f')} | {fmt(r['return'], '.2f')} ({r['episodes']}) |")


def look(run_dir: Path, steps: int, init: bool) -> None:
    import tensorflow as tf

    import envs
    from seed.agents import make_agent
    from seed.evaluate import _load_config
    from seed.runtime import checkpoint
    from seed.types import EnvOutput

    config = _load_config(run_dir)
    env = envs.make(config.env, **config.env_kwargs)
    agent = make_agent(config, env.observation_space, env.action_space)
    counters = {}
    if not init:
        state, counters = checkpoint.load(run_dir)
        agent.restore_state(state)
    net, rng = agent.network, np.random.default_rng(0)
    obs, _ = env.reset(seed=1)
    frames, rewards, dones, actions = [obs], [0.0], [True], [0]
    core = net.initial_state(1)
    for _ in range(steps):  # the policy's own steps, sampled as an actor samples them
        out, core = net(tf.constant([actions[-1]], tf.int32),
                        EnvOutput(tf.constant([rewards[-1]], tf.float32),
                                  tf.constant([dones[-1]]), tf.constant(frames[-1][None])),
                        core)
        logits = out["policy_logits"].numpy()[0]
        p = np.exp(logits - logits.max())
        action = int(rng.choice(len(p), p=p / p.sum()))
        obs, reward, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            obs, _ = env.reset()
        frames.append(obs)
        rewards.append(reward)
        dones.append(terminated or truncated)
        actions.append(action)
    env.close()
    torso = net._torso
    x = tf.cast(np.stack(frames), tf.float32) / 255.0
    for stack in torso._stacks:
        x = stack(x)
    flat = tf.reshape(tf.nn.relu(x), [len(frames), -1])
    fc = torso._fc(flat).numpy()
    alive = (fc > 0).any(0)
    # The LSTM's gate pre-activations along the trajectory, its state carried as in play.
    from seed.networks.base import core_input
    inputs = core_input(tf.constant(fc), tf.constant(rewards, tf.float32),
                        tf.constant(actions, tf.int32), tf.constant(dones), net.num_actions)
    h, c = net.initial_state(1)
    gates, values = [], []
    for t in range(len(frames)):
        if dones[t]:
            h, c = net.initial_state(1)
        z = tf.matmul(tf.concat([inputs[t:t + 1], h], -1), net._lstm.kernel) + net._lstm.bias
        gates.append(z.numpy())
        h, (h, c) = net._lstm(inputs[t:t + 1], (h, c))
        values.append(float(net._baseline(h)[0, 0]))
    gates = np.concatenate(gates)
    trained = int(counters.get("env_steps", 0)) * int(env.frames_per_step)
    print(f"{run_dir.name} ({'initial' if init else f'{trained:,} frames'}), {len(frames)} "
          f"steps: torso input to fc mean {float(np.mean(flat)):.2f} max "
          f"{float(np.max(flat)):.1f}; fc output mean {fc[:, alive].mean():.1f} max "
          f"{fc.max():.1f}; fc units dead on every step {1 - alive.mean():.2f}; LSTM gate "
          f"pre-activations beyond +-5 {np.mean(np.abs(gates) > 5):.2f}; value std over the "
          f"steps {np.std(values):.4f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_run = sub.add_parser("run")
    p_run.add_argument("name")
    p_run.add_argument("--frames", type=int, default=600_000)
    p_run.add_argument("--arch", default="impala")
    p_table = sub.add_parser("table")
    p_table.add_argument("--after", type=int, default=500_000)
    p_table.add_argument("--until", type=int, default=600_000,
                         help="longer runs (the committed ones) are read up to here, as a probe")
    p_look = sub.add_parser("look")
    p_look.add_argument("run_dir", type=Path)
    p_look.add_argument("--steps", type=int, default=300)
    p_look.add_argument("--init", action="store_true", help="a new network, not the checkpoint")
    args = parser.parse_args()
    if args.command == "look":
        look(args.run_dir, args.steps, args.init)
    elif args.command == "run":
        run(args.name, args.frames, args.arch)
    else:
        table(args.after, args.until)


if __name__ == "__main__":
    main()

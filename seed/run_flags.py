"""The flags of every ``seed`` subcommand that builds a run config, and the config they build.

Train, learner, compare and roofline share them. They live here, below both
``seed.cli`` and the modules that add subcommands to it (``seed.bench.cli``), so
that those modules never import the command line that registers them.
"""

from __future__ import annotations

import argparse
import json

# Flags shared by every subcommand that builds a run config: flag -> Config field.
RUN_FLAGS = {
    "--env": ("env", str, "env name, e.g. toy:catch, atari:Pong"),
    "--arch": ("arch", str, "seed or impala"),
    "--agent": ("agent", str, "vtrace or r2d2"),
    "--network": ("network", str, "mlp, nature_cnn, impala_resnet, football, dmlab"),
    "--actors": ("actors", int, "actor processes"),
    "--envs-per-actor": ("envs_per_actor", int, "envs each actor steps"),
    "--frames": ("frames", int, "env frame budget (steps x frame skip)"),
    "--seconds": ("seconds", float, "wall-clock budget (0 = none)"),
    "--logdir": ("logdir", str, "run directory to write"),
    "--launcher": ("launcher", str, "local, ray or none"),
    "--ray-address": ("ray_address", str, "Ray cluster address (with --launcher ray)"),
    "--server": ("server", str, "learner address: unix:/path, HOST:PORT or PORT"),
    "--unroll-length": ("unroll_length", int, "T: steps per unroll"),
    "--batch-size": ("batch_size", int, "unrolls per train step"),
    "--inference-batch-size": ("inference_batch_size", int, "envs per inference batch"),
    "--inference-timeout-ms": ("inference_timeout_ms", float, "max wait for a batch"),
    "--actor-splits": ("actor_splits", int, "SEED: env groups per actor, each in flight"),
    "--learning-rate": ("learning_rate", float, "optimizer learning rate"),
    "--seed": ("seed", int, "random seed"),
    "--auth-token-file": ("auth_token_file", str,
                          "file holding the shared auth token (else $SEED_AUTH_TOKEN)"),
    "--tls-cert-file": ("tls_cert_file", str, "learner: serve TLS with this PEM certificate"),
    "--tls-key-file": ("tls_key_file", str, "learner: the PEM key of --tls-cert-file"),
    "--tls-ca-file": ("tls_ca_file", str, "actors: PEM roots that sign the learner's certificate"),
}


def add_run_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", help="experiment YAML (experiments/*.yaml) giving defaults")
    for flag, (dest, typ, help_) in RUN_FLAGS.items():
        p.add_argument(flag, dest=dest, type=typ, default=None, help=help_)
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override any config field, plain or dotted (entropy_cost=0.02, "
                        "transport.server=unix:/tmp/s); VALUE parsed as JSON when it can be")
    p.add_argument("--no-progress", action="store_true", help="no live progress bar")


def overrides(args) -> dict:
    out = {dest: getattr(args, dest) for dest, _, _ in RUN_FLAGS.values()}
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"--set needs FIELD=VALUE, got {item!r}")
        try:
            out[key.replace("-", "_")] = json.loads(value)
        except ValueError:
            out[key.replace("-", "_")] = value
    if getattr(args, "no_progress", False):
        out["progress"] = False
    return out


def given_by_flags(args) -> dict:
    """The config fields the user gave explicitly: ``--config``'s file, flags and ``--set``."""
    from seed import config as config_lib
    return config_lib.given_values(args.config, overrides(args))


def load_config(args):
    from seed import config as config_lib
    return config_lib.load(args.config, overrides(args))

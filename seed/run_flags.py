"""The flags of every ``seed`` subcommand that builds a run config, and the config they build.

Train, learner, compare and roofline share them. They live here, below both
``seed.cli`` and the modules that add subcommands to it (``seed.bench.cli``), so
that those modules never import the command line that registers them.
"""

from __future__ import annotations

import argparse
import json

# Flags shared by every subcommand that builds a run config: flag -> (config field, help).
# Each reads its value as the field declares it (seed/config/fields.py).
RUN_FLAGS = {
    "--env": ("env", "env name, e.g. toy:catch, atari:Pong"),
    "--arch": ("arch", "architecture"),
    "--agent": ("agent", "agent"),
    "--network": ("network", "policy network, made for the env's observations"),
    "--actors": ("actors", "actor processes"),
    "--envs-per-actor": ("envs_per_actor", "envs each actor steps"),
    "--frames": ("frames", "env frame budget (steps x frame skip); 0 = none"),
    "--seconds": ("seconds", "wall-clock budget; 0 = none"),
    "--logdir": ("logdir", "run directory to write"),
    "--launcher": ("launcher", "where the actors are started"),
    "--ray-address": ("ray_address", "Ray cluster address (with --launcher ray)"),
    "--server": ("server", "learner address: unix:/path, HOST:PORT or PORT"),
    "--unroll-length": ("unroll_length", "T: steps per unroll"),
    "--batch-size": ("batch_size", "unrolls per train step"),
    "--inference-batch-size": ("inference_batch_size",
                               "envs per inference batch; 0 = one request per actor stream"),
    "--inference-timeout-ms": ("inference_timeout_ms", "max wait for a batch"),
    "--actor-splits": ("actor_splits", "SEED: env groups per actor, each in flight"),
    "--compute-dtype": ("compute_dtype", "the networks' torsos; bfloat16_train: bfloat16 in "
                        "the train step, float32 inference"),
    "--learning-rate": ("learning_rate", "optimizer learning rate"),
    "--seed": ("seed", "random seed"),
    "--auth-token-file": ("auth_token_file",
                          "file holding the shared auth token (else $SEED_AUTH_TOKEN)"),
    "--tls-cert-file": ("tls_cert_file", "learner: serve TLS with this PEM certificate"),
    "--tls-key-file": ("tls_key_file", "learner: the PEM key of --tls-cert-file"),
    "--tls-ca-file": ("tls_ca_file", "actors: PEM roots that sign the learner's certificate"),
}


def _reader(dest: str):
    """The argparse type of the flag of field ``dest``: its declaration reads the text."""
    from seed import config as config_lib

    def read(text: str):
        try:
            return config_lib.read_value(dest, text)
        except config_lib.ConfigError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    return read


def add_run_flags(p: argparse.ArgumentParser) -> None:
    """The run flags, ``--set``, and every config key's type, bounds and default after the
    flags in ``--help`` (:mod:`seed.config.reference`)."""
    from seed import config as config_lib
    from seed.config import reference
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = reference.help_text()
    p.add_argument("--config", help="experiment YAML (experiments/*.yaml) giving defaults")
    for flag, (dest, help_) in RUN_FLAGS.items():
        allowed = config_lib.allowed_values(dest)
        p.add_argument(flag, dest=dest, type=_reader(dest), default=None,
                       help=help_ if allowed == "text" else f"{help_} ({allowed})")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override any config field, plain or dotted (entropy_cost=0.02, "
                        "transport.server=unix:/tmp/s); VALUE parsed as JSON when it can be")
    p.add_argument("--no-progress", action="store_true", help="no live progress bar")


def overrides(args) -> dict:
    out = {dest: getattr(args, dest) for dest, _ in RUN_FLAGS.values()}
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

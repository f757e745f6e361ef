"""The ``seed`` command line: train, learner, actor, compare, roofline, evaluate."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from seed import quiet_tf  # noqa: E402  (after the log level is set)

# Flags shared by every subcommand that builds a run config: flag -> Config field.
_RUN_FLAGS = {
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


def _add_run_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", help="experiment YAML (experiments/*.yaml) giving defaults")
    for flag, (dest, typ, help_) in _RUN_FLAGS.items():
        p.add_argument(flag, dest=dest, type=typ, default=None, help=help_)
    p.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                   help="override any config field (VALUE parsed as JSON when it can be)")
    p.add_argument("--no-progress", action="store_true", help="no live progress bar")


def _overrides(args) -> dict:
    out = {dest: getattr(args, dest) for dest, _, _ in _RUN_FLAGS.values()}
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


def _load_config(args):
    from seed import config as config_lib
    return config_lib.load(args.config, _overrides(args))


def cmd_train(args) -> int:
    from seed.runtime.run import format_summary, train
    config = _load_config(args)
    summary = train(config, resume_dir=args.resume)
    print(format_summary(summary))
    return 0


def cmd_learner(args) -> int:
    args.launcher = "none"
    return cmd_train(args)


def cmd_actor(args) -> int:
    from seed.runtime.actor_process import (ActorStopped, fetch_spec, install_exit_handlers,
                                            setup_logging)
    import grpc

    from seed.transport.security import client_security
    setup_logging()
    security = client_security(args.auth_token_file, args.tls_ca_file)
    try:
        install_exit_handlers(args.parent_pid)
        channel, _, spec = fetch_spec(args.server, args.task, wait_s=args.connect_timeout,
                                      security=security)
        channel.close()
    except ActorStopped:
        return 0
    except grpc.RpcError as e:
        print(f"seed: error: the learner at {args.server} answered {e.code().name}: "
              f"{e.details()}", file=sys.stderr)
        return 2
    if spec.arch == "impala":
        from seed.runtime.impala_arch.actor import run_actor
    else:
        from seed.runtime.seed_arch.actor import run_actor
    return run_actor(args.server, args.task, max_steps=args.max_steps, security=security)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="seed", description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="keep TensorFlow's start-up lines (hidden by default), in every "
                             "process the command starts")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("train", help="run learner and actors (local processes or Ray)")
    _add_run_flags(p)
    p.add_argument("--resume", metavar="DIR", help="continue the run in DIR from its checkpoint")
    p.set_defaults(fn=cmd_train)

    p = sub.add_parser("learner", help="the learner role alone; actors connect to --server")
    _add_run_flags(p)
    p.add_argument("--resume", metavar="DIR", help="continue the run in DIR")
    p.set_defaults(fn=cmd_learner)

    p = sub.add_parser("actor", help="one actor: steps envs for the learner at --server")
    p.add_argument("--server", required=True, help="learner address")
    p.add_argument("--task", type=int, required=True, help="actor index")
    p.add_argument("--max-steps", type=int, default=0, help="stop after this many env steps")
    p.add_argument("--connect-timeout", type=float, default=120.0,
                   help="seconds to wait for the learner at start")
    p.add_argument("--auth-token-file", default="",
                   help="file holding the learner's auth token (else $SEED_AUTH_TOKEN)")
    p.add_argument("--tls-ca-file", default="",
                   help="PEM roots to verify a TLS learner against (its certificate, if "
                        "self-signed)")
    p.add_argument("--parent-pid", type=int, default=0, help=argparse.SUPPRESS)
    p.set_defaults(fn=cmd_actor)

    for register in _EXTRA_COMMANDS:
        register(sub)
    return parser


def _register_optional():
    """Subcommands that live in their own modules (compare, roofline, evaluate)."""
    out = []
    for module in ("seed.bench.cli", "seed.evaluate"):
        try:
            mod = __import__(module, fromlist=["register"])
        except ModuleNotFoundError as e:
            if e.name and module.startswith(e.name):
                continue
            raise
        out.append(mod.register)
    return out


_EXTRA_COMMANDS = _register_optional()


def main(argv=None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    args = build_parser().parse_args(argv)
    if args.verbose:
        os.environ[quiet_tf.VERBOSE_ENV] = "1"  # the processes this command starts inherit it
    if args.command != "compare":  # compare only starts `seed train` processes
        quiet_tf.import_tensorflow()
    from seed.config import ConfigError
    from seed.runtime.checkpoint import CheckpointError
    import envs
    try:
        return args.fn(args)
    except (ConfigError, envs.UnknownEnvError, CheckpointError, ImportError) as e:
        # ImportError: an env whose engine is not installed (DeepMind Lab, Football);
        # its message says how to install it.
        print(f"seed: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

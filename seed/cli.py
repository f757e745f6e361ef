"""The ``seed`` command line: train, learner, actor, compare, roofline, timeline, evaluate,
report."""

from __future__ import annotations

import argparse
import logging
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from seed import evaluate, quiet_tf  # noqa: E402  (after the log level is set)
from seed.bench import cli as bench_cli  # noqa: E402
from seed.run_flags import add_run_flags, given_by_flags  # noqa: E402


def launch_training(config, resume_dir: str | None = None, given: dict | None = None) -> dict:
    """The run with its learner in this process, or with ``learner_on_gpu_node`` in a Ray
    actor on a GPU node of the cluster (checked here first), which runs
    :func:`seed.runtime.run.train_here` there; returns its summary."""
    from seed.runtime import run
    if not config.learner_on_gpu_node:
        return run.train(config, resume_dir, given)
    from seed.launch.ray_launcher import train_on_gpu_node
    run.check(config)
    return train_on_gpu_node(config, resume_dir, given, run.train_here,
                             config.logdir or run.default_run_dir(config))


def cmd_train(args) -> int:
    from seed.config import from_paths
    given = given_by_flags(args)  # the file is read once: the config is built from what it gave
    config = from_paths(given)  # a bad value is refused here, before TensorFlow loads
    quiet_tf.import_tensorflow()
    from seed.runtime.run import format_summary
    print(format_summary(launch_training(config, args.resume, given)))
    return 0


def cmd_learner(args) -> int:
    args.launcher = "none"
    return cmd_train(args)


def cmd_actor(args) -> int:
    from seed.runtime.actor_process import ActorStopped, fetch_spec, install_exit_handlers
    import grpc

    from seed.launch.base import setup_logging
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
    from seed.runtime.architectures import architecture
    run_actor = architecture(spec.arch, what="the learner's architecture").run_actor
    return run_actor(args.server, args.task, max_steps=args.max_steps, security=security)


def cmd_report(args) -> int:
    from seed import report  # pandas and every result type: loaded for this command alone
    return report.run(args)


class _SubcommandParser(argparse.ArgumentParser):
    """A subcommand's parser: a bad flag is refused in one line (``seed train: error:
    argument --actors: ...``), exit 2; ``--help`` shows the usage."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="seed", description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="keep TensorFlow's start-up lines (hidden by default), in every "
                             "process the command starts")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_SubcommandParser)

    p = sub.add_parser("train", help="run learner and actors (local processes or Ray)")
    add_run_flags(p)
    p.add_argument("--resume", metavar="DIR", help="continue the run in DIR from its checkpoint")
    p.set_defaults(fn=cmd_train)

    p = sub.add_parser("learner", help="the learner role alone; actors connect to --server")
    add_run_flags(p)
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

    bench_cli.register(sub)  # compare, roofline, timeline
    evaluate.register(sub)

    p = sub.add_parser("report", help="results/REPORT.md and the figures it embeds, from the "
                                      "run directories and compare files alone")
    p.add_argument("--results", default="results", help="results root (default: results)")
    p.add_argument("--out", default=None, help="report file (default: RESULTS/REPORT.md)")
    p.add_argument("--no-play", action="store_true",
                   help="show the greedy-episode strips already made and play none (the "
                        "report's text is the same when no checkpoint changed)")
    p.set_defaults(fn=cmd_report)
    return parser


def main(argv=None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    args = build_parser().parse_args(argv)
    if args.verbose:
        os.environ[quiet_tf.VERBOSE_ENV] = "1"  # the processes this command starts inherit it
    if args.command not in ("compare", "timeline", "report", "train", "learner"):
        quiet_tf.import_tensorflow()  # compare only starts `seed train` processes; timeline
        #                               and report read files; train imports it once its
        #                               config is built
    from seed.config import ConfigError
    from seed.runtime.checkpoint import CheckpointError
    from seed.launch.base import ActorLost
    from seed.runtime.disk import DiskFull
    import envs
    try:
        return args.fn(args)
    except (ConfigError, envs.UnknownEnvError, CheckpointError, ImportError) as e:
        # ImportError: an env whose engine is not installed (DeepMind Lab, Football);
        # its message says how to install it.
        print(f"seed: error: {e}", file=sys.stderr)
        return 2
    except (DiskFull, ActorLost) as e:  # the run stopped cleanly; the line says why
        print(f"seed: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

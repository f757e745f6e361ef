"""``seed compare``, ``seed roofline`` and ``seed timeline`` (registered into ``seed.cli``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from seed.run_flags import add_run_flags, load_config


def _log_interval(args):
    """1 s unless the user set log_interval_s (short runs need several rows)."""
    if any(s.replace("-", "_").startswith("log_interval_s=") for s in args.set):
        return None
    return 1.0


def cmd_compare(args) -> int:
    from seed.bench import compare
    if args.arch:
        print("seed: error: seed compare runs both architectures; drop --arch", file=sys.stderr)
        return 2
    if args.frames:
        print("seed: error: seed compare budgets runs by --seconds, not --frames",
              file=sys.stderr)
        return 2
    config = load_config(args)
    if config.seconds <= 0:
        print("seed: error: seed compare needs --seconds S (a wall-clock budget per run)",
              file=sys.stderr)
        return 2
    out_dir = Path(args.logdir) if args.logdir else compare.default_dir(config)
    command = [Path(sys.argv[0]).name] + sys.argv[1:]
    try:
        if args.sweep_network:
            if args.timeline:
                print("seed: error: --timeline is for one compare, not a --sweep-network",
                      file=sys.stderr)
                return 2
            from seed.bench import sweep
            res = sweep.run_sweep(config, args.sweep_network, args.mode, config.seconds,
                                  out_dir, _log_interval(args), command, budget=args.budget)
            print(res["table"])
            print(f"results in {out_dir} (sweep.csv, sweep.png, <size>/compare.csv)")
            failed = [r for r in res["rows"] if r["seed_fps"] is None or r["impala_fps"] is None]
            return 1 if failed else 0
        res = compare.run_compare(config, args.mode, config.seconds, out_dir,
                                  _log_interval(args), command, budget=args.budget,
                                  timeline=args.timeline)
    except KeyboardInterrupt:
        print("seed compare: interrupted; runs stopped", file=sys.stderr)
        return 130
    print(res["table"])
    print(f"results in {out_dir} (compare.csv, compare.json)")
    return 0 if all(r["rc"] == 0 for r in res["runs"]) else 1


def cmd_roofline(args) -> int:
    from seed.bench import roofline
    # The run budget flags mean nothing here; --seconds is the time per measurement.
    seconds = args.seconds if args.seconds else 10.0
    args.seconds = None
    config = load_config(args)
    if seconds <= 0:
        print("seed: error: --seconds must be positive", file=sys.stderr)
        return 2
    if args.processes is not None and args.processes < 1:
        print("seed: error: --processes must be at least 1", file=sys.stderr)
        return 2
    try:
        result = roofline.run_roofline(config, seconds=seconds, processes=args.processes)
    except RuntimeError as e:
        print(f"seed: error: {e}", file=sys.stderr)
        return 1
    path = roofline.write_roofline(result, args.out)
    print(result.format())
    print(f"written to {path}")
    return 0


def cmd_timeline(args) -> int:
    from seed.bench import timeline
    from seed.results.timeline import write_timeline
    try:
        summary = timeline.analyse(args.run_dir, args.skip_first, args.skip_last)
    except timeline.TimelineError as e:
        print(f"seed: error: {e}", file=sys.stderr)
        return 2
    print(summary.format())
    print(f"written to {write_timeline(args.run_dir, summary)}")
    return 0


def _fraction(text: str) -> float:
    value = float(text)
    if not 0 <= value < 0.5:
        raise argparse.ArgumentTypeError(f"a fraction in [0, 0.5), not {text}")
    return value


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "compare", help="SEED, IMPALA, SEED again on one config; steady-state FPS table")
    add_run_flags(p)
    p.add_argument("--mode", choices=("train", "serve"), default="train",
                   help="train: the full loop; serve: inference only (set train=false)")
    p.add_argument("--budget", choices=("steady", "total"), default="steady",
                   help="steady: --seconds of steady state per run (warm-up not counted); "
                        "total: --seconds from the learner's start, warm-up included")
    p.add_argument("--sweep-network", metavar="A,B,C",
                   help="run the compare per network size (small,medium,large or network "
                        "names) and plot FPS against inference cost")
    p.add_argument("--timeline", action="store_true",
                   help="record a per-cycle timeline in the SEED runs "
                        "(timeline=true) and print where each cycle goes "
                        "(seed timeline)")
    p.set_defaults(fn=cmd_compare)

    p = subparsers.add_parser(
        "roofline", help="this machine's ceiling FPS for a config: sim, inference, training")
    add_run_flags(p)
    p.add_argument("--processes", type=int, default=None,
                   help="simulation processes (default: one per core)")
    p.add_argument("--out", help="JSON to write (default results/roofline/<env>_<network>.json)")
    p.set_defaults(fn=cmd_roofline)

    p = subparsers.add_parser(
        "timeline", help="where each cycle of a lock-step SEED run went (a run recorded with "
                         "--set timeline=true)")
    p.add_argument("run_dir", metavar="RUN_DIR", help="the run directory")
    p.add_argument("--skip-first", type=_fraction, default=0.1, metavar="FRACTION",
                   help="leave out this share of the recorded batches at the start "
                        "(warm-up; default 0.1)")
    p.add_argument("--skip-last", type=_fraction, default=0.05, metavar="FRACTION",
                   help="leave out this share at the end (the stop; default 0.05)")
    p.set_defaults(fn=cmd_timeline)

"""``python -m seed.report [--results DIR] [--out FILE] [--no-play]``: the same as ``seed
report``, whose flags ``seed.cli`` holds (this module does not import it: the command imports
the report)."""

import argparse
import sys

from seed.report import run

parser = argparse.ArgumentParser(prog="python -m seed.report", description="seed report")
parser.add_argument("--results", default="results", help="results root (default: results)")
parser.add_argument("--out", default=None, help="report file (default: RESULTS/REPORT.md)")
parser.add_argument("--no-play", action="store_true",
                    help="show the greedy-episode strips already made and play none")
sys.exit(run(parser.parse_args()))

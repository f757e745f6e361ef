"""``python -m seed.report [--results DIR] [--out FILE]``: the same as ``seed report``, whose
flags ``seed.cli`` holds (this module does not import it: the command imports the report)."""

import argparse
import sys

from seed.report import run

parser = argparse.ArgumentParser(prog="python -m seed.report", description="seed report")
parser.add_argument("--results", default="results", help="results root (default: results)")
parser.add_argument("--out", default=None, help="report file (default: RESULTS/REPORT.md)")
sys.exit(run(parser.parse_args()))

"""Every make target the README and `make help` promise exists and parses (make -n)."""

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = sorted(p.stem for p in (ROOT / "experiments").glob("*.yaml"))


def make_n(*targets, **variables):
    args = ["make", "-n", *targets, *(f"{k}={v}" for k, v in variables.items())]
    # VENV points at a path whose stamp exists, so setup does not re-run in a dry run.
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=60)


def test_there_are_benchmarks():
    assert {"toy_catch", "atari_pong_vtrace", "atari_pong_r2d2"} <= set(BENCHMARKS)


@pytest.mark.parametrize("benchmark", BENCHMARKS)
def test_each_benchmark_has_seed_impala_and_compare_targets(benchmark):
    for target, needle in [(benchmark, "--arch seed"), (f"{benchmark}-impala", "--arch impala"),
                           (f"compare-{benchmark}", "compare --config"),
                           (f"roofline-{benchmark}", "roofline --config"),
                           (f"sweep-{benchmark}", "--sweep-network small,medium,large"),
                           (f"profile-{benchmark}", "py-spy record")]:
        proc = make_n(target)
        assert proc.returncode == 0, proc.stderr
        assert f"experiments/{benchmark}.yaml" in proc.stdout and needle in proc.stdout


def test_budget_overrides_reach_the_command():
    proc = make_n("atari_pong_vtrace", FRAMES=2000000, ACTORS=4, ENVS=8)
    assert proc.returncode == 0, proc.stderr
    assert "--frames 2000000" in proc.stdout and "--actors 4" in proc.stdout
    assert "--envs-per-actor 8" in proc.stdout


def test_dtype_reaches_compare_and_roofline():
    for target in ("compare-atari_pong_vtrace", "roofline-atari_pong_vtrace"):
        assert "--compute-dtype bfloat16" in make_n(target, DTYPE="bfloat16").stdout
        assert "--compute-dtype" not in make_n(target).stdout


@pytest.mark.parametrize("target", ["demo", "test", "test-all", "plots", "report", "setup",
                                    "football-setup", "dmlab-setup", "clean", "distclean", "help"])
def test_top_level_targets_parse(target):
    proc = make_n(target)
    assert proc.returncode == 0, proc.stderr


def test_help_lists_every_benchmark():
    out = subprocess.run(["make", "help"], cwd=ROOT, capture_output=True, text=True,
                         timeout=60).stdout
    for benchmark in BENCHMARKS:
        assert benchmark in out
    for target in ("make demo", "make test", "make plots", "make compare-<benchmark>"):
        assert target in out


def test_football_and_dmlab_targets_install_or_check_first():
    assert "install_football.sh" in make_n("football_11v11_easy").stdout
    assert "install_dmlab.sh" in make_n("dmlab_rooms_watermaze").stdout


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text()
    readme_head = "\n".join((ROOT / "README.md").read_text().splitlines()[:10])
    assert "make test" in ci and "make test" in readme_head and "make demo" in readme_head

"""TensorFlow's start-up lines stay off a user's terminal unless asked for."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SNIPPET = ("import sys; from seed import quiet_tf; quiet_tf.import_tensorflow(); "
           "print('after the import', file=sys.stderr)")


@pytest.fixture
def noisy_tensorflow(tmp_path):
    """A stand-in `tensorflow` that writes to file descriptor 2 on import, as TF's C++ does."""
    (tmp_path / "tensorflow.py").write_text(
        "import os\nos.write(2, b'I0000 port.cc:153] oneDNN custom operations are on\\n')\n")
    return tmp_path


def _stderr(pythonpath, **env_extra):
    env = {k: v for k, v in os.environ.items() if k != "SEED_VERBOSE"}
    env.update(env_extra, PYTHONPATH=f"{pythonpath}{os.pathsep}{ROOT}")
    return subprocess.run([sys.executable, "-c", SNIPPET], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120, check=True).stderr


def test_the_import_noise_is_hidden_and_stderr_works_after_it(noisy_tensorflow):
    assert _stderr(noisy_tensorflow).splitlines() == ["after the import"]


def test_verbose_lets_it_through(noisy_tensorflow):
    assert _stderr(noisy_tensorflow, SEED_VERBOSE="1").splitlines() == [
        "I0000 port.cc:153] oneDNN custom operations are on", "after the import"]


def test_the_verbose_flag_is_passed_on_to_the_processes_a_command_starts(monkeypatch):
    from seed import cli, quiet_tf
    monkeypatch.setenv(quiet_tf.VERBOSE_ENV, "0")  # so teardown removes what main() sets
    monkeypatch.setattr(quiet_tf, "import_tensorflow", lambda: None)
    calls = []
    parser = cli.build_parser()
    args = parser.parse_args(["--verbose", "actor", "--server", "unix:/nowhere", "--task", "0"])
    monkeypatch.setattr(cli, "build_parser", lambda: parser)
    args.fn = lambda a: calls.append(os.environ.get(quiet_tf.VERBOSE_ENV)) or 0
    monkeypatch.setattr(parser, "parse_args", lambda argv=None: args)
    assert cli.main([]) == 0 and calls == ["1"]


def test_the_cli_hides_real_tensorflow_noise_and_prints_its_own_errors():
    proc = subprocess.run([sys.executable, "-m", "seed.cli", "train", "--env", "toy:chess",
                           "--frames", "10", "--no-progress"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "unknown toy env" in lines[0]


def test_compare_reads_network_defaults_without_tensorflow_noise():
    """`seed compare` imports no TensorFlow up front; the network module it reads defaults from
    (for the roofline check after the runs) must not bring the start-up lines back."""
    code = ("from seed.bench.ceilings import full_network_kwargs; "
            "print(full_network_kwargs('nature_cnn', {})['stack_size'])")
    env = {k: v for k, v in os.environ.items() if k != "SEED_VERBOSE"}
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120, check=True)
    assert proc.stdout.strip() == "4"
    assert proc.stderr == ""

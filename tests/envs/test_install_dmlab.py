"""scripts/install_dmlab.sh on bad input: one line that names what was expected, or the failed
step and its log. Each case stops before Bazel runs (the Bazel case runs a stand-in `bazel`)."""

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "install_dmlab.sh"
VENV = Path(sys.executable).parent.parent
COMMIT = "b1db91af5b4d2f3a24466f4632a3e5e1b0829cca"
VENDORED = ROOT.parent / "shared" / "vendor" / "deepmind-lab-b1db91af.tar.xz"


def install(tmp_path, source, path_dirs=(), timeout=120):
    env = dict(os.environ, DMLAB_SOURCE=str(source), DMLAB_BUILD_DIR=str(tmp_path / "build"),
               DMLAB_FORCE="1")
    env["PATH"] = os.pathsep.join([*map(str, path_dirs), env["PATH"]])
    return subprocess.run(["bash", str(SCRIPT), str(VENV)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def errors(proc):
    return [line for line in proc.stderr.splitlines() if line.strip()]


def stand_in(directory: Path, name: str, body: str) -> Path:
    directory.mkdir(exist_ok=True)
    path = directory / name
    path.write_text("#!/usr/bin/env bash\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return directory


def test_a_missing_archive_names_it_and_the_commit(tmp_path):
    proc = install(tmp_path, tmp_path / "lab.tar.xz")
    assert proc.returncode == 1
    assert errors(proc) == [f"error: DMLAB_SOURCE archive {tmp_path / 'lab.tar.xz'} not found "
                            f"(expected google-deepmind/lab at {COMMIT})"]


def test_a_corrupt_archive_is_refused_in_one_line(tmp_path):
    archive = tmp_path / "lab.tar.xz"
    archive.write_bytes(os.urandom(4096))
    proc = install(tmp_path, archive)
    assert proc.returncode == 1 and len(errors(proc)) == 1
    assert f"DMLAB_SOURCE archive {archive} is corrupt or not a tar archive" in proc.stderr
    assert COMMIT in proc.stderr


def test_a_tree_of_another_commit_is_refused_naming_the_first_file_that_differs(tmp_path):
    tree = tmp_path / "lab"
    for line in (ROOT / "third_party" / "dmlab" / "source.sha256").read_text().splitlines():
        path = tree / line.split()[1]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("not upstream's\n")
    proc = install(tmp_path, tree)
    assert proc.returncode == 1 and len(errors(proc)) == 1
    assert (f"DMLAB_SOURCE (directory {tree}) is not google-deepmind/lab at {COMMIT}: BUILD "
            "differ") in proc.stderr


def test_an_unreachable_git_source_says_to_use_an_archive(tmp_path):
    proc = install(tmp_path, f"file://{tmp_path}/no-such-repo.git@{COMMIT[:12]}")
    assert proc.returncode == 1 and len(errors(proc)) == 1
    assert f"cannot fetch file://{tmp_path}/no-such-repo.git at {COMMIT[:12]}" in proc.stderr
    assert "set DMLAB_SOURCE to an archive or a directory" in proc.stderr


def test_a_failed_apt_install_names_the_step_and_its_log(tmp_path):
    bin_dir = stand_in(tmp_path / "bin", "dpkg-query", "exit 1\n")  # nothing installed
    stand_in(bin_dir, "apt-get", 'echo "E: Unable to locate package bazel-bootstrap"; exit 100\n')
    proc = install(tmp_path, tmp_path / "unused.tar.xz", [bin_dir])
    assert proc.returncode == 1
    log = tmp_path / "build" / "logs" / "apt.log"
    assert errors(proc) == [
        f"error: step 'apt-get install {' '.join(_apt_packages())}' failed; see {log}",
        "  E: Unable to locate package bazel-bootstrap"]


def _apt_packages():
    text = SCRIPT.read_text()
    block = text[text.index("APT_PACKAGES=(") + len("APT_PACKAGES=("):]
    return block[:block.index(")")].split()


@pytest.mark.skipif(not VENDORED.exists(), reason="needs the vendored DMLab source")
def test_a_failed_bazel_build_names_the_step_and_its_log_not_bazels_output(tmp_path):
    bin_dir = stand_in(tmp_path / "bin", "bazel",
                       'for i in $(seq 200); do echo "INFO: line $i"; done\n'
                       'echo "ERROR: /src/BUILD:12:11: Compiling engine/foo.c failed"; exit 1\n')
    proc = install(tmp_path, VENDORED, [bin_dir], timeout=300)
    assert proc.returncode == 1
    log = tmp_path / "build" / "logs" / "bazel-build.log"
    assert errors(proc) == [
        f"error: step 'bazel build //python/pip_package:build_pip_package' failed; see {log}",
        "  ERROR: /src/BUILD:12:11: Compiling engine/foo.c failed"]
    assert "INFO: line 200" in log.read_text() and "INFO: line" not in proc.stdout
    assert proc.stdout.startswith(f"DeepMind Lab source: archive {VENDORED} "
                                  f"(google-deepmind/lab {COMMIT}, partial: 305 files absent)")

"""seed.metrics.machine: the learner's device as config.json records it (no GPU needed)."""


class _FakeDevice:
    def __init__(self, name, device_type):
        self.name, self.device_type = name, device_type


def test_learner_device_is_cpu_without_a_visible_gpu(monkeypatch):
    import tensorflow as tf
    from seed.metrics.machine import learner_device
    monkeypatch.setattr(tf.config, "list_physical_devices",
                        lambda kind=None: [] if kind == "GPU" else
                        [_FakeDevice("/physical_device:CPU:0", "CPU")])
    assert learner_device() == "CPU"


def test_learner_device_names_the_gpu_tensorflow_sees(monkeypatch):
    import tensorflow as tf
    from seed.metrics.machine import learner_device
    gpu = _FakeDevice("/physical_device:GPU:0", "GPU")
    calls = []

    def list_devices(kind=None):
        calls.append(kind)
        return [gpu] if kind == "GPU" else []

    monkeypatch.setattr(tf.config, "list_physical_devices", list_devices)
    monkeypatch.setattr(tf.config.experimental, "get_device_details",
                        lambda d: {"device_name": "NVIDIA H200", "compute_capability": (9, 0)}
                        if d is gpu else {})
    assert learner_device() == "GPU:0 (NVIDIA H200)"
    assert "GPU" in calls
    # No name in the details (or details unavailable): the index alone.
    monkeypatch.setattr(tf.config.experimental, "get_device_details", lambda d: {})
    assert learner_device() == "GPU:0"

    def boom(d):
        raise ValueError("no details")
    monkeypatch.setattr(tf.config.experimental, "get_device_details", boom)
    assert learner_device() == "GPU:0"


def test_learner_device_here_matches_tensorflow():
    import tensorflow as tf
    from seed.metrics.machine import learner_device
    dev = learner_device()
    if tf.config.list_physical_devices("GPU"):
        assert dev.startswith("GPU:0")
    else:
        assert dev == "CPU"


def _git(repo, *args):
    import subprocess
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
                        "PATH": "/usr/bin:/bin"})


def test_code_version_names_the_commit_and_whether_the_code_differs_from_it(tmp_path):
    from seed.metrics.machine import code_version
    assert code_version(tmp_path) is None  # not a git checkout
    (tmp_path / "seed").mkdir()
    (tmp_path / "seed" / "a.py").write_text("x = 1\n")
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "r.csv").write_text("1\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "one")
    import subprocess
    head = subprocess.run(["git", "-C", str(tmp_path), "rev-parse", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    assert len(head) == 40
    assert code_version(tmp_path) == {"commit": head, "dirty": False}
    # A changed result file or a new untracked file is not a change of the code ...
    (tmp_path / "results" / "r.csv").write_text("2\n")
    (tmp_path / "seed" / "new.py").write_text("y = 2\n")
    assert code_version(tmp_path) == {"commit": head, "dirty": False}
    # ... a changed tracked source file is.
    (tmp_path / "seed" / "a.py").write_text("x = 2\n")
    assert code_version(tmp_path) == {"commit": head, "dirty": True}


def test_machine_facts_record_this_checkouts_code():
    from pathlib import Path
    from seed.metrics.machine import machine_facts
    facts = machine_facts("CPU")
    if (Path(__file__).resolve().parents[2] / ".git").exists():
        assert len(facts["code"]["commit"]) == 40
        assert isinstance(facts["code"]["dirty"], bool)
    else:  # a copy without git history: nothing recorded rather than a guess
        assert "code" not in facts

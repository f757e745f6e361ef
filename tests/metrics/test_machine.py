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

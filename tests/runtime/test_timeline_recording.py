"""timeline (the run's instrumentation): the SEED learner service and actors record their
stamps and write them into the run directory when they stop; off (the default), they stamp
into timeline.OFF and nothing is written."""

import json
import threading

import numpy as np

from seed.bench import timeline as analysis
from seed.config import from_saved, make_config
from seed.metrics import timeline as rec
from seed.runtime.architectures import architecture
from seed.runtime.learner_core import EnvSpec, LearnerCore
from seed.runtime.seed_arch.actor import run_actor
from seed.runtime.seed_arch.learner import SeedLearnerService
from seed.transport.channel import start_server


def _serve(config, actors_steps: int):
    """The service on a real server, ``config.actors`` actors in threads for
    ``actors_steps`` env steps each; returns the core and the service, closed."""
    core = LearnerCore(config, EnvSpec.probe(config.env, config.env_kwargs))
    service = SeedLearnerService(core)
    server, address = start_server(service, "",
                                   max_workers=architecture("seed").grpc_workers(config))
    codes = []
    try:
        threads = [threading.Thread(target=lambda t=t: codes.append(
            run_actor(address, task=t, max_steps=actors_steps))) for t in range(config.actors)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
    finally:
        service.close()
        core.stop()
        server.stop(0)
    assert codes == [0] * config.actors
    return core, service


def test_a_recorded_run_writes_stamps_that_make_lock_step_cycles(tmp_path):
    config = make_config(env="toy:catch", actors=2, envs_per_actor=2, train=False,
                         frames=10_000, progress=False, logdir=str(tmp_path), timeline=True)
    _, service = _serve(config, actors_steps=400)  # 200 steps of each actor's 2 envs
    assert isinstance(service.timeline, rec.LearnerTimeline)
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == [rec.ACTOR_FILE.format(task=0), rec.ACTOR_FILE.format(task=1),
                     rec.LEARNER_FILE]
    with np.load(tmp_path / rec.LEARNER_FILE) as f:
        meta = json.loads(str(f["meta"]))
        assert meta["lockstep"] and meta["actors"] == 2 and meta["frames_per_step"] == 1
        assert set(f["request_key"].tolist()) == {0, 2}  # each stream's first env id
        assert set(f["request_actor"].tolist()) == {0, 1}
        t, bt = f["request_t"], f["batch_t"]
        answered = f["request_batch"] >= 0
        assert answered.sum() >= 390  # every request but those cut off at the stop
        assert (np.diff(t[answered], axis=1) >= 0).all()  # in, decoded, ... yielded in order
        assert (np.diff(bt, axis=1) >= 0).all() and (f["batch_rows"] > 0).all()
    with np.load(tmp_path / rec.ACTOR_FILE.format(task=1)) as f:
        assert json.loads(str(f["meta"]))["task"] == 1
        assert set(f["step_key"].tolist()) == {2}
        assert np.isnan(f["step_t"][0, :2]).all()  # the first request: sent before any actions
    s = analysis.analyse(tmp_path, skip_first=0.05, skip_last=0.05).to_json()
    assert s["cycles"] >= 100
    assert abs(s["check"]["sum_of_segments_ms"] - s["check"]["interval_ms"]) < 1e-6
    assert s["check"]["max_abs_difference_ms"] < 1e-6
    assert all(seg["mean_ms"] >= 0 for seg in s["segments"])


def test_off_by_default_nothing_is_recorded_or_written(tmp_path):
    config = make_config(env="toy:catch", actors=1, envs_per_actor=2, train=False,
                         frames=10_000, progress=False, logdir=str(tmp_path))
    assert config.timeline is False
    core, service = _serve(config, actors_steps=20)
    assert service.timeline is rec.OFF and core.stats.env_steps >= 20
    assert list(tmp_path.iterdir()) == []


def test_a_config_saved_with_the_switch_in_transport_reads_it_as_the_runs():
    saved = json.loads(json.dumps(make_config(actors=1).to_json()))
    assert "timeline" not in saved["transport"] and saved["timeline"] is False
    saved["transport"]["timeline"] = True  # where runs before it moved saved it
    del saved["timeline"]
    config = from_saved(saved)
    assert config.timeline is True and config.transport == make_config().transport
    flat = {"env": "toy:catch", "agent": "vtrace", "timeline": True, "server": ""}
    assert from_saved(flat).timeline is True  # a flat config.json, older still

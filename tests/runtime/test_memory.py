"""The buffer's size in memory, known from the unroll spec before the run starts."""

import gc
import tracemalloc

import numpy as np
import pytest

from seed.buffers.prioritized import PrioritizedReplay
from seed.buffers.unroll_queue import UnrollQueue
from seed.config import ConfigError, make_config
from seed.runtime import memory
from seed.types import ArraySpec, EnvOutput
from seed.unroll_spec import UnrollSpec
from seed.unrolls import UnrollBuilder

# R2D2 on Atari as experiments/atari_pong_r2d2.yaml runs it: 84x84x4 frames, 40 + 1 steps,
# an LSTM of 256, 6 actions.
ATARI_R2D2 = UnrollSpec(steps=41, observation=ArraySpec("uint8", (84, 84, 4)),
                        core_state=(ArraySpec("float32", (256,)),) * 2,
                        agent_output={"q_values": ArraySpec("float32", (6,)),
                                      "action": ArraySpec("int32", ())})
# Per step: prev_action int32, reward float32, done bool, the frame, 6 Q values, the action;
# the two LSTM states once.
ATARI_R2D2_BYTES = 41 * (4 + 4 + 1 + 84 * 84 * 4 + 6 * 4 + 4) + 2 * 256 * 4  # 1,160,749


def _filled(buffer, spec: UnrollSpec, num_envs: int, overlap: int) -> None:
    """Fill ``buffer`` as SEED's learner does: every env steps at once through an
    :class:`UnrollBuilder`, each unroll it completes put in, until the buffer has been filled
    twice over (so what it holds is what it keeps, not what it held first)."""
    builder = UnrollBuilder(spec, num_envs, overlap)
    rng = np.random.default_rng(0)
    rows = np.arange(num_envs)
    observation = rng.integers(0, 255, (num_envs,) + spec.observation.shape).astype(
        spec.observation.dtype)
    inserted = 0
    while inserted < 2 * buffer.capacity:
        wanted = builder.rows_wanting_state(rows)
        state = tuple(np.ones((int(wanted.sum()),) + s.shape, s.dtype) for s in spec.core_state)
        outputs = {k: np.zeros((num_envs,) + s.shape, s.dtype)
                   for k, s in spec.agent_output.items() if k != "action"}
        for _, unroll in builder.append_batch(
                rows, state, np.zeros(num_envs, np.int32),
                EnvOutput(np.zeros(num_envs, np.float32), np.zeros(num_envs, bool), observation),
                outputs, np.zeros(num_envs, np.int32)):
            if isinstance(buffer, UnrollQueue) and len(buffer) == buffer.capacity:
                buffer.get_many(1)
            buffer.put(unroll)
            inserted += 1


def _held_bytes_per_item(make_buffer, spec, num_envs, overlap) -> float:
    """The bytes a full buffer holds per unroll, as tracemalloc counts NumPy's and Python's
    allocations (after a first small fill, so that no module imported on first use counts)."""
    _filled(UnrollQueue(1), spec, num_envs, overlap)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        buffer = make_buffer()
        _filled(buffer, spec, num_envs, overlap)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    return held / buffer.capacity


def test_the_bytes_of_an_unroll_follow_from_its_spec():
    assert ATARI_R2D2.nbytes == ATARI_R2D2_BYTES == 1_160_749
    assert memory.item_bytes(ATARI_R2D2) == ATARI_R2D2_BYTES + 8 * memory.ARRAY_OVERHEAD


@pytest.mark.parametrize("num_envs", [32, 1])
def test_a_full_replay_holds_what_the_estimate_says(num_envs):
    """32 envs completing their sequences together share one copy per leaf (each unroll a
    view of it); one env's unrolls are each their own. Capacity a multiple of 32: no copy is
    kept alive by a view of an unroll still held after the others were replaced."""
    each = _held_bytes_per_item(lambda: PrioritizedReplay(32), ATARI_R2D2, num_envs, 11)
    assert ATARI_R2D2_BYTES < each <= memory.item_bytes(ATARI_R2D2)
    assert each == pytest.approx(memory.item_bytes(ATARI_R2D2), rel=0.002)


def test_a_full_fifo_of_small_unrolls_holds_at_most_the_estimate():
    """Catch's V-trace unrolls (10 x 5 float32 frames, 20 + 1 steps, no core state): the
    Python objects are a good part of each, and the estimate still bounds them."""
    spec = UnrollSpec(steps=21, observation=ArraySpec("float32", (10, 5)), core_state=(),
                      agent_output={"policy_logits": ArraySpec("float32", (3,)),
                                    "baseline": ArraySpec("float32", ()),
                                    "action": ArraySpec("int32", ())})
    assert spec.nbytes == 21 * (4 + 4 + 1 + 200 + 12 + 4 + 4)
    for num_envs in (8, 1):
        each = _held_bytes_per_item(lambda: UnrollQueue(32), spec, num_envs, 1)
        assert spec.nbytes < each <= memory.item_bytes(spec)


def test_a_buffer_larger_than_its_share_of_memory_is_refused_in_one_line():
    available = 2**30
    each = memory.item_bytes(ATARI_R2D2)  # 1,163,821
    fits = int(0.8 * available) // each
    assert fits == 738
    memory.check_buffer(PrioritizedReplay(fits), ATARI_R2D2, available)
    with pytest.raises(ConfigError) as e:
        memory.check_buffer(PrioritizedReplay(10_000), ATARI_R2D2, available)
    assert str(e.value) == (
        "the replay of 10,000 sequences would take 10.8 GiB (1.11 MiB each), more than 80% "
        "of the 1 GiB of memory available (819 MiB); the largest replay_capacity that fits "
        "is 738")
    with pytest.raises(ConfigError, match="unroll FIFO of 739 unrolls .* the largest "
                                          "queue_capacity that fits is 738"):
        memory.check_buffer(UnrollQueue(739), ATARI_R2D2, available)


def test_a_run_whose_replay_does_not_fit_is_refused_before_its_directory_exists(
        tmp_path, monkeypatch):
    """R2D2 on Catch, on a machine with 20 MB available: its 10,000 sequences do not fit."""
    from seed.runtime import run

    class Memory:
        available = 20 * 2**20

    monkeypatch.setattr(memory.psutil, "virtual_memory", lambda: Memory)
    run_dir = tmp_path / "run"
    config = make_config(env="toy:catch", agent="r2d2", actors=1, envs_per_actor=2,
                         frames=1000, progress=False, logdir=str(run_dir))
    with pytest.raises(ConfigError, match=r"the replay of 10,000 sequences would take .* "
                                          r"the largest replay_capacity that fits is [\d,]+$"):
        run.train(config)
    assert not run_dir.exists()


def test_the_r2d2_agents_replay_holds_what_its_spec_says():
    """The real agent's spec (Catch, R2D2's recurrent MLP): what its replay holds per sequence,
    filled through SEED's builder with the agent's overlap, is the spec's arrays and at most
    the estimate's objects."""
    from seed.agents import make_agent
    from seed.runtime.learner_core import EnvSpec

    config = make_config(env="toy:catch", agent="r2d2", actors=1, envs_per_actor=4,
                         replay_capacity=32, replay_min_size=1)
    env = EnvSpec.probe(config.env, config.env_kwargs)
    agent = make_agent(config, env.observation_space, env.action_space)
    spec = UnrollSpec.of(agent, env.observation_space)
    state = [np.asarray(s) for s in agent.initial_state(1)]
    per_step = 4 + 4 + 1 + 10 * 5 * 4 + 3 * 4 + 4  # 3 Q values; a 10 x 5 float32 frame
    assert spec.nbytes == (config.unroll_length + 1) * per_step + sum(s.nbytes for s in state)
    each = _held_bytes_per_item(agent.new_buffer, spec, 4, agent.unroll_overlap)
    assert spec.nbytes < each <= memory.item_bytes(spec)

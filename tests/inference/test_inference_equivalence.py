"""The SEED learner's inference, with the core state kept by the agent on the TensorFlow
side, acts and builds unrolls exactly as the path it replaced (issue 24).

The reference here is written apart from the agents' inference: it keeps every env's core
state and previous action in NumPy, calls the network on them (eagerly, no XLA), samples
with its own ``tf.random.Generator`` seeded as the agent's, starts an env over when its
actor's run id changes, and assembles unrolls by hand. The path under test is the real
``SeedLearnerService._serve_batch`` on the same recorded batches (two actors, uneven
batches, episode ends, a reconnect mid-way). Without XLA the outputs must be bit-identical;
with ``jit_inference`` XLA may fuse and reorder float ops, so logits and baselines are
compared to float tolerance (actions, frames, states and everything else exactly).
"""

from concurrent.futures import Future

import numpy as np
import pytest
import tensorflow as tf

from seed.config import make_config
from seed.inference.batcher import Batch
from seed.runtime.learner_core import EnvSpec, LearnerCore
from seed.runtime.seed_arch.learner import ActorStep, SeedLearnerService
from seed.types import EnvOutput

T = 3  # unroll length: several unrolls and overlaps in a short run
TICKS = 14
RECONNECT_AT = 8  # actor 0 comes back with a new run id at this tick


def recorded_batches(config, obs_space, seed=5):
    """Per tick: the actor steps of one inference batch, as ActorSteps."""
    rng = np.random.default_rng(seed)
    k = config.envs_per_actor
    ticks = []
    for t in range(TICKS):
        steps = []
        for actor in range(config.actors):
            if t > 0 and rng.random() < 0.3:
                continue  # this actor's request misses the batch
            run = f"actor{actor}-run{2 if actor == 0 and t >= RECONNECT_AT else 1}"
            ids = np.arange(actor * k, (actor + 1) * k, dtype=np.int64)
            obs = rng.integers(0, 256, (k,) + tuple(obs_space.shape)).astype(obs_space.dtype)
            done = (rng.random(k) < 0.2) | (t == 0)
            steps.append(ActorStep(actor, run, ids, rng.normal(size=k).astype(np.float32),
                                   done, obs))
        ticks.append(steps or ticks[-1][:1])  # never an empty batch
    return ticks


def served(config, spec, ticks):
    """Actions per tick and the unrolls, from the real learner service."""
    core = LearnerCore(config, spec)
    service = SeedLearnerService(core)
    unrolls = []
    core.enqueue = lambda unroll: unrolls.append(unroll) or True
    actions = []
    try:
        for steps in ticks:
            futures = [Future() for _ in steps]
            service._serve_batch(Batch(steps, futures, sum(len(s.env_ids) for s in steps),
                                       lambda batch: None))
            actions.append(np.concatenate([f.result() for f in futures]))
    finally:
        service.close()
        core.stop()
    return core.agent, actions, unrolls


def reference(agent, config, ticks):
    """The same batches through the old path, written out: host state, eager network."""
    net = agent.network
    initial = tuple(np.asarray(s)[0] for s in net.initial_state(1))
    n = config.num_envs
    state = [tuple(np.array(s) for s in initial) for _ in range(n)]
    prev = np.zeros(n, np.int32)
    runs = [None] * n
    partial = [[] for _ in range(n)]
    gen = tf.random.Generator.from_seed(config.seed)
    actions, unrolls = [], []
    for steps in ticks:
        for s in steps:
            for e in s.env_ids.tolist():
                if runs[e] != s.run_id:
                    runs[e], state[e], prev[e], partial[e] = s.run_id, initial, 0, []
        ids = np.concatenate([s.env_ids for s in steps])
        env_output = EnvOutput(*(np.concatenate([getattr(s, f) for s in steps])
                                 for f in ("reward", "done", "observation")))
        before = tuple(np.stack([state[e][i] for e in ids]) for i in range(len(initial)))
        out, after = net(tf.constant(prev[ids]), EnvOutput(*map(tf.constant, env_output)),
                         tuple(map(tf.constant, before)))
        logits = out["policy_logits"]
        seed = gen.make_seeds(1)[:, 0]
        action = tf.random.stateless_categorical(logits, 1, seed, dtype=tf.int32)[:, 0].numpy()
        output = {"action": action, "policy_logits": logits.numpy(),
                  "baseline": out["baseline"].numpy()}
        for row, e in enumerate(ids.tolist()):
            partial[e].append((tuple(s[row] for s in before), prev[e],
                               *(x[row] for x in env_output),
                               {k: v[row] for k, v in output.items()}))
            state[e] = tuple(np.asarray(s)[row] for s in after)
            prev[e] = action[row]
            if len(partial[e]) == T + 1:
                unrolls.append((e, partial[e]))
                partial[e] = partial[e][-1:]
        actions.append(action)
    return actions, unrolls


@pytest.mark.parametrize("jit_inference", [False, True])
def test_state_on_the_tf_side_acts_and_unrolls_as_the_host_state_path(jit_inference):
    config = make_config(env="atari:Pong", network="nature_cnn", agent="vtrace", actors=2,
                         envs_per_actor=3, unroll_length=T, batch_size=2, train=False,
                         jit_inference=jit_inference, inference_timeout_ms=1000.0, seed=3,
                         frames=10_000, progress=False)
    spec = EnvSpec.probe(config.env, config.env_kwargs)
    ticks = recorded_batches(config, spec.observation_space)
    agent, actions, unrolls = served(config, spec, ticks)
    want_actions, want_unrolls = reference(agent, config, ticks)

    for got, want in zip(actions, want_actions, strict=True):
        np.testing.assert_array_equal(got, want)
    assert len(want_unrolls) >= 6 and len(unrolls) == len(want_unrolls)
    # The service completes unrolls in batch row order, as the reference does.
    floats = {"policy_logits", "baseline"}
    for u, (env, steps) in zip(unrolls, want_unrolls):
        for got, want in zip(u.core_state, steps[0][0], strict=True):
            np.testing.assert_array_equal(got, want)  # the frame stack before the first step
        np.testing.assert_array_equal(u.prev_action, [s[1] for s in steps])
        np.testing.assert_array_equal(u.env_output.reward, [s[2] for s in steps])
        np.testing.assert_array_equal(u.env_output.done, [s[3] for s in steps])
        np.testing.assert_array_equal(u.env_output.observation, np.stack([s[4] for s in steps]))
        assert set(u.agent_output) == set(steps[0][5])
        for key, got in u.agent_output.items():
            want = np.stack([s[5][key] for s in steps])
            if jit_inference and key in floats:
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
            else:
                np.testing.assert_array_equal(got, want)


def test_the_core_state_table_is_neither_a_parameter_nor_checkpointed():
    """Checkpoints hold what they held before (network and optimizer): an actor that
    reconnects after a resume starts a new run from the initial state anyway."""
    config = make_config(actors=1, envs_per_actor=2, network_kwargs={"lstm_size": 4})
    spec = EnvSpec.probe(config.env, config.env_kwargs)
    from seed.agents import make_agent
    agent = make_agent(config, spec.observation_space, spec.action_space)
    table = {id(v) for v in agent.core_states.variables}
    assert len(table) == 2
    assert not table & {id(v) for v in agent.parameters()}
    assert all(k.startswith(("network/", "optimizer/")) for k in agent.checkpoint_state())

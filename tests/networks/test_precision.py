"""bfloat16 compute (seed.networks.precision): the torsos in bfloat16 match float32 within
bfloat16's rounding, variables, heads and losses stay float32, checkpoints do not care."""

import numpy as np
import pytest
import tensorflow as tf
from gymnasium import spaces

from seed.agents import make_agent
from seed.config import make_config
from seed.networks import make_network, precision
from seed.networks.relu_recording import recording_relu_outputs
from seed.types import EnvOutput

A = 5
# bfloat16 keeps 8 significant bits: a value rounds to within a relative U of itself.
U = 2.0 ** -8
# Small shapes keep the tests fast; the layers are the real ones.
NETWORKS = {
    "mlp": ((10, 5), np.float32, {"hidden_sizes": (64, 64)}),
    "nature_cnn": ((36, 36, 1), np.uint8, {}),
    "impala_resnet": ((24, 24, 1), np.uint8, {"channels": (8, 16), "fc_size": 64}),
    "dmlab": ((24, 32, 3), np.uint8, {"channels": (8, 16), "fc_size": 64, "lstm_size": 32}),
    "football": ((24, 32, 2), np.uint8, {"channels": (8, 16), "fc_size": 64}),
}
# The bfloat16 layers of each network above: convolutions and dense layers of its torso.
TORSO_LAYERS = {"mlp": 2, "nature_cnn": 4, "impala_resnet": 2 * 5 + 1, "dmlab": 2 * 5 + 1,
                "football": 2 * 5 + 1}


def _space(shape, dtype):
    return spaces.Box(0, 255 if dtype == np.uint8 else 1, shape, dtype)


def _inputs(shape, dtype, steps=3, batch=4, seed=0):
    rng = np.random.default_rng(seed)
    obs = (rng.integers(0, 256, (steps, batch) + shape) if dtype == np.uint8
           else rng.random((steps, batch) + shape))
    done = np.zeros((steps, batch), bool)
    done[0] = True
    return (tf.constant(rng.integers(0, A, (steps, batch)), tf.int32),
            EnvOutput(tf.constant(rng.choice([-1.0, 0.0, 1.0], (steps, batch)), tf.float32),
                      tf.constant(done), tf.constant(obs.astype(dtype))))


def _unroll(net, inputs, dtype):
    prev, env_output = inputs
    with precision.computing_in(dtype), recording_relu_outputs() as relus:
        outputs, _ = net(prev, env_output, net.initial_state(prev.shape[1]), unroll=True)
    return outputs, relus


@pytest.mark.parametrize("name", sorted(NETWORKS))
def test_a_bfloat16_torso_matches_float32_within_bfloat16_rounding(name):
    shape, dtype, kwargs = NETWORKS[name]
    tf.random.set_seed(1)
    net = make_network(name, A, _space(shape, dtype), **kwargs)
    inputs = _inputs(shape, dtype)
    want, _ = _unroll(net, inputs, tf.float32)
    got, relus = _unroll(net, inputs, tf.bfloat16)
    # The torso really ran in bfloat16 (its ReLU outputs), the heads in float32.
    assert relus and {y.dtype for _, y in relus} == {tf.bfloat16}
    assert {v.dtype for v in got.values()} == {tf.float32}
    # Each bfloat16 layer rounds its input and its weights (a relative U each; the products
    # sum in float32) and its output (U again): at most 3U of relative error a layer, and the
    # ReLUs, pools and skips after it do not grow it. So L layers stay within 3UL; the
    # float32 LSTM and heads carry the torso's relative error through (the gates' slopes are
    # at most 1).
    tolerance = 3 * U * TORSO_LAYERS[name]
    for key, y in want.items():
        error = np.linalg.norm(got[key].numpy() - y.numpy()) / np.linalg.norm(y.numpy())
        assert 0 < error < tolerance, (key, error, tolerance)


def test_outside_any_block_and_in_float32_the_network_computes_in_float32():
    shape, dtype, kwargs = NETWORKS["nature_cnn"]
    net = make_network("nature_cnn", A, _space(shape, dtype), **kwargs)
    prev, env_output = _inputs(shape, dtype)
    with recording_relu_outputs() as relus:
        net(prev, env_output, net.initial_state(4), unroll=True)
    assert {y.dtype for _, y in relus} == {tf.float32}
    assert precision.compute_dtype() == tf.float32


def test_the_compute_dtypes_in_the_train_step_and_in_inference():
    f32, bf16 = tf.float32, tf.bfloat16
    assert precision.train_and_inference_dtypes("float32") == (f32, f32)
    assert precision.train_and_inference_dtypes("bfloat16") == (bf16, bf16)
    assert precision.train_and_inference_dtypes("bfloat16_train") == (bf16, f32)
    with pytest.raises(ValueError, match="compute_dtype must be float32 | bfloat16"):
        precision.train_and_inference_dtypes("float16")


# -- the agents ------------------------------------------------------------------------------

OBS = spaces.Box(0.0, 1.0, (6,), np.float32)


def _agent(agent="vtrace", compute_dtype="float32", seed=0):
    fields = {"burn_in": 1, "replay_min_size": 2} if agent == "r2d2" else {}
    config = make_config(agent=agent, network="mlp", compute_dtype=compute_dtype, seed=seed,
                         network_kwargs={"hidden_sizes": (32, 32), "lstm_size": 8}, actors=1,
                         envs_per_actor=4, unroll_length=4, batch_size=2, **fields)
    tf.random.set_seed(seed)
    return make_agent(config, OBS, spaces.Discrete(3))


def _infer(agent, seed=0):
    rng = np.random.default_rng(seed)
    env_output = EnvOutput(np.zeros(4, np.float32), np.ones(4, bool),
                           rng.random((4, 6)).astype(np.float32))
    agent.reset_core_state(np.arange(4, dtype=np.int32))
    return agent.infer(np.arange(4, dtype=np.int32), np.zeros(4, np.int32), env_output)[1]


def _one_train_step(agent):
    from seed.bench.costs import synthetic_unrolls
    buffer = agent.new_buffer()
    for unroll in synthetic_unrolls(agent, OBS, count=agent.config.batch_size):
        buffer.put(unroll, timeout=0)
    inputs, _ = agent._take_batch(buffer)
    # The traced train function itself, for its outputs' dtypes (train_step makes floats).
    return agent._train_fns[True](*inputs)


@pytest.mark.parametrize("agent_name", ["vtrace", "r2d2"])
def test_a_bfloat16_train_step_keeps_variables_loss_and_gradients_float32(agent_name):
    agent = _agent(agent_name, "bfloat16")
    before = [v.numpy() for v in agent.network.trainable_variables]
    metrics, _ = _one_train_step(agent)
    assert metrics["loss"].dtype == tf.float32 and np.isfinite(metrics["loss"].numpy())
    assert metrics["grad_norm"].dtype == tf.float32 and metrics["grad_norm"].numpy() > 0
    # The torso's ReLUs ran in bfloat16: the dead-unit shares read them.
    assert any(k.startswith("dead_relu_") for k in metrics)
    # Gradients reached the float32 variables through the casts, and moved every one.
    variables = agent.network.trainable_variables
    assert {v.dtype for v in variables} == {tf.float32}
    assert all(not np.array_equal(b, v.numpy()) for b, v in zip(before, variables))
    # the optimizer's moments too (its step count is an integer)
    assert {str(v.dtype) for v in agent.optimizer.variables} == {"float32", "int64"}


def test_bfloat16_train_infers_in_float32_and_bfloat16_infers_in_bfloat16():
    reference = _infer(_agent("vtrace", "float32"))
    train_only = _infer(_agent("vtrace", "bfloat16_train"))
    everywhere = _infer(_agent("vtrace", "bfloat16"))
    for key in ("policy_logits", "baseline"):
        assert train_only[key].dtype == everywhere[key].dtype == np.float32
        np.testing.assert_array_equal(train_only[key], reference[key])  # same variables
        error = (np.linalg.norm(everywhere[key] - reference[key])
                 / np.linalg.norm(reference[key]))
        assert 0 < error < 3 * U * TORSO_LAYERS["mlp"]  # as derived above


@pytest.mark.parametrize("saved,loaded", [("bfloat16", "float32"), ("float32", "bfloat16")])
def test_checkpoints_are_interchangeable_between_dtypes(saved, loaded):
    source = _agent("vtrace", saved, seed=1)
    rng = np.random.default_rng(5)  # a mid-run agent: optimizer moments and step count too
    for v in source._checkpointed.variables.values():
        v.assign(np.asarray(rng.integers(1, 1000, v.shape) if "int" in str(v.dtype)
                            else rng.normal(0, 0.1, v.shape), v.numpy().dtype))
    target = _agent("vtrace", loaded, seed=2)
    target.restore_state(source.checkpoint_state())
    for name, value in source.checkpoint_state().items():
        np.testing.assert_array_equal(target.checkpoint_state()[name], value)
    # Read back in float32, both act alike: the same variables, whatever they computed in.
    as_float32 = _agent("vtrace", "float32", seed=3)
    as_float32.restore_state(target.checkpoint_state())
    reference = _agent("vtrace", "float32", seed=4)
    reference.restore_state(source.checkpoint_state())
    np.testing.assert_array_equal(_infer(as_float32)["policy_logits"],
                                  _infer(reference)["policy_logits"])

"""FLOPs counted from the layers (seed.networks.flops): by hand for the Nature CNN, against
TensorFlow's own profiler for every network, and per train step for each agent."""

import numpy as np
import pytest
import tensorflow as tf
from gymnasium import spaces

from seed.agents import make_agent
from seed.config import make_config
from seed.networks import flops, make_network
from seed.types import EnvOutput

PONG = spaces.Box(0, 255, (84, 84, 1), np.uint8)


def test_the_nature_cnn_on_pong_frames_by_hand():
    net = make_network("nature_cnn", 6, PONG)
    layers = flops.layer_flops(net, (84, 84, 1), np.uint8)
    # 84x84x4 -> conv 8x8/4 -> 20x20x32 -> conv 4x4/2 -> 9x9x64 -> conv 3x3/1 -> 7x7x64
    # -> FC 3136 x 512 -> policy 512 x 6 and baseline 512 x 1; 2 FLOPs a multiply-add.
    want = [("conv1", 2 * 20 * 20 * 8 * 8 * 4 * 32),  # 6,553,600
            ("conv2", 2 * 9 * 9 * 4 * 4 * 32 * 64),  # 5,308,416
            ("conv3", 2 * 7 * 7 * 3 * 3 * 64 * 64),  # 3,612,672
            ("fc", 2 * 3136 * 512),  # 3,211,264
            ("dense", 2 * 512 * 6), ("dense", 2 * 512 * 1)]  # the policy, the baseline
    assert layers == want
    step = flops.step_flops(net, (84, 84, 1), np.uint8)
    assert step["forward"] == 18_693_120
    # weights' and inputs' gradients, but conv1's input (the frames) needs none
    assert step["backward"] == 2 * 18_693_120 - 6_553_600


def test_nothing_is_counted_outside_a_block_and_blocks_nest():
    net = make_network("mlp", 3, spaces.Box(0.0, 1.0, (4,), np.float32), hidden_sizes=(8,))
    call = (tf.zeros([2], tf.int32), EnvOutput(tf.zeros([2]), tf.zeros([2], tf.bool),
                                               tf.zeros([2, 4])), ())
    net(*call)  # no block open: no error, nothing kept
    with flops.counting_flops() as outer:
        with flops.counting_flops() as inner:
            net(*call)
        assert outer == []
        net(*call)
    # two rows: 2 x 2 x (4 x 8 + 8 x 3 + 8 x 1)
    assert sum(f for _, f in inner) == sum(f for _, f in outer) == 4 * (32 + 24 + 8)


def _profiler_flops(net, shape, dtype):
    """TensorFlow's profiler count of one step of one env through ``net`` (variables frozen
    into constants, static shapes)."""
    from tensorflow.python.framework.convert_to_constants import (
        convert_variables_to_constants_v2)
    state = net.initial_state(1)
    specs = (tf.TensorSpec([1], tf.int32),
             EnvOutput(tf.TensorSpec([1], tf.float32), tf.TensorSpec([1], tf.bool),
                       tf.TensorSpec((1,) + shape, tf.as_dtype(dtype))),
             tuple(tf.TensorSpec(s.shape, s.dtype) for s in state))
    concrete = tf.function(lambda a, e, s: net(a, e, s)[0]).get_concrete_function(*specs)
    graph = convert_variables_to_constants_v2(concrete).graph
    options = tf.compat.v1.profiler.ProfileOptionBuilder.float_operation()
    options["output"] = "none"
    return tf.compat.v1.profiler.profile(graph, cmd="op", options=options).total_float_ops


@pytest.mark.parametrize("name,shape,dtype,kwargs", [
    ("mlp", (10, 5), np.float32, {"hidden_sizes": (64, 64), "lstm_size": 32}),
    ("nature_cnn", (84, 84, 1), np.uint8, {}),
    ("impala_resnet", (84, 84, 1), np.uint8, {}),
    ("dmlab", (72, 96, 3), np.uint8, {}),
    ("football", (72, 96, 2), np.uint8, {}),
])
def test_the_count_agrees_with_tensorflows_profiler(name, shape, dtype, kwargs):
    net = make_network(name, 9, spaces.Box(0, 255, shape, dtype), **kwargs)
    counted = flops.step_flops(net, shape, dtype)["forward"]
    profiled = _profiler_flops(net, shape, dtype)
    # The profiler also counts some element-wise ops (bias adds, pools, residual adds),
    # which the count leaves out: it is the larger, by a few percent at most.
    assert counted <= profiled <= 1.03 * counted, (counted, profiled)


def test_an_agents_train_step_counts_every_network_pass():
    obs = spaces.Box(0.0, 1.0, (6,), np.float32)
    kwargs = {"network": "mlp", "network_kwargs": {"hidden_sizes": (16,), "lstm_size": 8},
              "actors": 1, "envs_per_actor": 4, "unroll_length": 5, "batch_size": 3}
    from seed.bench.flops import count
    vtrace = make_agent(make_config(**kwargs), obs, spaces.Discrete(3))
    step = flops.step_flops(vtrace.network, (6,), np.float32)
    assert vtrace.train_network_steps() == {"forward": 0, "forward_backward": 6}
    config = make_config(**kwargs)
    assert count(vtrace, config, obs)["train_step"] == 3 * 6 * (step["forward"]
                                                                + step["backward"])
    config = make_config(agent="r2d2", burn_in=2, **kwargs)
    r2d2 = make_agent(config, obs, spaces.Discrete(3))
    step = flops.step_flops(r2d2.network, (6,), np.float32)
    # burn-in through both networks, the other 4 steps through the target forward and
    # the online network forward and backward
    assert r2d2.train_network_steps() == {"forward": 2 + 2 + 4, "forward_backward": 4}
    assert count(r2d2, config, obs)["train_step"] == 3 * (
        8 * step["forward"] + 4 * (step["forward"] + step["backward"]))

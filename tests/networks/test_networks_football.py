"""FootballNetwork and the TF bit unpacking, on synthetic SMM planes (no gfootball needed)."""

import gymnasium as gym
import numpy as np
import pytest
import tensorflow as tf

from envs.football_packing import pack_planes, unpack_planes as np_unpack_planes
from seed.networks import make_network
from seed.networks.football import FootballNetwork, unpack_planes
from seed.types import EnvOutput

PACKED = gym.spaces.Box(0, 255, (72, 96, 2), np.uint8)
RAW = gym.spaces.Box(0, 255, (72, 96, 16), np.uint8)


def _planes(rng, shape):
    """Random SMM-like binary planes of 0/255, sparse like player dots."""
    return np.where(rng.random(shape) < 0.05, 255, 0).astype(np.uint8)


def _env_output(observation):
    lead = observation.shape[:-3]
    return EnvOutput(np.zeros(lead, np.float32), np.zeros(lead, bool), observation)


@pytest.mark.parametrize("num_planes", [16, 4, 12, 9])
def test_numpy_pack_then_tf_unpack_restores_planes(num_planes):
    rng = np.random.default_rng(num_planes)
    planes = _planes(rng, (3, 72, 96, num_planes))
    packed = pack_planes(planes)
    assert packed.dtype == np.uint8 and packed.shape == (3, 72, 96, (num_planes + 7) // 8)
    unpacked = unpack_planes(packed, num_planes).numpy()
    assert unpacked.dtype == np.float32
    np.testing.assert_array_equal(unpacked, planes / 255.0)
    np.testing.assert_array_equal(np_unpack_planes(packed, num_planes, value=255), planes)


def test_tf_unpack_bit_order_is_plane_zero_most_significant():
    packed = np.array([[0b10000000, 0b00000001]], np.uint8)
    planes = unpack_planes(packed, 16).numpy()[0]
    expected = np.zeros(16, np.float32)
    expected[[0, 15]] = 1.0
    np.testing.assert_array_equal(planes, expected)


def test_tf_unpack_rejects_wrong_depth_and_dtype():
    with pytest.raises(ValueError, match="pack into 2 bytes"):
        unpack_planes(np.zeros((1, 3), np.uint8), 16)
    with pytest.raises(ValueError, match="uint8"):
        unpack_planes(np.zeros((1, 2), np.int32), 16)


@pytest.mark.parametrize("head,keys", [("actor_critic", {"policy_logits", "baseline"}),
                                       ("q", {"q_values"})])
def test_output_shapes_single_step_and_unroll(head, keys):
    net = FootballNetwork(19, PACKED, head=head)
    assert net.initial_state(5) == ()
    rng = np.random.default_rng(0)
    obs = pack_planes(_planes(rng, (5, 72, 96, 16)))
    out, state = net(np.zeros([5], np.int32), _env_output(obs), ())
    assert set(out) == keys and state == ()
    for k, v in out.items():
        assert v.shape == ((5, 19) if k != "baseline" else (5,))
    seq = pack_planes(_planes(rng, (4, 3, 72, 96, 16)))
    out, state = net(np.zeros([4, 3], np.int32), _env_output(seq), (), unroll=True)
    for k, v in out.items():
        assert v.shape == ((4, 3, 19) if k != "baseline" else (4, 3))


def test_unroll_equals_single_steps_and_traces_in_tf_function():
    net = FootballNetwork(19, PACKED)
    seq = pack_planes(_planes(np.random.default_rng(1), (3, 2, 72, 96, 16)))
    unrolled, _ = net(np.zeros([3, 2], np.int32), _env_output(seq), (), unroll=True)
    for t in range(3):
        step, _ = net(np.zeros([2], np.int32), _env_output(seq[t]), ())
        np.testing.assert_allclose(unrolled["policy_logits"][t], step["policy_logits"],
                                   rtol=1e-5, atol=1e-5)
    traced = tf.function(lambda o: net(tf.zeros([3, 2], tf.int32), _env_output(o), (),
                                       unroll=True)[0])
    np.testing.assert_allclose(traced(tf.constant(seq))["baseline"], unrolled["baseline"],
                               rtol=1e-5, atol=1e-5)


def test_variables_exist_at_construction_and_all_get_gradients():
    net = FootballNetwork(19, PACKED)
    variables = net.trainable_variables
    # 4 stacks x 5 convs x (kernel, bias) + FC + policy + baseline.
    assert len(variables) == 4 * 5 * 2 + 2 + 2 + 2
    obs = pack_planes(_planes(np.random.default_rng(2), (4, 72, 96, 16)))
    with tf.GradientTape() as tape:
        out, _ = net(np.zeros([4], np.int32), _env_output(obs), ())
        loss = tf.reduce_sum(out["policy_logits"]) + tf.reduce_sum(out["baseline"])
    grads = tape.gradient(loss, variables)
    assert len(net.trainable_variables) == len(variables)
    assert all(g is not None for g in grads)


def test_packed_and_raw_observations_give_the_same_outputs():
    packed_net = FootballNetwork(19, PACKED)
    raw_net = FootballNetwork(19, RAW)
    assert packed_net.packed and not raw_net.packed
    for src, dst in zip(packed_net.trainable_variables, raw_net.trainable_variables):
        dst.assign(src)
    planes = _planes(np.random.default_rng(3), (2, 72, 96, 16))
    a, _ = packed_net(np.zeros([2], np.int32), _env_output(pack_planes(planes)), ())
    b, _ = raw_net(np.zeros([2], np.int32), _env_output(planes), ())
    np.testing.assert_allclose(a["policy_logits"], b["policy_logits"], rtol=1e-5, atol=1e-5)


def test_registry_builds_it_and_bad_arguments_fail():
    net = make_network("football", 19, PACKED, head="q", channels=(8, 8, 8, 8), fc_size=32)
    assert isinstance(net, FootballNetwork) and net.num_actions == 19
    with pytest.raises(ValueError, match="unknown head"):
        FootballNetwork(19, PACKED, head="dueling")
    with pytest.raises(ValueError, match="num_planes"):
        FootballNetwork(19, gym.spaces.Box(0, 255, (72, 96, 3), np.uint8))
    small = FootballNetwork(19, gym.spaces.Box(0, 255, (72, 96, 1), np.uint8), num_planes=4)
    out, _ = small(np.zeros([1], np.int32),
                   _env_output(pack_planes(_planes(np.random.default_rng(4), (1, 72, 96, 4)))), ())
    assert out["policy_logits"].shape == (1, 19)

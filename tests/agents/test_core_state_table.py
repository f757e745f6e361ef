import numpy as np
import tensorflow as tf

from seed.agents.core_state_table import CoreStateTable


def initial_state(batch):
    return (tf.zeros([batch, 3]), tf.fill([batch], -1))


def test_rows_are_kept_per_env_across_steps():
    table = CoreStateTable(4, initial_state)
    ids = tf.constant([1, 3])
    h, c = table.read(ids)
    np.testing.assert_array_equal(h, 0)
    np.testing.assert_array_equal(c, -1)
    table.write(ids, (tf.constant([[1.0] * 3, [3.0] * 3]), tf.constant([10, 30])))
    h, c = table.host_read(np.array([3, 1, 0]))
    np.testing.assert_array_equal(h[:, 0], [3, 1, 0])
    np.testing.assert_array_equal(c, [30, 10, -1])
    assert not any(v.trainable for v in table.variables)


def test_a_reset_puts_only_those_envs_back_to_the_initial_state():
    table = CoreStateTable(4, initial_state)
    all_ids = np.arange(4)
    table.write(tf.constant(all_ids, tf.int32), (tf.fill([4, 3], 5.0), tf.fill([4], 7)))
    table.host_reset(np.array([0, 1]))
    h, c = table.host_read(all_ids)
    np.testing.assert_array_equal(h[:, 0], [0, 0, 5, 5])
    np.testing.assert_array_equal(c, [-1, -1, 7, 7])


def test_a_stateless_network_has_an_empty_table():
    table = CoreStateTable(2, lambda batch: ())
    assert table.variables == () and table.host_read(np.arange(2)) == ()
    table.host_reset(np.arange(2))

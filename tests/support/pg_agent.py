"""A third agent, written from docs/design.md's recipe alone ("Adding an env or an agent"):
a plain policy gradient (REINFORCE with a learned baseline) on the actor-critic head.

The return of each step of an unroll is its discounted reward to go, bootstrapped with the
baseline of the unroll's last step; the policy climbs ``log pi(a) * (return - baseline)``,
the baseline regresses on the return. No off-policy correction: SEED's actions come from
the learner's own variables, at most a train step or two behind.

Registered by the tests that use it (``seed.agents.register_agent("pg", PGAgent, PGConfig)``).
"""

from __future__ import annotations

import dataclasses

import tensorflow as tf

from seed.agents import diagnostics
from seed.agents.agent_base import AgentBase
from seed.agents.optimizers import clipped_gradients
from seed.buffers.unroll_queue import UnrollQueue
from seed.config.agents import AgentConfig
from seed.networks import make_network
from seed.networks.relu_recording import recording_relu_outputs
from seed.types import ArraySpec, EnvOutput, stack_unrolls


@dataclasses.dataclass
class PGConfig(AgentConfig):
    """The agent's settings (``config.agent_config``; keys under ``pg`` or plain)."""

    discounting: float = 0.99
    baseline_cost: float = 0.5
    entropy_cost: float = 0.01
    queue_capacity: int = 0  # unrolls the FIFO holds; 0 = 2 x batch_size


class PGAgent(AgentBase):
    def __init__(self, config, observation_space, action_space):
        network = make_network(config.network, int(action_space.n), observation_space,
                               head="actor_critic", **config.network_kwargs)
        super().__init__(config, observation_space, {"network": network})
        self._rng = tf.random.Generator.from_seed(config.seed)

    def output_spec(self):
        return {"action": ArraySpec("int32", ())}

    def _act(self, env_ids, outputs):
        del env_ids
        seed = self._rng.make_seeds(1)[:, 0]
        action = tf.random.stateless_categorical(outputs["policy_logits"], 1, seed,
                                                 dtype=tf.int32)[:, 0]
        return {"action": action}

    def new_buffer(self):
        return UnrollQueue(self.settings.queue_capacity or 2 * self.config.batch_size)

    def _train_signature(self):
        steps = self.unroll_length + 1
        return [self.state_spec([None]), tf.TensorSpec([steps, None], tf.int32),
                self.env_spec([steps, None]), tf.TensorSpec([steps, None], tf.int32)]

    def _take_batch(self, buffer):
        unrolls = buffer.get_many(int(self.config.batch_size))
        batch = stack_unrolls(unrolls)
        return (tuple(batch.core_state), batch.prev_action, EnvOutput(*batch.env_output),
                batch.agent_output["action"]), len(unrolls)

    def _train_graph(self, core_state, prev_action, env_output, action, diagnose):
        c = self.settings
        variables = self.network.trainable_variables
        before = diagnostics.snapshot(variables) if diagnose else None
        with tf.GradientTape() as tape:
            with recording_relu_outputs() as relu_outputs:
                outputs, _ = self.network(prev_action, env_output, core_state, unroll=True)
            returns = reward_to_go(env_output.reward[1:], env_output.done[1:],
                                   tf.stop_gradient(outputs["baseline"][-1]), c.discounting)
            baseline = outputs["baseline"][:-1]
            advantage = tf.stop_gradient(returns - baseline)
            logits = outputs["policy_logits"][:-1]
            log_pi = -tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=action[:-1], logits=logits)
            entropy = -tf.reduce_sum(tf.nn.softmax(logits) * tf.nn.log_softmax(logits), -1)
            policy_loss = -tf.reduce_mean(log_pi * advantage)
            baseline_loss = 0.5 * tf.reduce_mean(tf.square(returns - baseline))
            loss = (policy_loss + c.baseline_cost * baseline_loss
                    - c.entropy_cost * tf.reduce_mean(entropy))
        grads = tape.gradient(loss, variables)
        grads, grad_norm = clipped_gradients(grads, c.grad_clip_norm)
        self.optimizer.apply_gradients(zip(grads, variables))
        metrics = {"loss": loss, "policy_loss": policy_loss, "baseline_loss": baseline_loss,
                   "entropy": tf.reduce_mean(entropy), "grad_norm": grad_norm,
                   "explained_variance": diagnostics.explained_variance(returns, baseline)}
        if diagnose:
            metrics.update(diagnostics.sampled(before, variables, relu_outputs))
        return metrics, ()

    def _finish_step(self, buffer, taken, outputs):
        return {"env_steps_trained": self.unroll_length * taken}


def reward_to_go(rewards, dones, bootstrap, discounting):
    """``G_t = r_t + discounting * (1 - done_t) * G_{t+1}`` over time-major ``[T, B]``, from
    ``G_T = bootstrap`` [B]; ``rewards[t]`` and ``dones[t]`` follow the action of step ``t``."""
    discounts = discounting * (1.0 - tf.cast(dones, tf.float32))
    returns, future = [], bootstrap
    for t in reversed(range(rewards.shape[0])):
        future = rewards[t] + discounts[t] * future
        returns.append(future)
    return tf.stack(returns[::-1])

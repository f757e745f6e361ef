"""The V-trace actor-critic agent (IMPALA's learner, as SEED RL runs it).

An :class:`seed.agents.agent_base.AgentBase`. One instance serves both
inference (``infer``, a batched policy step that samples actions) and training
(``train_step``, one optimizer step on a FIFO batch of unrolls); the two share
the network's variables and may run concurrently.

Learning rate: constant ``learning_rate`` unless
``lr_decay_to_zero``: then linear to zero over the frame budget
(:meth:`AgentBase.set_progress`, which the runtime calls).

Action sampling draws from a ``tf.random.Generator`` seeded with ``config.seed``,
so two agents built from the same config sample the same random stream: a
runtime that builds one agent per actor process gives each a distinct seed: the IMPALA
actor of task ``task`` builds its agent with ``seed=config.seed * 1000 + 1 + task``
(seed/runtime/impala_arch/actor.py), so none shares the learner's stream either.
"""

from __future__ import annotations

import tensorflow as tf

from seed.agents import diagnostics
from seed.agents.optimizers import clipped_gradients
from seed.agents.agent_base import AgentBase
from seed.agents.vtrace import actor_critic_loss, align_unroll
from seed.networks import make_network
from seed.networks.relu_recording import recording_relu_outputs
from seed.buffers.unroll_queue import UnrollQueue
from seed.types import ArraySpec, EnvOutput, stack_unrolls


class VTraceAgent(AgentBase):
    def __init__(self, config, observation_space, action_space):
        network = make_network(config.network, int(action_space.n), observation_space,
                               head="actor_critic", **config.network_kwargs)
        super().__init__(config, observation_space, {"network": network})
        self._rng = tf.random.Generator.from_seed(config.seed)

    # -- inference -----------------------------------------------------------------------

    def output_spec(self):
        """Per env: the action taken, the policy's logits and its baseline."""
        return {"action": ArraySpec("int32", ()),
                "policy_logits": ArraySpec("float32", (self.num_actions,)),
                "baseline": ArraySpec("float32", ())}

    def _act(self, env_ids, outputs):
        """An action sampled from the policy."""
        del env_ids
        logits = outputs["policy_logits"]
        seed = self._rng.make_seeds(1)[:, 0]
        action = tf.random.stateless_categorical(logits, 1, seed, dtype=tf.int32)[:, 0]
        return {"action": action, "policy_logits": logits, "baseline": outputs["baseline"]}

    # -- training ------------------------------------------------------------------------

    def new_buffer(self):
        return UnrollQueue(self.settings.effective_queue_capacity(self.config.batch_size))

    def _train_signature(self):
        steps, batch = self.unroll_length + 1, int(self.config.batch_size)
        return [self.state_spec([batch]), tf.TensorSpec([steps, batch], tf.int32),
                self.env_spec([steps, batch]), tf.TensorSpec([steps, batch], tf.int32),
                tf.TensorSpec([steps, batch, self.num_actions], tf.float32)]

    def _take_batch(self, buffer):
        """The next ``config.batch_size`` unrolls, in FIFO order."""
        n = int(self.config.batch_size)
        batch = stack_unrolls(buffer.get_many(n))  # converted to the signature's dtypes
        return (tuple(batch.core_state), batch.prev_action, EnvOutput(*batch.env_output),
                batch.agent_output["action"], batch.agent_output["policy_logits"]), n

    def _train_graph(self, core_state, prev_action, env_output, behaviour_action,
                     behaviour_logits, diagnose: bool):
        c = self.settings
        variables = self.network.trainable_variables
        before = diagnostics.snapshot(variables) if diagnose else None
        with tf.GradientTape() as tape:
            with recording_relu_outputs() as relu_outputs:
                learner_outputs, _ = self.network(prev_action, env_output, core_state,
                                                  unroll=True)
            aligned = align_unroll(
                learner_outputs, {"action": behaviour_action, "policy_logits": behaviour_logits},
                env_output)
            loss, metrics = actor_critic_loss(
                **aligned, discounting=c.discounting, baseline_cost=c.baseline_cost,
                entropy_cost=c.entropy_cost, lambda_=c.lambda_, max_abs_reward=c.max_abs_reward,
                reduction=c.loss_reduction)
        grads = tape.gradient(loss, variables)
        grads, grad_norm = clipped_gradients(grads, c.grad_clip_norm)
        self.optimizer.apply_gradients(zip(grads, variables))
        metrics["grad_norm"] = grad_norm
        metrics["learning_rate"] = tf.convert_to_tensor(self.optimizer.learning_rate)
        if diagnose:
            metrics.update(diagnostics.sampled(before, variables, relu_outputs))
        return metrics, ()

    def train_network_steps(self):
        """Every step of an unroll, the bootstrap step among them, forward and backward."""
        return {"forward": 0, "forward_backward": self.unroll_length + 1}

    def _finish_step(self, buffer, taken, outputs):
        del buffer, outputs
        return {"env_steps_trained": self.unroll_length * taken}

"""The V-trace actor-critic agent (IMPALA's learner, as SEED RL runs it).

Implements the contract of :mod:`seed.agents.base`. One instance serves both
inference (``infer``, a batched policy step that samples actions) and training
(``train_step``, one optimizer step on a FIFO batch of unrolls); the two share
the network's variables and may run concurrently.

Learning rate: constant ``config.learning_rate`` unless
``config.lr_decay_to_zero``, in which case the runtime calls
:meth:`VTraceAgent.set_progress` with ``frames_done / config.frames`` and the
rate is ``learning_rate * max(0, 1 - fraction)`` (linear decay to zero over the
frame budget, as upstream SEED's polynomial decay of power 1).

Action sampling draws from a ``tf.random.Generator`` seeded with ``config.seed``,
so two agents built from the same config sample the same random stream: a
runtime that builds one agent per actor process (IMPALA) should give each a
distinct seed, e.g. ``dataclasses.replace(config, seed=config.seed * 1000 + task)``.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from seed.agents import diagnostics
from seed.agents.base import (NamedVariables, module_variables, optimizer_variables,
                              traced_once, xla_batch_buckets)
from seed.agents.core_state_table import CoreStateTable
from seed.agents.vtrace import actor_critic_loss, align_unroll
from seed.agents.optimizers import make_optimizer
from seed.networks import make_network
from seed.networks.base import create_variables
from seed.networks.relu_recording import recording_relu_outputs
from seed.buffers.unroll_queue import UnrollQueue
from seed.types import ArraySpec, EnvOutput, stack_unrolls


def _spec(shape, dtype):
    return tf.TensorSpec(list(shape), tf.as_dtype(dtype))


class VTraceAgent:
    def __init__(self, config, observation_space, action_space):
        self.config = config
        self.num_actions = int(action_space.n)
        self.unroll_length = int(config.unroll_length)
        self.unroll_overlap = 1  # the last step of an unroll bootstraps and starts the next
        self.network = make_network(config.network, self.num_actions, observation_space,
                                    head="actor_critic", **config.network_kwargs)
        self.optimizer = make_optimizer(config)
        self.optimizer.build(self.network.trainable_variables)
        self._rng = tf.random.Generator.from_seed(config.seed)
        self.relu_columns = diagnostics.relu_layer_names(
            self.network, lambda: create_variables(self.network, observation_space.shape,
                                                   tf.as_dtype(observation_space.dtype)))
        parameters = module_variables("network", self.network)
        self._checkpointed = NamedVariables(
            {**parameters, **optimizer_variables(self.optimizer, parameters)})

        obs_shape = tuple(int(d) for d in (observation_space.shape or ()))
        self._obs_dtype = np.dtype(observation_space.dtype)
        self._state_specs = tuple((tuple(s.shape[1:]), s.dtype)
                                  for s in self.network.initial_state(1))

        def env_spec(lead):
            return EnvOutput(_spec(lead, np.float32), _spec(lead, np.bool_),
                             _spec(list(lead) + list(obs_shape), self._obs_dtype))

        def state_spec(lead):
            return tuple(_spec(list(lead) + list(shape), dtype)
                         for shape, dtype in self._state_specs)

        # Every env's core state, read and written inside the inference step.
        self.core_states = CoreStateTable(config.num_envs, self.network.initial_state)
        # The inference path's forward pass, XLA-compiled when config.jit_inference.
        self._policy_step = (xla_batch_buckets(lambda a, e, s: self.network(a, e, s))
                             if config.jit_inference else self.network)
        self._infer_fn = traced_once(self._infer_graph, [
            _spec([None], np.int32), _spec([None], np.int32), env_spec([None])])

        steps, batch = self.unroll_length + 1, int(config.batch_size)
        train_signature = [
            state_spec([batch]), _spec([steps, batch], np.int32), env_spec([steps, batch]),
            _spec([steps, batch], np.int32), _spec([steps, batch, self.num_actions], np.float32)]
        # One train function with the costly diagnostics, one without; the sampler picks.
        def train_fn(diagnose):
            return traced_once(lambda *args: self._train_graph(*args, diagnose=diagnose),
                               train_signature)
        self._train_fns = {diagnose: train_fn(diagnose) for diagnose in (False, True)}
        self._diagnose = diagnostics.Sampler()

    # -- inference -----------------------------------------------------------------------

    def initial_state(self, batch_size):
        return tuple(np.asarray(s) for s in self.network.initial_state(batch_size))

    def _infer_graph(self, env_ids, prev_action, env_output):
        core_state = self.core_states.read(env_ids)
        outputs, new_state = self._policy_step(prev_action, env_output, core_state)
        self.core_states.write(env_ids, new_state)
        logits = outputs["policy_logits"]
        seed = self._rng.make_seeds(1)[:, 0]
        action = tf.random.stateless_categorical(logits, 1, seed, dtype=tf.int32)[:, 0]
        return action, logits, outputs["baseline"]

    def is_eval_env(self, env_id) -> bool:
        """Every env acts with the policy and is trained on."""
        del env_id
        return False

    def infer(self, env_ids, prev_action, env_output):
        """One batched policy step on the envs ``env_ids`` (distinct), their core state
        read from and written back to :attr:`core_states`."""
        action, logits, baseline = self._infer_fn(env_ids, prev_action, EnvOutput(*env_output))
        action = action.numpy()
        return action, {"action": action, "policy_logits": logits.numpy(),
                        "baseline": baseline.numpy()}

    def output_spec(self):
        """Per env: the action taken, the policy's logits and its baseline."""
        return {"action": ArraySpec("int32", ()),
                "policy_logits": ArraySpec("float32", (self.num_actions,)),
                "baseline": ArraySpec("float32", ())}

    def read_core_state(self, env_ids):
        return self.core_states.host_read(env_ids)

    def reset_core_state(self, env_ids):
        self.core_states.host_reset(env_ids)

    # -- training ------------------------------------------------------------------------

    def new_buffer(self):
        return UnrollQueue(self.config.effective_queue_capacity())

    def set_progress(self, fraction: float) -> None:
        """Tell the agent how much of the frame budget is spent (``frames / config.frames``).

        With ``config.lr_decay_to_zero`` the learning rate becomes
        ``learning_rate * max(0, 1 - fraction)``; otherwise this does nothing.
        """
        if self.config.lr_decay_to_zero:
            scale = max(0.0, 1.0 - float(fraction))
            self.optimizer.learning_rate.assign(self.config.learning_rate * scale)

    def _train_graph(self, core_state, prev_action, env_output, behaviour_action,
                     behaviour_logits, diagnose: bool):
        c = self.config
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
        grad_norm = tf.linalg.global_norm(grads)
        if c.grad_clip_norm > 0:
            grads, _ = tf.clip_by_global_norm(grads, c.grad_clip_norm, use_norm=grad_norm)
        self.optimizer.apply_gradients(zip(grads, variables))
        metrics["grad_norm"] = grad_norm
        metrics["learning_rate"] = tf.convert_to_tensor(self.optimizer.learning_rate)
        if diagnose:
            metrics["update_ratio"] = diagnostics.update_ratio(before, variables)
            metrics.update(diagnostics.dead_relu_fractions(relu_outputs))
        return metrics

    def train_step(self, buffer):
        """One optimizer step on ``config.batch_size`` unrolls; None once the buffer closed."""
        n = int(self.config.batch_size)
        while True:
            unrolls = buffer.get_many(n, timeout=0.5)
            if unrolls is not None:
                break
            if buffer.closed:
                return None
        batch = stack_unrolls(unrolls)  # converted to the signature's dtypes by traced_once
        metrics = self._train_fns[self._diagnose.due()](
            tuple(batch.core_state), batch.prev_action, EnvOutput(*batch.env_output),
            batch.agent_output["action"], batch.agent_output["policy_logits"])
        out = {k: float(v) for k, v in metrics.items()}
        out["env_steps_trained"] = self.unroll_length * n
        return out

    # -- parameters and checkpoints ------------------------------------------------------

    def parameters(self):
        return list(self.network.trainable_variables)

    def checkpoint_state(self):
        """Network and optimizer variables (Adam moments, step count), by name."""
        return self._checkpointed.state()

    def restore_state(self, state):
        self._checkpointed.restore(state)

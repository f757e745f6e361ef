"""The R2D2 agent (Kapturowski et al., 2019) as SEED RL's R2D2 learner runs it.

* Acting: epsilon-greedy on the online network's Q values, one epsilon per env
  (Ape-X); the last ``config.eval_envs`` env ids act with ``eval_epsilon`` and
  are never trained on (:meth:`R2D2Agent.is_eval_env`).
* Learning: sequences of ``T + 1`` steps from a prioritized replay; the first
  ``burn_in`` steps only warm up the recurrent state (no gradient), the loss is
  upstream's importance-weighted squared TD error against value-rescaled
  n-step double-Q targets (:mod:`seed.agents.r2d2`), new priorities are
  ``eta max|td| + (1 - eta) mean|td|`` per sequence, and the target network is
  a copy of the online one, refreshed every ``target_update_period`` steps.
* Replay ratio: with ``config.replay_ratio`` > 0 the replay holds sequences trained
  per sequence inserted to it on both sides (:func:`replay_limiter`): the learner
  waits for the actors and the actors for the learner, so what the agent learns per
  frame does not depend on the machine's speed.
* Learning rate: constant, or with ``config.lr_decay_to_zero`` linear to zero
  over the frame budget through :meth:`R2D2Agent.set_progress` (the runtime calls it).

Time alignment (:mod:`seed.types`): the Q value learnt at step ``t`` is
``Q(s_t, agent_output['action'][t])``; its transition yields ``reward[t + 1]``
and ends the episode iff ``done[t + 1]``.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from seed.agents import diagnostics, r2d2
from seed.agents.base import (NamedVariables, module_variables, optimizer_variables,
                              traced_once, xla_batch_buckets)
from seed.agents.core_state_table import CoreStateTable
from seed.agents.optimizers import make_optimizer
from seed.networks import make_network
from seed.networks.base import create_variables
from seed.networks.relu_recording import recording_relu_outputs
from seed.buffers.prioritized import PrioritizedReplay
from seed.buffers.rate_limiter import SampleToInsertRatio
from seed.buffers.unroll_queue import QueueClosed
from seed.types import ArraySpec, EnvOutput, stack_unrolls

def replay_limiter(config) -> SampleToInsertRatio:
    """``config.replay_ratio`` sequences trained per sequence inserted after the first
    ``config.replay_min_size`` (0: as many as the learner can, as upstream).

    The error buffer lets one sequence from every training env (SEED completes them
    all on the same step) and one batch pass at once, so neither side waits on the
    other's every step; the ratio over a run still tends to ``replay_ratio``.
    """
    ratio = float(config.replay_ratio)
    training_envs = int(config.num_envs) - int(config.eval_envs)
    return SampleToInsertRatio(ratio, max(int(config.replay_min_size), 1),
                               ratio * training_envs + int(config.batch_size))


class R2D2Agent:
    def __init__(self, config, observation_space, action_space):
        if config.burn_in < 0 or config.burn_in >= config.unroll_length:
            raise ValueError(
                f"burn_in ({config.burn_in}) must be in [0, unroll_length "
                f"({config.unroll_length})): an unroll of {config.unroll_length + 1} steps "
                "needs at least one step to learn on after the burn-in")
        if config.n_steps < 1:
            raise ValueError(f"n_steps must be >= 1, got {config.n_steps}")
        if config.target_update_period < 1:
            raise ValueError("target_update_period must be >= 1")
        self.config = config
        self.unroll_length = int(config.unroll_length)
        # Sequences overlap by the burn-in (+ the shared last step), so the transitions a
        # burn-in only replays get their loss in the previous sequence, as upstream.
        self.unroll_overlap = int(config.burn_in) + 1
        self.num_actions = int(action_space.n)
        self.num_envs = int(config.num_envs)
        self.num_training_envs = self.num_envs - int(config.eval_envs)
        self.epsilons = r2d2.per_env_epsilons(self.num_envs, int(config.eval_envs),
                                              config.epsilon_base, config.epsilon_alpha,
                                              config.eval_epsilon)

        def build():
            return make_network(config.network, self.num_actions, observation_space,
                                head="q", **config.network_kwargs)

        self.network = build()
        self.target_network = build()
        self._observation_shape = tuple(observation_space.shape or ())
        self._observation_dtype = tf.as_dtype(np.dtype(observation_space.dtype))
        self._run_once()  # creates any lazily built variables of both networks
        self._online_vars = list(self.network.trainable_variables)
        self._target_vars = list(self.target_network.trainable_variables)
        self._check_twins(self.network.variables, self.target_network.variables)
        self._copy_to_target()
        self.relu_columns = diagnostics.relu_layer_names(
            self.network, lambda: create_variables(self.network, self._observation_shape,
                                                   self._observation_dtype))

        self.optimizer = make_optimizer(config)
        self.optimizer.build(self._online_vars)
        online = module_variables("online", self.network)
        self._checkpointed = NamedVariables({
            **online, **module_variables("target", self.target_network),
            **optimizer_variables(self.optimizer, online)})
        self._rng = np.random.default_rng(config.seed)
        self._action_rng = tf.random.Generator.from_seed(config.seed + 1)
        self._epsilon_table = tf.constant(self.epsilons)

        state_spec = tf.nest.map_structure(
            lambda s: tf.TensorSpec([None] + list(s.shape[1:]), s.dtype),
            tuple(self.network.initial_state(1)))
        env_spec = EnvOutput(
            tf.TensorSpec([None], tf.float32), tf.TensorSpec([None], tf.bool),
            tf.TensorSpec([None] + list(self._observation_shape), self._observation_dtype))
        # Every env's core state, read and written inside the inference step.
        self.core_states = CoreStateTable(self.num_envs, self.network.initial_state)
        # The inference path's forward pass, XLA-compiled when config.jit_inference.
        self._policy_step = (xla_batch_buckets(lambda a, e, s: self.network(a, e, s))
                             if config.jit_inference else self.network)
        self._infer_fn = traced_once(self._infer_graph, [
            tf.TensorSpec([None], tf.int32), tf.TensorSpec([None], tf.int32), env_spec])

        steps = self.unroll_length + 1

        def timed(spec):
            return tf.TensorSpec([steps] + list(spec.shape), spec.dtype)

        train_signature = [
            state_spec, timed(tf.TensorSpec([None], tf.int32)),
            EnvOutput(*(timed(s) for s in env_spec)), timed(tf.TensorSpec([None], tf.int32)),
            tf.TensorSpec([None], tf.float32)]
        # One train function with the costly diagnostics, one without; the sampler picks.
        def train_fn(diagnose):
            return traced_once(lambda *args: self._train_graph(*args, diagnose=diagnose),
                               train_signature)
        self._train_fns = {diagnose: train_fn(diagnose) for diagnose in (False, True)}
        self._diagnose = diagnostics.Sampler()

    # ----------------------------------------------------------------- set-up

    def _run_once(self):
        env_output = EnvOutput(
            tf.zeros([1]), tf.zeros([1], tf.bool),
            tf.zeros((1,) + self._observation_shape, self._observation_dtype))
        for net in (self.network, self.target_network):
            net(tf.zeros([1], tf.int32), env_output, tuple(net.initial_state(1)))

    @staticmethod
    def _check_twins(online, target):
        if len(online) != len(target) or any(
                a.shape != b.shape for a, b in zip(online, target)):
            raise RuntimeError("online and target networks do not have the same variables")

    def _copy_to_target(self):
        for src, dst in zip(self.network.variables, self.target_network.variables):
            dst.assign(src)

    # ------------------------------------------------------------ the contract

    def initial_state(self, batch_size):
        return tuple(np.asarray(s) for s in self.network.initial_state(batch_size))

    def is_eval_env(self, env_id) -> bool:
        """True for the last ``config.eval_envs`` env ids: they act, they are not trained on."""
        return int(env_id) >= self.num_training_envs

    def infer(self, env_ids, prev_action, env_output):
        """One batched policy step on the envs ``env_ids`` (distinct), their core state
        read from and written back to :attr:`core_states`."""
        action, q_values = self._infer_fn(env_ids, prev_action, EnvOutput(*env_output))
        action = action.numpy()
        return action, {"q_values": q_values.numpy(), "action": action}

    def output_spec(self):
        """Per env: the action taken and the online network's Q-values."""
        return {"q_values": ArraySpec("float32", (self.num_actions,)),
                "action": ArraySpec("int32", ())}

    def read_core_state(self, env_ids):
        return self.core_states.host_read(env_ids)

    def reset_core_state(self, env_ids):
        self.core_states.host_reset(env_ids)

    def _infer_graph(self, env_ids, prev_action, env_output):
        core_state = self.core_states.read(env_ids)
        outputs, state = self._policy_step(prev_action, env_output, core_state)
        self.core_states.write(env_ids, state)
        q_values = outputs["q_values"]
        greedy = tf.argmax(q_values, axis=-1, output_type=tf.int32)
        batch = tf.shape(greedy)[0]
        epsilon = tf.gather(self._epsilon_table, env_ids)
        explore = self._action_rng.uniform([batch]) < epsilon
        random_action = self._action_rng.uniform([batch], 0, self.num_actions, tf.int32)
        return tf.where(explore, random_action, greedy), q_values

    def set_progress(self, fraction: float) -> None:
        """Tell the agent how much of the frame budget is spent (``frames / config.frames``).

        With ``config.lr_decay_to_zero`` the learning rate becomes
        ``learning_rate * max(0, 1 - fraction)`` (as the V-trace agent); else nothing.
        """
        if self.config.lr_decay_to_zero:
            scale = max(0.0, 1.0 - float(fraction))
            self.optimizer.learning_rate.assign(self.config.learning_rate * scale)

    def new_buffer(self) -> PrioritizedReplay:
        """The prioritized replay, its samples per insert held to ``config.replay_ratio``
        (0: no limit) by :func:`replay_limiter`."""
        return PrioritizedReplay(self.config.replay_capacity, self.config.priority_exponent,
                                 self.config.importance_sampling_exponent,
                                 replay_limiter(self.config))

    def train_step(self, buffer):
        """One learner step on a prioritized sample; None once the buffer is closed."""
        config = self.config
        try:  # waits for the limiter; closing the buffer wakes it
            indices, unrolls, weights = buffer.sample_when_ready(config.batch_size, self._rng)
        except QueueClosed:
            return None
        for u in unrolls:
            if u.length != self.unroll_length + 1:
                raise ValueError(f"replayed unroll has {u.length} steps; this agent learns on "
                                 f"unroll_length + 1 = {self.unroll_length + 1}")
        batch = stack_unrolls(unrolls)  # converted to the signature's dtypes by traced_once
        priorities, metrics = self._train_fns[self._diagnose.due()](
            tuple(batch.core_state), batch.prev_action, EnvOutput(*batch.env_output),
            batch.agent_output["action"], weights)
        priorities = priorities.numpy()
        buffer.update_priorities(indices, priorities)
        # The optimizer counts train steps, and its count is checkpointed with it.
        if int(self.optimizer.iterations.numpy()) % config.target_update_period == 0:
            self._copy_to_target()
        return {
            **{k: float(v) for k, v in metrics.items()},
            "env_steps_trained": float((self.unroll_length - config.burn_in) * len(unrolls)),
            "mean_priority": float(np.mean(priorities)),
            "mean_importance_weight": float(np.mean(weights)),
            # Sequences trained per sequence inserted, since this process started (the
            # replay is not saved).
            "replay_ratio": buffer.num_sampled / max(buffer.num_inserted, 1),
            "replay_size": float(len(buffer)),
            "learning_rate": float(self.optimizer.learning_rate.numpy()),
        }

    def _train_graph(self, core_state, prev_action, env_output, action, weights,
                     diagnose: bool):
        config = self.config
        burn_in = int(config.burn_in)
        online_state = target_state = core_state
        if burn_in:
            head = EnvOutput(*(x[:burn_in] for x in env_output))
            _, online_state = self.network(prev_action[:burn_in], head, core_state, unroll=True)
            online_state = tf.nest.map_structure(tf.stop_gradient, online_state)
            _, target_state = self.target_network(prev_action[:burn_in], head, core_state,
                                                  unroll=True)
        rest = EnvOutput(*(x[burn_in:] for x in env_output))
        target_q = self.target_network(prev_action[burn_in:], rest, target_state,
                                       unroll=True)[0]["q_values"]
        before = diagnostics.snapshot(self._online_vars) if diagnose else None
        with tf.GradientTape() as tape:
            with recording_relu_outputs() as relu_outputs:
                q = self.network(prev_action[burn_in:], rest, online_state,
                                 unroll=True)[0]["q_values"]  # [L+1, B, A]
            targets = r2d2.r2d2_targets(q, target_q, rest.reward, rest.done,
                                        config.discounting, config.n_steps,
                                        config.value_rescale_eps)  # [L, B]
            q_taken = tf.gather(q[:-1], action[burn_in:-1], axis=-1, batch_dims=2)
            loss, abs_td = r2d2.td_loss(q_taken, targets, weights)
        grads = tape.gradient(loss, self._online_vars)
        grads, grad_norm = tf.clip_by_global_norm(grads, config.grad_clip_norm)
        self.optimizer.apply_gradients(zip(grads, self._online_vars))
        priorities = r2d2.sequence_priorities(abs_td, config.priority_eta)
        metrics = {"loss": loss, "mean_q": tf.reduce_mean(q_taken), "grad_norm": grad_norm,
                   "value_loss": 0.5 * tf.reduce_mean(tf.square(targets - q_taken)),
                   "explained_variance": diagnostics.explained_variance(targets, q_taken)}
        if diagnose:
            metrics["update_ratio"] = diagnostics.update_ratio(before, self._online_vars)
            metrics.update(diagnostics.dead_relu_fractions(relu_outputs))
        return priorities, metrics

    def parameters(self):
        return list(self.network.variables)

    def checkpoint_state(self) -> dict:
        """Online, target and optimizer variables (the step count decides target refreshes),
        by name."""
        return self._checkpointed.state()

    def restore_state(self, state: dict) -> None:
        self._checkpointed.restore(state)

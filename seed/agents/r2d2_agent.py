"""The R2D2 agent (Kapturowski et al., 2019) as SEED RL's R2D2 learner runs it.

* Acting: epsilon-greedy on the online network's Q values, one epsilon per env
  (Ape-X); the last ``eval_envs`` env ids act with ``eval_epsilon`` and
  are never trained on (:meth:`R2D2Agent.is_eval_env`).
* Learning: sequences of ``T + 1`` steps from a prioritized replay; the first
  ``burn_in`` steps only warm up the recurrent state (no gradient), the loss is
  upstream's importance-weighted squared TD error against value-rescaled
  n-step double-Q targets (:mod:`seed.agents.r2d2`), new priorities are
  ``eta max|td| + (1 - eta) mean|td|`` per sequence, and the target network is
  a copy of the online one, refreshed every ``target_update_period`` steps.
* Replay ratio: with ``replay_ratio`` > 0 the replay holds sequences trained
  per sequence inserted to it on both sides (:func:`replay_limiter`): the learner
  waits for the actors and the actors for the learner, so what the agent learns per
  frame does not depend on the machine's speed.
* Learning rate: constant, or with ``lr_decay_to_zero`` linear to zero
  over the frame budget through :meth:`AgentBase.set_progress` (the runtime calls it).

Time alignment (:mod:`seed.types`): the Q value learnt at step ``t`` is
``Q(s_t, agent_output['action'][t])``; its transition yields ``reward[t + 1]``
and ends the episode iff ``done[t + 1]``.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from seed.agents import diagnostics, r2d2
from seed.agents.optimizers import clipped_gradients
from seed.agents.agent_base import AgentBase
from seed.networks import make_network
from seed.networks.relu_recording import recording_relu_outputs
from seed.buffers.prioritized import PrioritizedReplay
from seed.buffers.rate_limiter import SampleToInsertRatio
from seed.types import ArraySpec, EnvOutput, stack_unrolls


def replay_limiter(config) -> SampleToInsertRatio:
    """``replay_ratio`` sequences trained per sequence inserted after the first
    ``replay_min_size`` (0: as many as the learner can, as upstream), of the run
    ``config``'s R2D2 settings.

    The error buffer lets one sequence from every training env (SEED completes them
    all on the same step) and one batch pass at once, so neither side waits on the
    other's every step; the ratio over a run still tends to ``replay_ratio``.
    """
    settings = config.agent_config
    ratio = float(settings.replay_ratio)
    training_envs = int(config.num_envs) - int(settings.eval_envs)
    return SampleToInsertRatio(ratio, max(int(settings.replay_min_size), 1),
                               ratio * training_envs + int(config.batch_size))


class R2D2Agent(AgentBase):
    def __init__(self, config, observation_space, action_space):
        settings = config.agent_config
        settings.validate(config)  # R2D2's rules (R2D2Config), also for an agent built alone
        # Sequences overlap by the burn-in (+ the shared last step), so the transitions a
        # burn-in only replays get their loss in the previous sequence, as upstream.
        self.unroll_overlap = int(settings.burn_in) + 1
        self.num_envs = int(config.num_envs)
        self.num_training_envs = self.num_envs - int(settings.eval_envs)
        self.epsilons = r2d2.per_env_epsilons(self.num_envs, int(settings.eval_envs),
                                              settings.epsilon_base, settings.epsilon_alpha,
                                              settings.eval_epsilon)
        online, self.target_network = (
            make_network(config.network, int(action_space.n), observation_space, head="q",
                         **config.network_kwargs) for _ in range(2))
        super().__init__(config, observation_space,
                         {"online": online, "target": self.target_network})
        self._check_twins(self.network.variables, self.target_network.variables)
        self._online_vars = list(self.network.trainable_variables)
        self._copy_to_target()
        self._rng = np.random.default_rng(config.seed)
        self._action_rng = tf.random.Generator.from_seed(config.seed + 1)
        self._epsilon_table = tf.constant(self.epsilons)

    # ----------------------------------------------------------------- set-up

    @staticmethod
    def _check_twins(online, target):
        if len(online) != len(target) or any(
                a.shape != b.shape for a, b in zip(online, target)):
            raise RuntimeError("online and target networks do not have the same variables")

    def _copy_to_target(self):
        for src, dst in zip(self.network.variables, self.target_network.variables):
            dst.assign(src)

    # ------------------------------------------------------------ acting

    def is_eval_env(self, env_id) -> bool:
        """True for the last ``eval_envs`` env ids: they act, they are not trained on."""
        return int(env_id) >= self.num_training_envs

    def output_spec(self):
        """Per env: the action taken and the online network's Q-values."""
        return {"q_values": ArraySpec("float32", (self.num_actions,)),
                "action": ArraySpec("int32", ())}

    def _act(self, env_ids, outputs):
        """Epsilon-greedy on the Q values, each env with its own epsilon."""
        q_values = outputs["q_values"]
        greedy = tf.argmax(q_values, axis=-1, output_type=tf.int32)
        batch = tf.shape(greedy)[0]
        epsilon = tf.gather(self._epsilon_table, env_ids)
        explore = self._action_rng.uniform([batch]) < epsilon
        random_action = self._action_rng.uniform([batch], 0, self.num_actions, tf.int32)
        return {"q_values": q_values, "action": tf.where(explore, random_action, greedy)}

    # ------------------------------------------------------------ learning

    def new_buffer(self) -> PrioritizedReplay:
        """The prioritized replay, its samples per insert held to ``replay_ratio``
        (0: no limit) by :func:`replay_limiter`."""
        s = self.settings
        return PrioritizedReplay(s.replay_capacity, s.priority_exponent,
                                 s.importance_sampling_exponent, replay_limiter(self.config))

    def _train_signature(self):
        steps = self.unroll_length + 1
        return [self.state_spec([None]), tf.TensorSpec([steps, None], tf.int32),
                self.env_spec([steps, None]), tf.TensorSpec([steps, None], tf.int32),
                tf.TensorSpec([None], tf.float32)]

    def _take_batch(self, buffer):
        """A prioritized sample, once the limiter lets one go."""
        indices, unrolls, weights = buffer.sample_when_ready(self.config.batch_size, self._rng)
        for u in unrolls:
            if u.length != self.unroll_length + 1:
                raise ValueError(f"replayed unroll has {u.length} steps; this agent learns on "
                                 f"unroll_length + 1 = {self.unroll_length + 1}")
        batch = stack_unrolls(unrolls)  # converted to the signature's dtypes by traced_once
        return (tuple(batch.core_state), batch.prev_action, EnvOutput(*batch.env_output),
                batch.agent_output["action"], weights), (indices, weights, len(unrolls))

    def _finish_step(self, buffer, taken, priorities):
        indices, weights, sequences = taken
        priorities = priorities.numpy()
        buffer.update_priorities(indices, priorities)
        # The optimizer counts train steps, and its count is checkpointed with it.
        if int(self.optimizer.iterations.numpy()) % self.settings.target_update_period == 0:
            self._copy_to_target()
        return {
            "env_steps_trained": float((self.unroll_length - self.settings.burn_in) * sequences),
            "mean_priority": float(np.mean(priorities)),
            "mean_importance_weight": float(np.mean(weights)),
            # Sequences trained per sequence inserted, since this process started (the
            # replay is not saved).
            "replay_ratio": buffer.num_sampled / max(buffer.num_inserted, 1),
            "replay_size": float(len(buffer)),
            "learning_rate": float(self.optimizer.learning_rate.numpy()),
        }

    def train_network_steps(self):
        """The burn-in through both networks and the rest through the target network,
        forward only; the rest through the online network, forward and backward."""
        steps, burn_in = self.unroll_length + 1, int(self.settings.burn_in)
        return {"forward": steps + burn_in, "forward_backward": steps - burn_in}

    def _train_graph(self, core_state, prev_action, env_output, action, weights,
                     diagnose: bool):
        settings = self.settings
        burn_in = int(settings.burn_in)
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
                                        settings.discounting, settings.n_steps,
                                        settings.value_rescale_eps)  # [L, B]
            q_taken = tf.gather(q[:-1], action[burn_in:-1], axis=-1, batch_dims=2)
            loss, abs_td = r2d2.td_loss(q_taken, targets, weights)
        grads = tape.gradient(loss, self._online_vars)
        grads, grad_norm = clipped_gradients(grads, settings.grad_clip_norm)
        self.optimizer.apply_gradients(zip(grads, self._online_vars))
        priorities = r2d2.sequence_priorities(abs_td, settings.priority_eta)
        metrics = {"loss": loss, "mean_q": tf.reduce_mean(q_taken), "grad_norm": grad_norm,
                   "value_loss": 0.5 * tf.reduce_mean(tf.square(targets - q_taken)),
                   "explained_variance": diagnostics.explained_variance(targets, q_taken)}
        if diagnose:
            metrics.update(diagnostics.sampled(before, self._online_vars, relu_outputs))
        return metrics, priorities

"""What every agent shares, so an agent supplies only its graphs, its buffer and how it takes
a batch (the recipe: ``docs/design.md``, "Adding an env or an agent").

:class:`AgentBase` meets :class:`seed.agents.contract.Agent`. It owns the optimizer (built on
the acting network's trainable variables), the checkpoint (:class:`NamedVariables` over
every network and the optimizer), every env's core state (:class:`CoreStateTable`),
``initial_state``, the traced inference call (XLA batch buckets with
``config.jit_inference``), the networks' compute dtype in each (``config.compute_dtype``,
:mod:`seed.networks.precision`), the pair of traced train functions with and without the costly
diagnostics (a :class:`diagnostics.Sampler` picks one per step), ``set_progress`` (the
learning rate's linear decay to zero) and the buffer's close convention: a closed buffer's
take raises :class:`QueueClosed`, and ``train_step`` then returns None.

A subclass builds its networks and hands them to ``AgentBase.__init__``, then gives:

* ``_act(env_ids, outputs)``: the action and agent output from the network's outputs
  (inside the traced inference step), and ``output_spec()``, their dtypes and shapes;
* ``_train_signature()`` and ``_train_graph(*inputs, diagnose)``: one optimizer step;
* ``new_buffer()``, ``_take_batch(buffer)`` and ``_finish_step(buffer, taken, outputs)``:
  its buffer, the graph's inputs taken from it, and the host's work after the step.
"""

from __future__ import annotations

import abc

import numpy as np
import tensorflow as tf

from seed.agents import diagnostics
from seed.agents.contract import (NamedVariables, module_variables, optimizer_variables,
                              traced_once, xla_batch_buckets)
from seed.agents.core_state_table import CoreStateTable
from seed.agents.optimizers import make_optimizer
from seed.buffers.unroll_queue import QueueClosed
from seed.networks import precision
from seed.networks.base import create_variables
from seed.types import EnvOutput


class AgentBase(abc.ABC):
    """An :class:`seed.agents.contract.Agent` but for the parts only an agent knows (abstract)."""

    # Steps an unroll shares with the next one: the last step bootstraps and starts the next.
    unroll_overlap = 1

    def __init__(self, config, observation_space, networks: dict):
        """``networks``: every network of the agent by checkpoint prefix (``{"network": net}``,
        R2D2's ``{"online": ..., "target": ...}``). The first one acts (inference,
        ``parameters()``) and learns (the optimizer's variables)."""
        self.config = config
        self.settings = config.agent_config  # the agent's own (seed.config.agents)
        self.unroll_length = int(config.unroll_length)
        prefix, self.network = next(iter(networks.items()))
        self.num_actions = int(self.network.num_actions)
        self._observation_shape = tuple(int(d) for d in (observation_space.shape or ()))
        self._observation_dtype = tf.as_dtype(np.dtype(observation_space.dtype))

        def call_once(net):  # creates any variable a network builds at its first call
            create_variables(net, self._observation_shape, self._observation_dtype)

        for net in networks.values():
            call_once(net)
        self.relu_columns = diagnostics.relu_layer_names(self.network,
                                                         lambda: call_once(self.network))
        self.optimizer = make_optimizer(self.settings)
        self.optimizer.build(self.network.trainable_variables)
        named = {name: module_variables(name, net) for name, net in networks.items()}
        self._checkpointed = NamedVariables({
            **{k: v for variables in named.values() for k, v in variables.items()},
            **optimizer_variables(self.optimizer, named[prefix])})

        # The torsos' dtype in the train step and on the inference path; variables float32.
        self.train_dtype, self.inference_dtype = precision.train_and_inference_dtypes(
            config.compute_dtype)
        # Every env's core state, read and written inside the inference step.
        self.core_states = CoreStateTable(config.num_envs, self.network.initial_state)
        # The inference path's forward pass, XLA-compiled when config.jit_inference.
        self._policy_step = (xla_batch_buckets(lambda a, e, s: self.network(a, e, s))
                             if config.jit_inference else self.network)
        ids = tf.TensorSpec([None], tf.int32)
        self._infer_fn = traced_once(self._infer_graph, [ids, ids, self.env_spec([None])])
        # One train function with the costly diagnostics, one without; the sampler picks.
        signature = self._train_signature()

        def train_fn(diagnose):
            def graph(*args):
                with precision.computing_in(self.train_dtype):
                    return self._train_graph(*args, diagnose=diagnose)
            return traced_once(graph, signature)
        self._train_fns = {diagnose: train_fn(diagnose) for diagnose in (False, True)}
        self._diagnose = diagnostics.Sampler()

    # -- specs of the traced functions' inputs -------------------------------------------

    def env_spec(self, lead) -> EnvOutput:
        """TensorSpecs of an :class:`EnvOutput` whose leading axes are ``lead``."""
        lead = list(lead)
        return EnvOutput(tf.TensorSpec(lead, tf.float32), tf.TensorSpec(lead, tf.bool),
                         tf.TensorSpec(lead + list(self._observation_shape),
                                       self._observation_dtype))

    def state_spec(self, lead) -> tuple:
        """TensorSpecs of the network's core state with ``lead`` batch axes."""
        return tuple(tf.TensorSpec(list(lead) + list(s.shape[1:]), s.dtype)
                     for s in self.network.initial_state(1))

    # -- inference -----------------------------------------------------------------------

    def initial_state(self, batch_size):
        return tuple(np.asarray(s) for s in self.network.initial_state(batch_size))

    def is_eval_env(self, env_id) -> bool:
        """Every env acts and is trained on, unless a subclass says otherwise."""
        del env_id
        return False

    def _infer_graph(self, env_ids, prev_action, env_output):
        core_state = self.core_states.read(env_ids)
        with precision.computing_in(self.inference_dtype):
            outputs, new_state = self._policy_step(prev_action, env_output, core_state)
        self.core_states.write(env_ids, new_state)
        return self._act(env_ids, outputs)

    @abc.abstractmethod
    def output_spec(self) -> dict:
        """What ``_act`` returns for one env, ``action`` among it: name ->
        :class:`seed.types.ArraySpec` (an IMPALA unroll's wire is built from it)."""

    @abc.abstractmethod
    def _act(self, env_ids, outputs) -> dict:
        """The agent output ``{name: [B, ...] tensor}``, ``action`` (int32 [B]) among them, from
        the acting network's ``outputs`` for the envs ``env_ids``; traced."""

    def infer(self, env_ids, prev_action, env_output):
        """One batched policy step on the envs ``env_ids`` (distinct), their core state
        read from and written back to :attr:`core_states`."""
        agent_output = {k: v.numpy() for k, v in self._infer_fn(
            env_ids, prev_action, EnvOutput(*env_output)).items()}
        return agent_output["action"], agent_output

    def read_core_state(self, env_ids):
        return self.core_states.host_read(env_ids)

    def reset_core_state(self, env_ids):
        self.core_states.host_reset(env_ids)

    # -- training ------------------------------------------------------------------------

    @abc.abstractmethod
    def new_buffer(self):
        """The buffer ``_take_batch`` takes from; once closed, its takes raise QueueClosed."""

    @abc.abstractmethod
    def _train_signature(self) -> list:
        """The nest of TensorSpecs of ``_train_graph``'s inputs (:meth:`env_spec`,
        :meth:`state_spec` help)."""

    @abc.abstractmethod
    def _train_graph(self, *inputs, diagnose: bool):
        """One optimizer step, traced: ``(metrics, outputs)``, ``metrics`` a dict of scalars
        (with ``diagnose``, ``update_ratio`` and the ``dead_relu_*`` columns among them),
        ``outputs`` any nest ``_finish_step`` needs (``()`` for none)."""

    @abc.abstractmethod
    def _take_batch(self, buffer):
        """``(inputs, taken)``: the train graph's inputs (arrays, converted to the signature's
        dtypes) and whatever ``_finish_step`` needs of the batch. Waits for the buffer;
        raises QueueClosed once it is closed."""

    @abc.abstractmethod
    def _finish_step(self, buffer, taken, outputs) -> dict:
        """The host's work after the graph (new priorities, a target refresh) and the metrics
        it adds, ``env_steps_trained`` among them."""

    def train_step(self, buffer):
        """One optimizer step on a batch taken from ``buffer``; None once it is closed."""
        try:
            inputs, taken = self._take_batch(buffer)
        except QueueClosed:
            return None
        metrics, outputs = self._train_fns[self._diagnose.due()](*inputs)
        return {**{k: float(v) for k, v in metrics.items()},
                **self._finish_step(buffer, taken, outputs)}

    def train_network_steps(self) -> dict | None:
        """How many env steps of each sequence a train step runs through a network:
        ``forward`` only, and ``forward_backward`` (what its FLOPs are counted from,
        :mod:`seed.bench.flops`); None where the agent does not say."""
        return None

    def set_progress(self, fraction: float) -> None:
        """Tell the agent how much of the frame budget is spent (``frames / config.frames``).

        With ``lr_decay_to_zero`` the learning rate becomes
        ``learning_rate * max(0, 1 - fraction)`` (linear decay to zero over the frame budget,
        as upstream SEED's polynomial decay of power 1); otherwise this does nothing.
        """
        if self.settings.lr_decay_to_zero:
            scale = max(0.0, 1.0 - float(fraction))
            self.optimizer.learning_rate.assign(self.settings.learning_rate * scale)

    # -- parameters and checkpoints ------------------------------------------------------

    def parameters(self):
        """The acting network's variables: what an IMPALA actor pulls to act as the learner
        does (no target network, optimizer or core state)."""
        return list(self.network.variables)

    def checkpoint_state(self):
        """Every network's and the optimizer's variables (Adam moments, step count), by name."""
        return self._checkpointed.state()

    def restore_state(self, state):
        self._checkpointed.restore(state)

"""A bare TensorFlow inference step: the reference ``seed roofline`` holds the agent's to.

It does what :meth:`seed.agents.vtrace_agent.VTraceAgent.infer` does for an Atari config
on a batch of envs -- push each env's new frame onto its frame stack (cleared where
``done``), the torso of :mod:`seed.bench.bare_step` (Nature CNN or IMPALA ResNet) and the
policy and baseline layers over the stack, sample an action from the logits, hand action,
logits and baseline back as NumPy -- written the shortest way: the frame stacks in one
``tf.Variable`` indexed by env id (as upstream SEED keeps agent states), one concrete
function, the forward pass XLA-compiled when the agent's is (``config.jit_inference``), the
torso in the agent's inference dtype (``config.compute_dtype``).
Nothing here imports the suite's networks or agents, so ``infer_over_bare`` (the agent's
frames/s over the bare step's) prices the suite's own structure on the inference path.

:func:`inference_timers` also times the agent's call in parts, each alone: the network on
an already stacked batch, the frame stack update (rows read, frame pushed, rows written),
the sampling, the host copies in (NumPy inputs to tensors) and out (outputs to NumPy).
What the whole call takes beyond their sum is dispatch and glue.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from seed.bench.bare_step import NETWORKS, actor_critic_layers
from seed.bench.timing import step_timer


def has_bare_inference(config) -> bool:
    """A bare reference exists for V-trace on an Atari torso without an LSTM core."""
    return (config.agent == "vtrace" and config.network in NETWORKS
            and not config.network_kwargs.get("lstm_size", 0))


class BareInference:
    """``step(env_ids, done, frame) -> (action, logits, baseline)`` as NumPy arrays.

    ``frame`` ``[B, H, W, C]`` uint8 (the wire form), ``done`` bool ``[B]``, ``env_ids``
    int32 ``[B]``, distinct, below ``num_envs``.
    """

    def __init__(self, network: str, num_actions: int, num_envs: int, frame_shape,
                 stack_size: int = 4, jit: bool = True, seed: int = 0,
                 network_kwargs: dict | None = None, compute_dtype: str = "float32"):
        height, width, channels = (int(d) for d in frame_shape)
        depth = stack_size * channels
        variables, torso, (pw, pb), (bw, bb) = actor_critic_layers(
            network, num_actions, depth, network_kwargs)
        self.variables = variables
        self._stacks = tf.Variable(tf.zeros([num_envs, height, width, depth], tf.uint8),
                                   trainable=False)
        self._rng = tf.random.Generator.from_seed(seed)

        def forward(stack, frame, done):
            kept = stack[..., channels:]
            kept = tf.where(done[:, None, None, None], tf.zeros_like(kept), kept)
            stack = tf.concat([kept, frame], -1)
            x = torso(tf.cast(tf.cast(stack, tf.float32) / 255.0, compute_dtype))
            x = tf.cast(x, tf.float32)
            return stack, tf.matmul(x, pw) + pb, tf.squeeze(tf.matmul(x, bw) + bb, -1)

        forward = tf.function(forward, jit_compile=jit)

        def step(env_ids, done, frame):
            stack, logits, baseline = forward(tf.gather(self._stacks, env_ids), frame, done)
            self._stacks.scatter_update(tf.IndexedSlices(stack, env_ids))
            seed = self._rng.make_seeds(1)[:, 0]
            action = tf.random.stateless_categorical(logits, 1, seed, dtype=tf.int32)[:, 0]
            return action, logits, baseline

        self._step = tf.function(step, input_signature=[
            tf.TensorSpec([None], tf.int32), tf.TensorSpec([None], tf.bool),
            tf.TensorSpec([None, height, width, channels], tf.uint8)]).get_concrete_function()

    def step(self, env_ids, done, frame):
        outputs = self._step(tf.constant(env_ids, tf.int32), tf.constant(done),
                             tf.constant(frame))
        return tuple(o.numpy() for o in outputs)


def _timer(call, batch: int, frames_per_step: int):
    return step_timer(call, lambda _: batch, frames_per_step, min_steps=5)


def inference_timers(agent, config, observation_space, inputs,
                     frames_per_step: int) -> dict:
    """``{name: step_timer}`` for :func:`seed.bench.timing.alternate`: ``agent`` (its
    ``infer`` on ``inputs``, ``(env_ids, prev_action, env_output)`` of a batch of envs
    ``0..batch-1``), ``bare`` (:class:`BareInference` on the same inputs) and the parts of
    the agent's call (module doc), named ``part_*``."""
    from seed.types import EnvOutput
    env_ids, prev, env_out = inputs
    batch = len(env_ids)
    stack_size = int(config.network_kwargs.get("stack_size", 4))
    kwargs = {k: v for k, v in config.network_kwargs.items() if k != "stack_size"}
    bare = BareInference(config.network, agent.num_actions, batch, observation_space.shape,
                         stack_size, bool(config.jit_inference), config.seed, kwargs,
                         agent.inference_dtype.name)

    def agent_call():
        agent.infer(env_ids, prev, EnvOutput(*env_out))

    calls = {"agent": agent_call,
             "bare": lambda: bare.step(env_ids, env_out.done, env_out.observation),
             **_part_calls(agent, config, observation_space, inputs)}
    return {name: _timer(call, batch, frames_per_step) for name, call in calls.items()}


def _part_calls(agent, config, observation_space, inputs) -> dict:
    """The parts of the agent's call, ``part_*``, each on tensors already made (but the host
    copies), as the agent's graph runs them: the network on a stacked batch (its torso in
    the agent's inference dtype), the stack update, the sampling, the host copies in and
    out."""
    from seed.networks import frame_stack, precision
    env_ids, prev, env_out = inputs
    net, table = agent.network, agent.core_states
    jit = bool(config.jit_inference)
    ids, frame, done = (tf.constant(x) for x in (env_ids, env_out.observation, env_out.done))
    stacked = table.read(ids)[0]

    def forward(s):
        with precision.computing_in(agent.inference_dtype):
            return net._head(precision.torso_in_compute_dtype(
                net._torso, tf.cast(s, tf.float32) * net._scale))

    network = tf.function(forward, jit_compile=jit)
    push = tf.function(frame_stack.push_frame, jit_compile=jit)

    @tf.function
    def stack_update(ids, frame, done):
        table.write(ids, (push(table.read(ids)[0], frame, done),))

    rng = tf.random.Generator.from_seed(config.seed)
    logits = network(stacked)["policy_logits"]

    @tf.function
    def sample(logits):
        return tf.random.stateless_categorical(logits, 1, rng.make_seeds(1)[:, 0],
                                               dtype=tf.int32)[:, 0]

    leaves = [env_ids, prev, *env_out]
    dtypes = [np.int32, np.int32, np.float32, np.bool_, observation_space.dtype]
    _, outputs = agent.infer(env_ids, prev, env_out)
    output_tensors = [tf.constant(v) for v in outputs.values()]
    return {
        "part_network": lambda: network(stacked),
        "part_stack_update": lambda: stack_update(ids, frame, done),
        "part_sampling": lambda: sample(logits),
        "part_host_copies_in": lambda: [tf.convert_to_tensor(np.asarray(x, d))
                                        for x, d in zip(leaves, dtypes)],
        "part_host_copies_out": lambda: [t.numpy() for t in output_tensors],
    }


def summarize(measured: dict) -> dict:
    """The roofline's record of one batch from :func:`seed.bench.timing.rates` of each
    timer: ms per call of the agent, the bare step and each part; ``infer_over_bare``."""
    ms = {name: 1e3 * r["wall_s_per_step"] for name, r in measured.items()}
    parts = {name[len("part_"):]: v for name, v in ms.items() if name.startswith("part_")}
    return {"agent_ms_per_call": ms["agent"], "bare_ms_per_call": ms["bare"],
            "infer_over_bare": measured["agent"]["frames_per_s"] / measured["bare"]["frames_per_s"],
            "agent_parts_ms": parts,
            "agent_rest_ms": ms["agent"] - sum(parts.values()),
            "agent": measured["agent"], "bare": measured["bare"]}

"""Central inference on the learner: dynamic batching, per-env recurrent state, unroll assembly."""

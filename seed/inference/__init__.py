"""Central inference on the SEED learner: dynamic batching, per-env recurrent state."""

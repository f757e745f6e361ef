"""SEED: actors only step envs; the learner infers centrally, keeps state, builds unrolls."""

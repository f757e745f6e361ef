"""The two architectures (seed_arch/, impala_arch/) and what they share: learner core, actor
envs, run loop."""

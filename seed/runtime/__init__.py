"""The two architectures (seed_arch/, impala_arch/), their registry (architectures.py), the
learner service contract (service.py) and what they share: learner core, actor envs, run
loop."""

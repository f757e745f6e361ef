"""The two architectures (seed/, impala/) and what they share: learner core, actor envs, run loop."""

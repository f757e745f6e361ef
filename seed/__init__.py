"""SEED RL engine: central-inference actor-learner architecture and its IMPALA baseline."""

__version__ = "0.1.0"

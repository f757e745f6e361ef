"""Where complete unrolls wait for the learner: a FIFO queue (V-trace) or
prioritized replay (R2D2)."""

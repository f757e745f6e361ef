"""Where actor processes run: local subprocesses, or Ray actors across a cluster."""

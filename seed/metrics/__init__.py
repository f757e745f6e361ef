"""Run outputs: metrics.csv, episodes.csv, TensorBoard events, config.json."""

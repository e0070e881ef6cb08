"""Built-in agents that need no network: oracle, refuse, noisy, baseline (and planner for DAG tasks)."""

"""The per-GPU batch worker: pulls RQ jobs in batches and runs them on vLLM."""

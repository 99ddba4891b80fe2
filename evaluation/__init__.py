"""Model configs, evaluation runs, scoring, metrics, solving and debate runs (DESIGN §2)."""

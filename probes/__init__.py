"""Observation store, deterministic probe compiler, views, +GT packets, releases (DESIGN §2)."""

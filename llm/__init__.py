"""Model provider layer: one request/result type for every provider (DESIGN §2)."""

"""The one run engine that draft, compile, evaluation and solving runs share: what a run records about the code that
ran it, how its rows are claimed with leases, how infrastructure failures are retried, and how a run is
dispatched, cancelled and resumed. Django-aware, no models of its own."""

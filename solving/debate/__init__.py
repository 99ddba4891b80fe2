"""Multi-agent debate solver (Debate §3): Django-free cores.

- ``canonical``: value-aware Canonicalizer — parse, compare by physical value, vote, render.
- ``extract``: per-agent normalization — the final answer out of a solver's raw output.
- ``pruner``: memory masking from yes / no / not-sure labels.
- ``orchestrator``: the synchronous debate loop over injected solver, pruner and selector callables.
"""

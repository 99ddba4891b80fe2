"""Cost of a call from its usage and the config's prices per million tokens (USD, Decimal)."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

from .types import Usage

MILLION = Decimal(1_000_000)
QUANTUM = Decimal("0.000001")


def usage_cost(usage: Usage, *, price_in_per_mtok: Decimal, price_out_per_mtok: Decimal) -> Decimal:
    """Reasoning tokens are billed as output tokens; providers that report them inside
    ``output_tokens`` already (OpenAI) are not counted twice — see each adapter's ``Usage``."""
    billed_out = usage.output_tokens + usage.reasoning_tokens
    cost = (
        Decimal(usage.input_tokens) * Decimal(price_in_per_mtok)
        + Decimal(billed_out) * Decimal(price_out_per_mtok)
    ) / MILLION
    return cost.quantize(QUANTUM, rounding=ROUND_HALF_UP)


def discounted_cost(cost: Decimal, factor: Decimal) -> Decimal:
    """A cost at a provider's discount (e.g. 0.5 for a batch API), quantized like ``usage_cost``."""
    return (Decimal(cost) * Decimal(factor)).quantize(QUANTUM, rounding=ROUND_HALF_UP)

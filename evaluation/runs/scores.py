"""A finished row's item score (C, G, J) from its output and the probe's private key."""

from __future__ import annotations

from llm import OutputStatus

from .. import scoring
from ..models import EvalRequest, ItemScore
from ..scoring import ModelResponse, score


def scoring_result(row: EvalRequest) -> scoring.ItemScore:
    """The pure scorer's result for a stored row: the score and the reasons that decided it."""
    key = row.probe.key.key if hasattr(row.probe, "key") else {}
    return score(ModelResponse(row.raw_output, _response_status(row)), key, row.condition)


def score_of(row: EvalRequest) -> ItemScore:
    result = scoring_result(row)
    return ItemScore(
        request_id=row.pk,
        status=result.status,
        C=result.C,
        G=result.G,
        J=result.J,
        object_valid=result.object_valid,
        field_valid=result.field_valid,
        canonical=list(result.canonical) if result.canonical else None,
    )


# the stored provider statuses the scorer reads as other than "completed"
_RESPONSE_STATUSES: dict[str, str] = {OutputStatus.REFUSAL: "refusal", OutputStatus.TRUNCATED: "truncated"}


def _response_status(row: EvalRequest) -> str:
    if row.status == EvalRequest.Status.INFRA_MISSING or row.raw_output is None:
        return "infra_missing"
    return _RESPONSE_STATUSES.get(row.provider_status, "completed")

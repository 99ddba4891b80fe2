"""Typed inputs of the evaluation API that more than one operation could share."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers

from physalign_site.params import MAX_INT

from ..forms import INTERFACES

MAX_PROBE_IDS = 100_000  # a paper-sized release has 3,341 probes
LOGICAL_PROBE_ID_MAX = 68  # probes.Probe.logical_probe_id


@extend_schema_serializer(component_name="ProbeFilter")
class ProbeFilterInput(serializers.Serializer):
    """Which probes a run plans: exactly the keys the planner reads (``evaluation.runs.planning``), each
    typed and bounded; any other key is refused (a filter silently ignored would plan other probes)."""

    interface = serializers.ChoiceField(choices=INTERFACES, required=False)
    task_id = serializers.ChoiceField(choices=("T02", "T03"), required=False)
    probe_ids = serializers.ListField(
        child=serializers.CharField(max_length=LOGICAL_PROBE_ID_MAX),
        required=False,
        allow_empty=False,
        max_length=MAX_PROBE_IDS,
        help_text="Logical probe ids (PAQ-…): only these probes",
    )
    limit = serializers.IntegerField(
        required=False, min_value=1, max_value=MAX_INT, help_text="At most this many probes, in id order"
    )

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(str(key) for key in data if key not in self.fields)
            if unknown:
                raise serializers.ValidationError(
                    {key: [f"Unknown filter; the filters are {', '.join(self.fields)}."] for key in unknown}
                )
        return super().to_internal_value(data)

"""``manage.py agreement [--sample ID] [--threshold T] [--json]``: the agreement summary of the double-annotated
parents, per pair of annotators and pass (what ``/agreement/`` shows; ``--json`` prints ``/api/agreement/``'s
body)."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.agreement.api import AgreementSummaryOutput, summary_payload
from annotation.agreement.core import DEFAULT_THRESHOLD
from annotation.agreement.selectors import agreement_summary
from annotation.models import DoubleAnnotationSample


def _f(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _figures(pass_no: int, f: dict[str, Any]) -> str:
    if pass_no == 1:
        r = f["regions"]
        return (
            f"regions P {_f(r['precision'])} R {_f(r['recall'])} F1 {_f(r['f1'])} mean IoU {_f(r['mean_score'])}"
            f" | transcription {_f(f['transcription']['rate'])} (n {f['transcription']['n']})"
        )
    if pass_no == 2:
        t = f["entity_type"]
        return (
            f"entities F1 {_f(f['entities']['f1'])} | type {_f(t['rate'])} κ {_f(t['kappa']['kappa'])} "
            f"(n {t['kappa']['n']}) | binding {_f(f['binding']['rate'])} (n {f['binding']['n']})"
        )
    k = f["quantity_kind"]
    return (
        f"quantities F1 {_f(f['quantities']['f1'])} | kind {_f(k['rate'])} κ {_f(k['kappa']['kappa'])} "
        f"(n {k['kappa']['n']}) | value {_f(f['quantity_value']['rate'])} unit {_f(f['quantity_unit']['rate'])} "
        f"owner {_f(f['quantity_owner']['rate'])} (n {f['quantity_unit']['n']})"
    )


class Command(BaseCommand):
    help = __doc__

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--sample", type=int, default=None, help="one double-annotation sample (default: all)"
        )
        parser.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD, help="region IoU threshold")
        parser.add_argument("--json", dest="as_json", action="store_true", help="print the API's JSON")

    def handle(self, *args: Any, sample: int | None, threshold: float, as_json: bool, **options: Any) -> None:
        if sample is not None and not DoubleAnnotationSample.objects.filter(pk=sample).exists():
            raise CommandError(f"No double-annotation sample {sample}.")
        if not 0 < threshold <= 1:
            raise CommandError("The threshold must be in (0, 1].")
        data = agreement_summary(sample_id=sample, threshold=threshold)
        if as_json:
            self.stdout.write(
                json.dumps(AgreementSummaryOutput(summary_payload(data)).data, indent=2, ensure_ascii=False)
            )
            return
        scope = f"sample {sample}" if sample is not None else "every sample"
        self.stdout.write(f"Agreement, {scope}, IoU threshold {threshold}: {len(data.pairs)} pair-passes")
        for pair in data.pairs:
            self.stdout.write(
                f"{pair.first.name} / {pair.second.name}, Pass {pair.pass_no}, {pair.parents} parents "
                f"({pair.submitted} submitted): {_figures(pair.pass_no, pair.figures)}"
            )

"""A run's items (streamed), its metrics (stored as snapshots) and item file, and rescoring."""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any

from django.db import transaction
from django.db.models.fields.json import KeyTransform
from django.utils import timezone

from audit.services import event_record
from kit.nearest import controls_choice
from kit.private_key import ProbeKeyView
from models_registry.models import ModelConfig
from probes.models import Probe

from .. import metrics as metrics_core
from ..models import EvalRequest, EvalRun, ItemScore, MetricSnapshot
from .item_file import item_file_open, item_file_store, item_line
from .progress import progress_counters_recount
from .scores import score_of
from .tables import SCORE_FIELDS, TERMINAL

# rows read per query when streaming a run's items: memory stays flat in the number of requests
ITEM_CHUNK = 5000


@dataclass(frozen=True)
class _ProbeFacts:
    """What an item record says about its probe, the same for every request of the probe."""

    probe_id: str
    parent_id: str
    task_id: str
    interface: str
    K: int
    gold_alias_count: int
    nearest: str


def _nearest_outcome(
    nearest: dict[str, Any] | None, display_order: list[str], gold_aliases: list[str]
) -> str:
    """The control's outcome: the compiler's Kit-shaped prediction, a tie broken by display order."""
    alias = controls_choice(nearest or {}, display_order)
    if alias is None:
        return "not_applicable"
    return "correct" if alias in gold_aliases else "wrong"


def _probe_facts(probe_pks: Iterable[int]) -> dict[int, _ProbeFacts]:
    """Each probe's item facts, reading only the JSON keys they need (not the whole probe, view or key)."""
    rows = Probe.objects.filter(pk__in=list(probe_pks)).values_list(
        "pk",
        "logical_probe_id",
        "parent__problem_id",
        "task_id",
        "interface",
        KeyTransform("nearest_region", "metadata"),
        KeyTransform("candidates", "raw_view"),
        KeyTransform("candidate_map", "key__key"),
        KeyTransform("gold_targets", "key__key"),
    )
    facts = {}
    for pk, logical_id, parent_id, task_id, interface, nearest, candidates, candidate_map, gold in rows:
        key = ProbeKeyView({"candidate_map": candidate_map, "gold_targets": gold})
        gold_aliases = key.gold_aliases
        display_order = [c["alias"] for c in candidates or []]
        facts[pk] = _ProbeFacts(
            probe_id=logical_id,
            parent_id=parent_id,
            task_id=task_id,
            interface=interface,
            K=len(key.candidate_map),
            gold_alias_count=len(gold_aliases),
            nearest=_nearest_outcome(nearest, display_order, gold_aliases),
        )
    return facts


def run_items(run: EvalRun) -> Iterator[dict[str, Any]]:
    """The run's ended rows as item-file records (the contract of ``manage.py metrics``), in row order.

    Streamed: rows are read ``ITEM_CHUNK`` at a time by primary key, narrowly (no raw output, no probe
    JSON), and each probe's facts are read once, for the probes a chunk meets first."""
    names = dict(run.model_configs.values_list("pk", "name"))
    facts: dict[int, _ProbeFacts] = {}
    rows = (
        EvalRequest.objects.filter(run_id=run.pk, status__in=TERMINAL)
        .order_by("pk")
        .values_list(
            "pk",
            "model_id",
            "condition",
            "probe_id",
            "pools",
            "status",
            "score__status",
            "score__C",
            "score__G",
        )
    )
    last = 0
    while True:
        chunk = list(rows.filter(pk__gt=last)[:ITEM_CHUNK])
        if not chunk:
            return
        last = chunk[-1][0]
        new_probes = {r[3] for r in chunk} - facts.keys()
        if new_probes:
            facts.update(_probe_facts(new_probes))
        new_models = {r[1] for r in chunk} - names.keys()
        if new_models:
            names.update(ModelConfig.objects.filter(pk__in=new_models).values_list("pk", "name"))
        for _, model_id, condition, probe_pk, pools, status, score_status, C, G in chunk:
            probe = facts[probe_pk]
            yield {
                "model": names[model_id],
                "condition": condition,
                "probe_id": probe.probe_id,
                "parent_id": probe.parent_id,
                "task_id": probe.task_id,
                "interface": probe.interface,
                "pools": pools,
                "status": score_status if score_status is not None else status,
                "C": C,
                "G": G,
                "K": probe.K,
                "gold_alias_count": probe.gold_alias_count,
                "nearest": probe.nearest,
            }
        if len(chunk) < ITEM_CHUNK:
            return


def eval_run_finalize(*, run_id: int) -> EvalRun | None:
    with transaction.atomic():
        run = EvalRun.objects.select_for_update().get(pk=run_id)
        if run.status in (EvalRun.Status.COMPLETED, EvalRun.Status.SCORING, EvalRun.Status.CANCELLED):
            return None
        if run.requests.exclude(status__in=TERMINAL).exists():
            return None
        run.status = EvalRun.Status.SCORING
        run.save(update_fields=["status"])
    try:
        metrics_store(run=run)
    except Exception as exc:  # keep the rows; the run can be re-scored
        EvalRun.objects.filter(pk=run_id).update(status=EvalRun.Status.FAILED, error=str(exc)[:2000])
        raise
    EvalRun.objects.filter(pk=run_id).update(status=EvalRun.Status.COMPLETED, finished_at=timezone.now())
    run.refresh_from_db()
    return run


POOL_OF = {
    "GAcc": "B",
    "CAcc": "L",
    "JAcc": "L",
    "GAcc_L": "L",
    "GAcc_given_C": "L",
    "GErr_given_C": "L",
    "quadrants": "L",
    "paired": "P_m",
    "kit_paired": "P",
    "no_image": "B",
    "reordered": "B",
    "H": "H",
    "H_hard": "H_hard",
    "random": "B",
    "nearest": "H",
}


@transaction.atomic
def metrics_store(*, run: EvalRun) -> dict[str, Any]:
    """Compute and store the run's metrics and its item file, from one pass over its rows."""
    with tempfile.TemporaryFile() as spool:

        def spooled() -> Iterator[dict[str, Any]]:  # each item goes to the file as the metrics read it
            for item in run_items(run):
                spool.write(item_line(item))
                yield item

        # the metrics keep columns, not the records: memory stays flat in the number of requests
        result = metrics_core.compute_metrics(
            spooled(), resamples=int(run.options.get("resamples", 2000)), seed=run.seed
        )
        item_file_store(run, spool)
    configs = {c.name: c for c in run.model_configs.all()}
    run.snapshots.all().delete()
    snapshots = []
    for subject, name, stat in metrics_core.iter_statistics(result):
        ci = stat["ci"] or [None, None]
        snapshots.append(
            MetricSnapshot(
                run=run,
                model=configs.get(subject),
                subject=subject,
                pool=POOL_OF.get(name.split(".")[0], ""),
                metric=name,
                value=stat["value"],
                ci_low=ci[0],
                ci_high=ci[1],
                lower=stat["lower"],
                upper=stat["upper"],
                support_parents=stat["parents"],
                support_probes=stat["probes"],
                undefined_reason=metrics_core.undefined_reason(stat),
            )
        )
    MetricSnapshot.objects.bulk_create(snapshots)
    EvalRun.objects.filter(pk=run.pk).update(metrics=result)
    run.metrics = result
    return result


def eval_run_rescore(*, run: EvalRun, actor: Any = None) -> dict[str, Any]:
    """Recompute every ItemScore, the progress counters, every metric and the item file from the stored raw
    outputs; no model is called. Rows are scored ``RESCORE_CHUNK`` at a time and written in bulk."""
    rows = (
        run.requests.filter(status__in=TERMINAL)
        .select_related("probe__key", "score")
        .defer(*_RESCORE_DEFERRED)
        .order_by("pk")
    )
    changed, last = 0, 0
    while chunk := list(rows.filter(pk__gt=last)[:RESCORE_CHUNK]):
        last = chunk[-1].pk
        items, moved = [], []
        for row in chunk:
            before = getattr(row, "score", None)
            stored = row.status
            row.status = (  # what scoring starts from: an answer, or none
                EvalRequest.Status.INFRA_MISSING if row.raw_output is None else EvalRequest.Status.COMPLETED
            )
            item = score_of(row)
            items.append(item)
            row.status = item.status  # the row's status follows its score
            if row.status != stored:
                moved.append(row)
            changed += int((before.C, before.G) != (item.C, item.G) if before else True)
        with transaction.atomic():
            ItemScore.objects.bulk_create(
                items, update_conflicts=True, unique_fields=["request"], update_fields=SCORE_FIELDS
            )
            if moved:
                EvalRequest.objects.bulk_update(moved, ["status"])
    progress_counters_recount(run.pk)  # a rescore may move rows between final statuses
    result = metrics_store(run=run)
    event_record(actor=actor, verb="eval_run.rescore", obj=run, after={"changed_items": changed})
    return {"changed_items": changed, "metrics": result}


RESCORE_CHUNK = 1000


# what scoring a stored row does not read: the probe's views, messages and diagnostics, the key's other parts
_RESCORE_DEFERRED = (
    "probe__raw_view",
    "probe__gold_view",
    "probe__raw_messages",
    "probe__gold_messages",
    "probe__attachment_ids",
    "probe__metadata",
    "probe__key__native_query",
    "probe__key__displays",
    "probe__key__assets",
)


def _item_file_build(run: EvalRun) -> str:
    with tempfile.TemporaryFile() as spool:
        for item in run_items(run):
            spool.write(item_line(item))
        return item_file_store(run, spool)


def run_item_file(run: EvalRun) -> IO[bytes]:
    """A scored run's item file, open for reading. Built once, on this first call,
    for a run scored before item files were kept (the rows are read, the metrics are not recomputed)."""
    return item_file_open(run, _item_file_build)

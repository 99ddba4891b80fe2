"""manage.py show_probe PAQ-… [--condition raw|gold] [--format text|json]."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from probes.models import Probe


def probe_document(probe: Probe, condition: str) -> dict:
    key = probe.key
    view = probe.gold_view if condition == "gold" else probe.raw_view
    messages = probe.gold_messages if condition == "gold" else probe.raw_messages
    return {
        "logical_probe_id": probe.logical_probe_id,
        "interface": probe.interface,
        "task_id": probe.task_id,
        "condition": condition,
        "problem_id": probe.parent.problem_id,
        "candidates": [c["alias"] for c in view["candidates"]],
        "alias_to_entity": key.view.alias_to_entity,
        "gold_aliases": key.gold_aliases,
        "read_targets": key.view.read_targets,
        "views": [
            {
                "view_id": d["view_id"],
                "source_image_id": d["source_image_id"],
                "source_to_display": d["source_to_display"],
                "marks": [{"alias": m["alias"], "points_px": m["points_px"]} for m in d["marks"]],
            }
            for d in key.displays
        ],
        "attachment_ids": probe.attachment_ids,
        "recognition_packet": view["recognition_packet"],
        "messages": {"system": messages["system"], "user": messages["user"]},
        # private diagnostics as the Kit's metadata.PRIVATE.json (native_probe_metadata_v1), and the key's
        # asset records (Kit §2.9 environment ``assets``)
        "metadata": probe.metadata,
        "assets": key.assets,
    }


def diagnostic_lines(meta: dict) -> list[str]:
    """A few lines of the Kit metadata, in its names (the JSON form has all of it)."""
    if not meta:
        return []
    lines = [
        f"read_origin: {meta.get('read_origin')}  public_text_availability: "
        f"{meta.get('public_text_availability')}  hit_multiplicity: {meta.get('hit_multiplicity', 'n/a')}"
    ]
    nearest = meta.get("nearest_region") or {}
    detail = (
        nearest.get("predicted_alias")
        or ", ".join(nearest.get("tied_aliases") or [])
        or nearest.get("reason", "")
    )
    lines.append(f"nearest_region: {nearest.get('status')} {detail} (outcome {nearest.get('outcome')})")
    types = meta.get("candidate_native_types_PRIVATE") or {}
    lines.append("candidate types: " + ", ".join(f"{a}={t}" for a, t in sorted(types.items())))
    return lines


class Command(BaseCommand):
    help = "Show one probe: public prompt, attachments and (private) key."

    def add_arguments(self, parser):
        parser.add_argument("logical_probe_id")
        parser.add_argument("--condition", choices=["raw", "gold"], default="raw")
        parser.add_argument("--format", choices=["text", "json"], default="text")

    def handle(self, *args, **options):
        probe = (
            Probe.objects.select_related("parent", "key")
            .filter(logical_probe_id=options["logical_probe_id"])
            .first()
        )
        if probe is None:
            raise CommandError(f"No probe {options['logical_probe_id']}.")
        doc = probe_document(probe, options["condition"])
        if options["format"] == "json":
            self.stdout.write(json.dumps(doc, ensure_ascii=False, indent=2, sort_keys=True))
            return
        self.stdout.write(
            f"{doc['logical_probe_id']}  {doc['interface']}  {doc['problem_id']}  ({doc['condition']})"
        )
        self.stdout.write(f"candidates (display order): {', '.join(doc['candidates'])}")
        self.stdout.write(
            "alias → entity: " + ", ".join(f"{a}={e}" for a, e in sorted(doc["alias_to_entity"].items()))
        )
        self.stdout.write(f"gold aliases: {', '.join(doc['gold_aliases'])}")
        for target in doc["read_targets"]:
            self.stdout.write(f"read {target['anchor_alias']}: {target['expected']!r}")
        for view in doc["views"]:
            marks = "; ".join(f"{m['alias']} {m['points_px']}" for m in view["marks"])
            self.stdout.write(f"{view['view_id']} ({view['source_image_id']}): {marks}")
        self.stdout.write(f"attachments: {', '.join(doc['attachment_ids'])}")
        for line in diagnostic_lines(doc["metadata"]):
            self.stdout.write(line)
        self.stdout.write("--- system ---\n" + doc["messages"]["system"])
        self.stdout.write("--- user ---\n" + doc["messages"]["user"])

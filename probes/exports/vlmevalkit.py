"""A release's public part as VLMEvalKit TSV files: one TSV per condition.

VLMEvalKit keeps a benchmark as one TSV (its ``docs/en/Development.md``): ``index`` (a unique integer per line),
``image`` (the base64 of the image; several images as a list of base64 strings, which VLMEvalKit reads back with
``toliststr``), ``image_path``, ``question``, ``hint``, the choice columns, ``answer``, ``category``,
``l2-category``, ``split``. Here: the views in order as base64 (one image → the string, several → a JSON list),
``image_path`` their public file names (same shape), ``question`` the prompt (below), ``category`` the interface,
``l2-category`` the condition, ``split`` the release split, then our own columns (``system_prompt`` and
``user_prompt``, the two messages exactly as released, the ids, the language). No ``answer`` and no choice
columns: the TSV is public only, and scoring needs the release's private key (see the lmms-eval export for a
scorer hook).

``question`` is ``prompt_text``: the system message, a blank line, the user message (the user message alone when
the system message is empty), the same text the lmms-eval export's ``doc_to_text`` gives a model without chat
messages. VLMEvalKit builds a model's input from the images and ``question`` only (``ImageBaseDataset.build_prompt``:
the images, then one text part; a TSV it does not know is read as ``CustomVQADataset``), and a dataset has no way
to hand it a system message, so a ``system_prompt`` column alone would never reach the model: it would answer
without the instructions that define the labels and the JSON reply. Put into ``question``, every word of both
released messages reaches the model once, in order; the separate columns keep each message exact for a reader.
VLMEvalKit's own order puts the images before the text (the app sends the text first).
"""

from __future__ import annotations

import base64
import csv
import json
import time
from pathlib import Path
from typing import Any

from .hf import ExportLeak, ImageReader
from .leakage import export_leaks
from .public import PublicPart

TSV_COLUMNS = (
    "index",
    "image",
    "image_path",
    "question",
    "category",
    "l2-category",
    "split",
    "system_prompt",
    "user_prompt",
    "instance_id",
    "logical_probe_id",
    "task_id",
    "language",
)


PROMPT_SEPARATOR = "\n\n"


def prompt_text(system: str, user: str) -> str:
    """The one text a model gets when the harness has no system message: the system message, a blank line, the
    user message (the lmms-eval export's ``doc_to_text``)."""
    return system + PROMPT_SEPARATOR + user if system else user


def _one_or_list(values: list[str]) -> str:
    return values[0] if len(values) == 1 else json.dumps(values)


def tsv_rows(records: list[dict[str, Any]], read_image: ImageReader) -> list[dict[str, Any]]:
    """One TSV line per public record, in release order (pure)."""
    rows = []
    for index, record in enumerate(records):
        attachments = record["input"]["attachments"]
        messages = record["input"]["messages"]
        rows.append(
            {
                "index": index,
                "image": _one_or_list([base64.b64encode(read_image(a)).decode("ascii") for a in attachments]),
                "image_path": _one_or_list([Path(a["path"]).name for a in attachments]),
                "question": prompt_text(messages["system"], messages["user"]),
                "category": record["interface"],
                "l2-category": record["condition"],
                "split": record["split"],
                "system_prompt": messages["system"],
                "user_prompt": messages["user"],
                "instance_id": record["instance_id"],
                "logical_probe_id": record["logical_probe_id"],
                "task_id": record["task_id"],
                "language": record["language"],
            }
        )
    return rows


def record_of_line(line: dict[str, Any]) -> dict[str, Any]:
    """A TSV line back as the public QA record it carries (for the leakage scan)."""
    return {
        "instance_id": line["instance_id"],
        "logical_probe_id": line["logical_probe_id"],
        "condition": line["l2-category"],
        "input": {
            "messages": {"system": line["system_prompt"], "user": line["user_prompt"]},
            "attachments": [],
        },
    }


def tsv_text(path: Path) -> str:
    """A TSV's text for the leakage scan, without the base64 cells: they are the public views, each checked
    against the hash its record names when it was read (``PublicPart.image_bytes``), and scanning megabytes of
    base64 for every private token would cost more than the export."""
    with path.open(encoding="utf-8", newline="") as handle:
        return "\n".join(
            "\t".join(v for k, v in line.items() if k != "image")
            for line in csv.DictReader(handle, delimiter="\t")
        )


def tsv_name(manifest: dict[str, Any], condition: str) -> str:
    return f"PhysAlign_{manifest['release_id'][5:17]}_{condition}.tsv"


def write_vlmevalkit(part: PublicPart, output: Path) -> dict[str, Any]:
    """Write one TSV per condition with rows; refused (files removed) when the leakage scan finds a private
    string."""
    started = time.perf_counter()
    output.mkdir(parents=True, exist_ok=True)
    written: dict[str, int] = {}
    records = []
    for condition, rows in part.records.items():
        if not rows:
            continue
        path = output / tsv_name(part.manifest, condition)
        with path.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, TSV_COLUMNS, delimiter="\t", lineterminator="\n")
            writer.writeheader()
            lines = tsv_rows(rows, part.image_bytes)
            writer.writerows(lines)
        written[path.name] = len(rows)
        records += [record_of_line(line) for line in lines]
    leaks = export_leaks(part.root, output, records, tsv_text)
    if leaks:
        for name in written:
            (output / name).unlink()
        raise ExportLeak("; ".join(f"{e['code']}: {e['detail']}" for e in leaks))
    size = sum((output / name).stat().st_size for name in written)
    return {"files": written, "bytes": size, "seconds": time.perf_counter() - started}

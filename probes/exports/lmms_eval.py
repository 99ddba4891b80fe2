"""A release's public part as an lmms-eval task folder.

The folder holds the Hugging Face export under ``data/`` (``hf.write_hf``: parquet shards, dataset card), one task
YAML per condition (``physalign_<id>_<condition>.yaml``, read by ``lmms_eval --include_path DIR``), a group YAML
naming them, and ``utils.py``: ``doc_to_messages`` (the system and user messages exactly as released, the views
after the text in their order, as the app sends them), ``doc_to_visual``/``doc_to_text`` for models without
chat messages, and ``process_results``, which scores each output with PhysAlign Studio's own parser and scorer
(``evaluation.parsing``, ``evaluation.scoring``) against the release's private key: ``private/mappings.json``,
given separately in ``PHYSALIGN_PRIVATE_KEY`` (never part of the folder). The task YAML follows lmms-eval's
``docs/task_guide.md`` (``dataset_path``/``dataset_kwargs`` passed to ``datasets.load_dataset``, ``test_split``,
``output_type: generate_until``, ``!function utils.…`` hooks, ``metric_list`` with aggregation and
``higher_is_better``, ``metadata``).

``generation_kwargs`` names ``until: []``: lmms-eval's ``TaskConfig`` adds its few-shot delimiter (``until: ["\n\n"]``)
to a task whose generation kwargs have no ``until`` key, and its models cut the output at the first stop string, so
an answer after a blank line ("Here is the answer:\n\n{…}") would never reach the parser. The key is present and
empty, so lmms-eval keeps it (it tests ``"until" not in generation_kwargs``) and the models stop only at their
end-of-sequence token or ``max_new_tokens``, as the app's own runs do.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

from .hf import ExportLeak, parquet_text, write_hf
from .leakage import export_leaks
from .public import PublicPart

METRICS = ("physalign_G", "physalign_C", "physalign_J")
MAX_NEW_TOKENS = 2048

UTILS_PY = '''"""lmms-eval hooks for a PhysAlign release, written by PhysAlign Studio (probes/exports/lmms_eval.py).

Scoring needs two things this folder does not hold: the release's private key (its private/mappings.json), named
by the environment variable PHYSALIGN_PRIVATE_KEY, and PhysAlign Studio's scorer (a checkout on PYTHONPATH, or
its path in PHYSALIGN_STUDIO). Per-item G, C and J are the app's own; the means below are plain item means, the
paper's metrics come from `manage.py metrics` over the same items.
"""

import json
import os
import sys
from functools import lru_cache


def doc_to_visual(doc):
    return list(doc["images"])


def doc_to_text(doc, lmms_eval_specific_kwargs=None):
    return doc["system"] + "\\n\\n" + doc["user"] if doc["system"] else doc["user"]


def doc_to_messages(doc, lmms_eval_specific_kwargs=None):
    user = [{"type": "text", "text": doc["user"]}] + [{"type": "image", "url": image} for image in doc["images"]]
    system = [{"role": "system", "content": [{"type": "text", "text": doc["system"]}]}] if doc["system"] else []
    return system + [{"role": "user", "content": user}]


@lru_cache(maxsize=1)
def _keys():
    path = os.environ.get("PHYSALIGN_PRIVATE_KEY")
    if not path:
        raise RuntimeError("set PHYSALIGN_PRIVATE_KEY to the release's private/mappings.json to score")
    with open(path, encoding="utf-8") as handle:
        return {key["logical_probe_id"]: key for key in json.load(handle)}


def _score():
    studio = os.environ.get("PHYSALIGN_STUDIO")
    if studio and studio not in sys.path:
        sys.path.insert(0, studio)
    from evaluation.scoring import score

    return score


def process_results(doc, results):
    item = _score()(results[0] if results else None, _keys()[doc["logical_probe_id"]], doc["condition"])
    return {"physalign_G": item.G, "physalign_C": item.C, "physalign_J": item.J}


def aggregate_mean(scores):
    """The mean over the items where the score exists (C and J exist only for raw probes with reads)."""
    values = [s for s in scores if s is not None]
    return sum(values) / len(values) if values else None
'''


def task_name(manifest: dict[str, Any], condition: str | None = None) -> str:
    base = f"physalign_{manifest['release_id'][5:17]}"
    return f"{base}_{condition}" if condition else base


def task_yaml(manifest: dict[str, Any], condition: str, data_files: list[str]) -> str:
    """One task config (pure). ``!function`` tags are lmms-eval's, so the text is written, not dumped."""
    split = manifest["split"]
    files = "\n".join(f"      - {json.dumps(f)}" for f in data_files)
    metrics = "\n".join(
        f"  - metric: {m}\n    aggregation: !function utils.aggregate_mean\n    higher_is_better: true"
        for m in METRICS
    )
    return f"""# PhysAlign release {manifest["release_id"]}, condition {condition} (written by PhysAlign Studio)
task: {task_name(manifest, condition)}
dataset_path: parquet
dataset_kwargs:
  data_files:
    {split}:
{files}
test_split: {split}
output_type: generate_until
doc_to_visual: !function utils.doc_to_visual
doc_to_text: !function utils.doc_to_text
doc_to_messages: !function utils.doc_to_messages
doc_to_target: logical_probe_id
generation_kwargs:
  until: []
  max_new_tokens: {MAX_NEW_TOKENS}
  temperature: 0
  do_sample: false
process_results: !function utils.process_results
metric_list:
{metrics}
metadata:
  version: 1.0
  release_id: {manifest["release_id"]}
  condition: {condition}
"""


def write_lmms_eval(part: PublicPart, output: Path, sources: list[dict[str, Any]]) -> dict[str, Any]:
    """The task folder at ``output``: data (the HF export), task YAMLs, group YAML, utils.py; scanned."""
    started = time.perf_counter()
    output.mkdir(parents=True, exist_ok=True)
    data = output / "data"
    hf = write_hf(part, data, sources)
    tasks = []
    for condition, rows in part.records.items():
        if not rows:
            continue
        files = sorted(str(p.resolve()) for p in data.glob(f"data/{condition}_*/*.parquet"))
        (output / f"{task_name(part.manifest, condition)}.yaml").write_text(
            task_yaml(part.manifest, condition, files), encoding="utf-8"
        )
        tasks.append(task_name(part.manifest, condition))
    group = f"group: {task_name(part.manifest)}\ntask:\n" + "".join(f"  - {t}\n" for t in tasks)
    (output / f"_{task_name(part.manifest)}.yaml").write_text(group, encoding="utf-8")
    (output / "utils.py").write_text(UTILS_PY, encoding="utf-8")
    leaks = export_leaks(part.root, output, [], parquet_text)
    if leaks:
        shutil.rmtree(data)
        for name in [*(f"{t}.yaml" for t in tasks), f"_{task_name(part.manifest)}.yaml", "utils.py"]:
            (output / name).unlink()
        raise ExportLeak("; ".join(f"{e['code']}: {e['detail']}" for e in leaks))
    files_out = [p for p in output.rglob("*") if p.is_file()]
    return {
        "tasks": tasks,
        "rows": hf.configs,
        "files": len(files_out),
        "bytes": sum(p.stat().st_size for p in files_out),
        "seconds": time.perf_counter() - started,
    }

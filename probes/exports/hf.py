"""A release's public part as a Hugging Face dataset.

``hf_configs`` (pure, row by row ``hf_row``) turns public QA records into dataset rows per config: the system and user messages exactly as released,
the views in order as ``Image`` features with the bytes of ``public/``, and the public attachment facts.
``dataset_card`` (pure) writes the README.md with its YAML header from the release manifest, ``license_file`` (pure)
the LICENSE.md the header's ``license_link`` names when the licence is ``other``. ``export_hf`` writes
one parquet shard per config (condition × interface) of the release's split, the card, and refuses the export
when the release leakage scan finds a private string in any exported file (the shards read back as rows). Nothing of ``private/`` is read
except by the scan.
"""

from __future__ import annotations

import json
import re
import shutil
import time
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from django.db import transaction
from django.db.models import Count

from annotation.models import Source
from audit.services import event_record

from ..datasheet.selectors import datasheet_for_release
from ..datasheet.tables import markdown as datasheet_markdown
from ..release_store import (
    artifact_delete,
    artifact_exists,
    artifact_keep,
    artifact_open,
    build_dir,
    hf_zip_name,
    release_folder,
    storage_is_local,
)
from .leakage import export_leaks
from .public import PublicPart, read_public

ROW_FIELDS = ("instance_id", "logical_probe_id", "task_id", "interface", "language", "split", "condition")
HF_LICENSES = {"cc-by-4.0", "cc-by-sa-4.0", "cc-by-nc-4.0", "cc-by-nc-sa-4.0", "cc0-1.0", "mit", "apache-2.0"}
ImageReader = Callable[[dict[str, Any]], bytes]
LICENSE_FILE = "LICENSE.md"


class ExportLeak(ValueError):
    """The leakage scan found a private string in an exported file: the export is removed, never handed out."""


# Pure cores --------------------------------------------------------------------------------------------------------
def config_name(condition: str, interface: str) -> str:
    return f"{condition}_{interface}"


def hf_row(record: dict[str, Any], read_image: ImageReader) -> dict[str, Any]:
    attachments = record["input"]["attachments"]
    return {
        **{name: record[name] for name in ROW_FIELDS},
        "system": record["input"]["messages"]["system"],
        "user": record["input"]["messages"]["user"],
        "images": [{"bytes": read_image(a), "path": a["path"]} for a in attachments],
        "image_asset_ids": [a["asset_id"] for a in attachments],
        "image_sha256": [a["sha256"] for a in attachments],
        "image_widths": [a["width"] for a in attachments],
        "image_heights": [a["height"] for a in attachments],
    }


def hf_configs(
    records: dict[str, list[dict[str, Any]]], read_image: ImageReader
) -> dict[str, list[dict[str, Any]]]:
    """Rows per config (``<condition>_<interface>``), configs in condition then interface order, rows in
    release order."""
    configs: dict[str, list[dict[str, Any]]] = {}
    for condition, rows in records.items():
        for interface in sorted({r["interface"] for r in rows}):
            configs[config_name(condition, interface)] = [
                hf_row(r, read_image) for r in rows if r["interface"] == interface
            ]
    return configs


def record_of_row(row: dict[str, Any]) -> dict[str, Any]:
    """A dataset row back as its public QA record (the leakage scan and the round-trip test read this)."""
    return {
        **{name: row[name] for name in ROW_FIELDS},
        "input": {
            "messages": {"system": row["system"], "user": row["user"]},
            "attachments": [
                {"asset_id": a, "path": (img or {}).get("path") or "", "sha256": s, "width": w, "height": h}
                for a, img, s, w, h in zip(
                    row["image_asset_ids"],
                    row["images"],
                    row["image_sha256"],
                    row["image_widths"],
                    row["image_heights"],
                    strict=True,
                )
            ],
        },
    }


def hf_license(text: str) -> str:
    """A licence as the Hub's identifier when it is one of the common ones (``CC BY 4.0`` → ``cc-by-4.0``)."""
    slug = re.sub(r"[\s_]+", "-", text.strip().lower())
    return slug if slug in HF_LICENSES else "other"


def dataset_card(
    manifest: dict[str, Any],
    configs: dict[str, int],
    sources: list[dict[str, Any]],
    languages: Iterable[str],
    datasheet: str = "",
) -> str:
    """README.md of the dataset: YAML header (licence, configs with their data files, languages), then the task,
    the counts, the sources with their licences, the release's datasheet (``datasheet``: Markdown from
    ``probes.datasheet.tables.markdown``), how to score and how to cite."""
    import yaml  # a dependency of ``datasets``

    split = manifest["split"]
    licenses = sorted({hf_license(s["license"]) for s in sources if s["license"]}) or ["other"]
    header: dict[str, Any] = {
        "pretty_name": f"PhysAlign release {manifest['release_id'][:17]}",
        "license": licenses[0] if len(licenses) == 1 else "other",
        "language": sorted(set(languages)),
        "task_categories": ["visual-question-answering"],
        "tags": ["physics", "diagrams", "physalign"],
        "size_categories": [_size_category(sum(configs.values()))],
        "configs": [
            {"config_name": name, "data_files": [{"split": split, "path": f"data/{name}/{split}-*.parquet"}]}
            for name in configs
        ],
    }
    if header["license"] == "other":
        # the Hub links ``license: other`` to ``license_link`` (a URL or a file of the repo): the licence file below
        header["license_name"] = "per-source"
        header["license_link"] = LICENSE_FILE
        header["license_details"] = "; ".join(f"{s['name']}: {s['license'] or 'not stated'}" for s in sources)
    first_config = next(iter(configs), "CONFIG")
    counts = manifest.get("counts", {})
    rows = "\n".join(f"| `{name}` | {n} |" for name, n in configs.items())
    pools = "\n".join(
        f"| {pool} | {c.get('probes', 0)} | {c.get('mothers', 0)} |" for pool, c in sorted(counts.items())
    )
    source_rows = "\n".join(
        f"| {s['name']} | {s['license'] or 'not stated'} | {s['url'] or ''} | {s['problems']} |"
        for s in sources
    )
    warnings = ""
    if str(manifest.get("artifact_mode", "")).lower().startswith("synthetic"):
        warnings += "**SYNTHETIC EXAMPLE ONLY: NOT BENCHMARK DATA.**\n\n"
    if manifest.get("signoff_root") is None:
        warnings += (
            "**NO REVIEW SIGNOFF: exported by an admin override; this is not a reviewed release.**\n\n"
        )
    body = f"""# PhysAlign release `{manifest["release_id"]}`

{warnings}Localized physics-diagram probes compiled by PhysAlign Studio from evidence-grounded annotations.
Each row is one probe: a model gets the `system` and `user` messages exactly as given here, with the `images`
attached in their order, in a fresh context, and answers in the JSON the user message asks for.

- **raw** configs: the diagram and the question (every released probe, pool B).
- **gold** configs: the same probe with its reviewed reading of the diagram added to the prompt (the +GT
  condition, pool P).
- One config per condition and interface (`<condition>_<interface>`); split `{split}`; approval
  `{manifest.get("approval_mode", "")}`; artifact mode `{manifest.get("artifact_mode", "")}`.

## Counts

| Config | Probes |
|---|---|
{rows}

| Pool | Probes | Parent problems |
|---|---|---|
{pools}

## Sources and licences

| Source | Licence | URL | Parent problems |
|---|---|---|---|
{source_rows}

The licence of each source is in [`{LICENSE_FILE}`]({LICENSE_FILE}).
{"" if not datasheet else chr(10) + datasheet}
## Loading

```python
from datasets import load_dataset

rows = load_dataset("THIS_FOLDER_OR_REPO", "{first_config}", split="{split}")
```

The `images` column decodes to PIL images, which needs Pillow: `pip install "datasets[vision]"`. Without it,
read the bytes as stored: `rows.cast_column("images", datasets.List(datasets.Image(decode=False)))`.

## How to score

This dataset is the public part only: it holds no answers, candidate mappings or targets. Scoring needs the
release's private key (the release's `private/` folder, or `/api/releases/<id>/private/` for an account with
the scorer permission): parse each raw model output and score it with PhysAlign Studio's scorer
(`evaluation.parsing`, `evaluation.scoring`; Kit §5.1–§5.5, C/G/J fields), keyed by `instance_id`. An output
that cannot be parsed scores 0 and stays in the denominator. Aggregate with `manage.py metrics`.

## Citation

```bibtex
@misc{{physalign_release_{manifest["release_id"][5:17].lower()},
  title  = {{PhysAlign benchmark release {manifest["release_id"]}}},
  note   = {{Exported by PhysAlign Studio; split {split}}},
}}
```
"""
    return "---\n" + yaml.safe_dump(header, sort_keys=False, allow_unicode=True) + "---\n\n" + body


def license_file(manifest: dict[str, Any], sources: list[dict[str, Any]]) -> str:
    """LICENSE.md of the dataset (pure): the licence of every source its parent problems come from."""
    source_rows = "\n".join(
        f"| {s['name']} | {s['license'] or 'not stated'} | {s['url'] or ''} | {s['problems']} |"
        for s in sources
    )
    return f"""# Licences of PhysAlign release `{manifest["release_id"]}`

Every probe of this dataset is built from one parent problem (its text and its diagram) of one of the sources
below, and each source's problems come under that source's licence.

| Source | Licence | URL | Parent problems |
|---|---|---|---|
{source_rows}

A licence shown as *not stated* was not recorded with the source in PhysAlign Studio: ask the source's owner
before you redistribute its problems.
"""


def _size_category(n: int) -> str:
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if n < limit:
            return name
    return "100K<n<1M"


# Files -------------------------------------------------------------------------------------------------------------
def hf_features() -> Any:
    from datasets import Features, Image, List, Value

    text = Value("string")
    return Features(
        {
            **{name: text for name in ROW_FIELDS},
            "system": text,
            "user": text,
            "images": List(Image()),
            "image_asset_ids": List(text),
            "image_sha256": List(text),
            "image_widths": List(Value("int32")),
            "image_heights": List(Value("int32")),
        }
    )


def parquet_text(path: Path) -> str:
    """The strings a parquet file holds (every text cell, JSON-encoded), for the leakage scan; other files as
    text."""
    if path.suffix != ".parquet":
        return path.read_text(encoding="utf-8", errors="replace")
    import pyarrow.parquet as pq

    file = pq.ParquetFile(path)
    schema = file.schema_arrow
    metadata = json.dumps(
        {k.decode(errors="replace"): v.decode(errors="replace") for k, v in (schema.metadata or {}).items()},
        ensure_ascii=False,
    )
    columns = [c for c in schema.names if c != "images"]  # the image bytes are never read back
    rows = file.read(columns=columns).to_pylist()
    return json.dumps(rows, ensure_ascii=False) + "\n" + metadata


def _text_rows(path: Path) -> list[dict[str, Any]]:
    """A shard's rows as written, without the image bytes (the views are the hash-checked public files)."""
    import pyarrow.parquet as pq

    out: list[dict[str, Any]] = []
    for batch in pq.ParquetFile(path).iter_batches(batch_size=100):  # a row group's images at a time
        table = batch.to_pydict()
        images = table.pop("images")
        for i, views in enumerate(images):
            out.append(
                {
                    **{k: v[i] for k, v in table.items()},
                    "images": [{"path": (v or {}).get("path")} for v in views],
                }
            )
    return out


def hf_config_records(records: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """The public records of each config, in :func:`hf_configs` order (no image read yet)."""
    configs: dict[str, list[dict[str, Any]]] = {}
    for condition, rows in records.items():
        for interface in sorted({r["interface"] for r in rows}):
            configs[config_name(condition, interface)] = [r for r in rows if r["interface"] == interface]
    return configs


def write_shard(shard: Path, records: list[dict[str, Any]], read_image: ImageReader, features: Any) -> int:
    """One config's parquet shard written a row group at a time, as ``datasets.Dataset.to_parquet`` writes it
    (same schema, writer options and row-group size), but with only one row group's images in memory."""
    import datasets
    import pyarrow.parquet as pq
    from datasets import config as hf_config
    from datasets.arrow_writer import get_parquet_column_options, get_writer_batch_size_from_features

    batch_size = get_writer_batch_size_from_features(features) or hf_config.DEFAULT_MAX_BATCH_SIZE
    schema = features.arrow_schema
    cdc = hf_config.DEFAULT_CDC_OPTIONS
    writer = pq.ParquetWriter(
        str(shard),
        schema=schema,
        use_content_defined_chunking=cdc,
        write_page_index=True,
        **get_parquet_column_options(features, schema),
    )
    try:
        for offset in range(0, len(records), batch_size):
            rows = [hf_row(r, read_image) for r in records[offset : offset + batch_size]]
            writer.write_table(datasets.Dataset.from_list(rows, features=features).data.table)
            del rows
        if cdc is not False:
            writer.add_key_value_metadata({"content_defined_chunking": json.dumps(cdc)})
    finally:
        writer.close()
    return len(records)


@dataclass(frozen=True)
class HFExport:
    path: Path
    configs: dict[str, int]
    files: int
    bytes: int
    seconds: float


def write_hf(part: PublicPart, output: Path, sources: list[dict[str, Any]], datasheet: str = "") -> HFExport:
    """Write the dataset folder (parquet shards + README.md) and scan it; a leaking export is deleted, and so
    is one whose writing failed (a disk full, a write error): no partial dataset is left behind."""
    try:
        return _write_hf(part, output, sources, datasheet)
    except BaseException:
        shutil.rmtree(output, ignore_errors=True)
        raise


def _write_hf(part: PublicPart, output: Path, sources: list[dict[str, Any]], datasheet: str) -> HFExport:
    import datasets

    started = time.perf_counter()
    if output.exists():
        shutil.rmtree(output)
    output.mkdir(parents=True)
    split = part.manifest["split"]
    config_records = hf_config_records(part.records)
    configs = {name: len(rows) for name, rows in config_records.items()}
    features = hf_features()
    bars = datasets.is_progress_bar_enabled()
    datasets.disable_progress_bars()  # a bar per shard is noise in a command's output and a worker's log
    try:
        for name, rows in config_records.items():
            shard = output / "data" / name / f"{split}-00000-of-00001.parquet"
            shard.parent.mkdir(parents=True)
            write_shard(shard, rows, part.image_bytes, features)
    finally:
        if bars:
            datasets.enable_progress_bars()
    languages = {r["language"] for rows in part.records.values() for r in rows}
    card = dataset_card(part.manifest, configs, sources, languages, datasheet)
    (output / "README.md").write_text(card, encoding="utf-8")
    (output / LICENSE_FILE).write_text(license_file(part.manifest, sources), encoding="utf-8")
    records = [
        record_of_row(row) for shard in sorted(output.glob("data/*/*.parquet")) for row in _text_rows(shard)
    ]
    leaks = export_leaks(part.root, output, records, parquet_text)
    if leaks:
        shutil.rmtree(output)
        raise ExportLeak("; ".join(f"{e['code']}: {e['detail']}" for e in leaks))
    files = [p for p in output.rglob("*") if p.is_file()]
    return HFExport(
        path=output,
        configs=configs,
        files=len(files),
        bytes=sum(p.stat().st_size for p in files),
        seconds=time.perf_counter() - started,
    )


def zip_folder(folder: Path, target: Path) -> Path:
    partial = target.with_name(target.name + ".partial")
    try:
        with zipfile.ZipFile(
            partial, "w", compression=zipfile.ZIP_STORED
        ) as archive:  # parquet/PNG: compressed
            for path in sorted(p for p in folder.rglob("*") if p.is_file()):
                archive.write(path, path.relative_to(folder).as_posix())
    except BaseException:  # a disk full or a write error: no half-written zip is left to be trusted
        partial.unlink(missing_ok=True)
        raise
    partial.replace(target)
    return target


# Services ----------------------------------------------------------------------------------------------------------
def release_sources(release: Any) -> list[dict[str, Any]]:
    """The sources of a release's parent problems with their licence (from the database)."""
    problem_ids = set(release.items.values_list("problem_id", flat=True))
    sources = (
        Source.objects.filter(problems__problem_id__in=problem_ids)
        .annotate(n=Count("problems"))
        .order_by("name")
    )
    return [{"name": s.name, "license": s.license, "url": s.url, "problems": s.n} for s in sources]


def export_hf(*, release: Any, output: Path, actor: Any = None) -> HFExport:
    """The release's public part as a Hugging Face dataset folder at ``output`` (audited)."""
    result = write_hf(
        read_public(release_folder(release)),
        output,
        release_sources(release),
        datasheet_markdown(datasheet_for_release(release)),
    )
    event_record(
        actor=actor,
        verb="release.export_hf",
        obj=release,
        after={"configs": result.configs, "files": result.files, "bytes": result.bytes},
    )
    return result


def hf_zip_path(release: Any) -> Path:
    """Where the dataset zip is built: beside the release folder (where it stays on the local storage)."""
    return build_dir(release) / f"{release.release_id}.hf.zip"


def hf_zip_ref(release: Any) -> str:
    """Where the built dataset zip is kept: its path beside the folder, or its name in the media bucket."""
    return str(hf_zip_path(release)) if storage_is_local() else hf_zip_name(release.release_id)


def release_hf_zip_build(*, release: Any, actor: Any) -> str:
    """Build the dataset next to the release folder (a scratch folder with a bucket), zip it for the release
    page's download and keep the zip (:func:`probes.release_store.artifact_keep`); returns where it is kept."""
    folder = build_dir(release) / f"{release.release_id}.hf"
    if folder.exists():  # a rebuild starts from nothing: no shard of an earlier build survives
        shutil.rmtree(folder)
    export_hf(release=release, output=folder, actor=actor)
    kept = artifact_keep(zip_folder(folder, hf_zip_path(release)), hf_zip_name(release.release_id))
    if not storage_is_local():  # the bucket has the zip; the scratch dataset folder is not kept
        shutil.rmtree(folder)
    return kept


def release_hf_queue(*, release: Any, actor: Any) -> Any:
    """Queue the build of the release's dataset and its zip (a worker builds it: ``release_hf_build``).
    A build queued or running is left alone."""
    from probes.models import Release
    from probes.tasks import release_hf_task  # the tasks module imports the services this one builds on

    with transaction.atomic():
        release = Release.objects.select_for_update().get(pk=release.pk)
        if release.hf_status in ("queued", "running"):
            return release
        Release.objects.filter(pk=release.pk).update(hf_status="queued", hf_error="")
        event_record(actor=actor, verb="release.hf_queued", obj=release)
        actor_pk = getattr(actor, "pk", None)
        transaction.on_commit(lambda: release_hf_task.delay(release_pk=release.pk, actor_pk=actor_pk))
    release.refresh_from_db()
    return release


def release_hf_build(*, release_pk: int, actor_pk: int | None = None) -> Any:
    """Build a queued dataset: ready with its zip, or failed with the reason (a leak found by the scan is
    refused, and nothing of it is kept)."""
    from django.contrib.auth import get_user_model

    from probes.models import Release

    release = Release.objects.get(pk=release_pk)
    Release.objects.filter(pk=release.pk).update(hf_status="running", hf_error="")
    actor = get_user_model().objects.filter(pk=actor_pk).first() if actor_pk else None
    artifact_delete(hf_zip_ref(release))
    try:
        release_hf_zip_build(release=release, actor=actor)
    except ExportLeak as exc:
        Release.objects.filter(pk=release.pk).update(
            hf_status="failed",
            hf_error=f"The leakage scan found a private string in the dataset: {exc}"[:2000],
        )
    except Exception as exc:
        Release.objects.filter(pk=release.pk).update(
            hf_status="failed", hf_error=f"{type(exc).__name__}: {exc}"[:2000]
        )
        raise
    else:
        Release.objects.filter(pk=release.pk).update(hf_status="ready")
    release.refresh_from_db()
    return release


def release_hf_zip_ready(release: Any) -> bool:
    """Whether the dataset zip is built and still there (not while it is being rebuilt)."""
    return release.hf_status == "ready" and artifact_exists(hf_zip_ref(release))


def release_hf_zip_open(release: Any) -> IO[bytes] | None:
    """The built dataset zip open for reading, or None while it is not built (or being rebuilt, or its file went
    missing)."""
    return artifact_open(hf_zip_ref(release)) if release.hf_status == "ready" else None


def push_to_hub(folder: Path, repo_id: str, *, private: bool = True) -> str:
    """Upload an exported dataset folder to the Hugging Face Hub (token from ``HF_TOKEN`` or the login cache)."""
    from huggingface_hub import HfApi

    api = HfApi()
    api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    info = api.upload_folder(folder_path=str(folder), repo_id=repo_id, repo_type="dataset")
    return str(getattr(info, "commit_url", info))

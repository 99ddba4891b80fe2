"""A PhysAlign release as an inspect_ai task. Django-free.

``physalign`` loads an exported release's public part, either the Kit folder layout (``release.json``,
``public/qa_<condition>.json`` and the views under ``public/images/``) or the Hugging Face export
(``manage.py export_hf``: ``data/<condition>_<interface>/*.parquet``), and builds one ``Sample`` per probe: the
system and user messages exactly as released, the user text followed by the views in their order (as the app
sends them), each view's bytes checked against the hash its record names. The sample id is the logical probe id;
the metadata holds only public fields of the record.

``physalign_scorer`` scores each output with the app's own parser and C/G/J scorer (``evaluation.scoring.score``)
against the release's private key (``private/mappings.json`` of the release folder, or the folder itself), given
as ``-T private=…`` or in ``PHYSALIGN_PRIVATE_KEY`` (the lmms-eval export's convention). Without a key the task
has no scorer: the log records the outputs and no score, never a guess; score it later with ``inspect score``
or store it in the app with ``manage.py import_inspect_log``. Per item, a score is ``{"C", "G", "J"}`` with NaN
where the score does not apply (C and J outside pool L, everything for an output that was never served); the
metrics are the means over the items where the score applies (inspect leaves NaN out), so in the raw condition
G's mean is GAcc over pool B and C's and J's are CAcc and JAcc over pool L, as plain item means. The paper's
parent-clustered metrics come from the app: ``manage.py import_inspect_log LOG.eval``.

    PYTHONPATH=. inspect eval physalign_studio/inspect_task.py@physalign -T source="$PWD/RELEASE_DIR" \
        -T condition=raw -T private="$PWD/RELEASE_DIR/private/mappings.json" --model openai/gpt-4o

(from the checkout: the task imports the app's scorer, so the checkout must be on ``PYTHONPATH``). The paths
must be absolute when inspect loads this file: ``inspect eval FILE`` (and ``inspect_ai.eval("FILE@physalign")``,
``inspect score --scorer FILE@…``) changes the working directory to the file's folder while it builds the task
(``inspect_ai._eval.loader.create_file_tasks``: ``chdir_python(file.parent)``) and keeps no record of the folder it
was started in, so a relative ``-T source=var/releases/…`` would be read from ``physalign_studio/``. ``caller_path``
refuses a relative path there with that explanation and the absolute form to pass, instead of guessing (``$PWD``
is the shell's, stale in a process that changed its folder). Where no one changed the folder (the task built by
calling ``physalign(...)`` in Python), a relative path is the caller's and is resolved against it.
"""

# No ``from __future__ import annotations``: ``inspect eval FILE`` executes this file as a module it does not
# register in ``sys.modules``, where dataclasses cannot resolve string annotations.
import json
import logging
import math
import mimetypes
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    Content,
    ContentImage,
    ContentText,
)
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import TaskState, generate

from evaluation.inspect_outputs import inspect_response
from evaluation.scoring import score
from kit.canonical import bytes_digest
from llm.types import ImageInput
from probes.exports.public import CONDITIONS, read_public

logger = logging.getLogger(__name__)

PRIVATE_KEY_ENV = "PHYSALIGN_PRIVATE_KEY"
KIT = "kit"
HF = "hf"
# the public fields of a QA record a sample carries as metadata (the same columns as the HF export's rows)
METADATA_FIELDS = (
    "instance_id",
    "logical_probe_id",
    "task_id",
    "interface",
    "language",
    "split",
    "condition",
)
SCORE_KEYS = ("C", "G", "J")
_CARD_TITLE = re.compile(r"^# PhysAlign release `([^`]+)`", re.M)


class ReleaseSourceError(ValueError):
    """The source is not an exported release this task reads, or it does not match its private key."""


# Paths given to the task ----------------------------------------------------------------------------------------
TASK_DIR = Path(__file__).resolve().parent


def caller_path(value: str, option: str) -> Path:
    """A path the caller gave (``option`` names it in the message): absolute as given; relative, against the
    working directory when it is the caller's, refused when it is this file's folder, where inspect builds a task
    loaded from its file (the folder the caller ran inspect in is not known there)."""
    path = Path(value).expanduser()
    if path.is_absolute():
        return path
    cwd = Path.cwd()
    if cwd.resolve() != TASK_DIR:
        return cwd / path
    raise ReleaseSourceError(
        f"{option}={value} is a relative path, and inspect builds this task from the task file's own folder "
        f"({TASK_DIR}), not from the folder you ran it in, so the path cannot be resolved against your working "
        f'directory; give it as an absolute path, e.g. {option}="$PWD/{value}"'
    )


@dataclass(frozen=True)
class PublicProbe:
    """One released probe of one condition, as a model gets it."""

    metadata: dict[str, Any]
    system: str
    user: str
    images: tuple[ImageInput, ...]


@dataclass(frozen=True)
class ReleaseSamples:
    release_id: str | None
    format: str
    probes: list[PublicProbe]


# Reading an export --------------------------------------------------------------------------------------------------
def _media_type(path: str) -> str:
    guessed = mimetypes.guess_type(path)[0]
    if guessed is None or not guessed.startswith("image/"):
        raise ReleaseSourceError(f"not an image file name: {path!r}")
    return guessed


def _checked(data: bytes, sha256: str, path: str) -> ImageInput:
    if bytes_digest(data) != sha256:
        raise ReleaseSourceError(f"view {path!r} does not match the hash its record names")
    return ImageInput(data=data, media_type=_media_type(path))


def _wanted(record: dict[str, Any], condition: str, interface: str | None) -> bool:
    return record["condition"] == condition and (interface is None or record["interface"] == interface)


def _kit_probes(root: Path, condition: str, interface: str | None) -> ReleaseSamples:
    part = read_public(root)
    probes = []
    for record in part.records[condition]:
        if not _wanted(record, condition, interface):
            continue
        attachments = record["input"]["attachments"]
        probes.append(
            PublicProbe(
                metadata={name: record[name] for name in METADATA_FIELDS},
                system=record["input"]["messages"]["system"],
                user=record["input"]["messages"]["user"],
                images=tuple(_checked(part.image_bytes(a), a["sha256"], a["path"]) for a in attachments),
            )
        )
    return ReleaseSamples(release_id=part.manifest.get("release_id"), format=KIT, probes=probes)


def _hf_probes(root: Path, condition: str, interface: str | None) -> ReleaseSamples:
    import pyarrow.parquet as pq  # a dependency of ``datasets``

    shards = sorted(
        path
        for path in root.glob(f"data/{condition}_*/*.parquet")
        if interface is None or path.parent.name == f"{condition}_{interface}"
    )
    probes = []
    for shard in shards:
        for row in pq.read_table(shard).to_pylist():
            if not _wanted(row, condition, interface):
                continue
            images = row["images"] or []
            probes.append(
                PublicProbe(
                    metadata={name: row[name] for name in METADATA_FIELDS},
                    system=row["system"],
                    user=row["user"],
                    images=tuple(
                        _checked(image["bytes"], sha, image["path"] or "")
                        for image, sha in zip(images, row["image_sha256"], strict=True)
                    ),
                )
            )
    card = root / "README.md"
    title = _CARD_TITLE.search(card.read_text(encoding="utf-8")) if card.is_file() else None
    return ReleaseSamples(release_id=title.group(1) if title else None, format=HF, probes=probes)


def load_release(source: Path, condition: str = "raw", interface: str | None = None) -> ReleaseSamples:
    """The probes of one condition (and interface, None: all) of an exported release, in release order (the Kit
    layout) or config then row order (the HF export)."""
    if condition not in CONDITIONS:
        raise ReleaseSourceError(f"condition must be one of {list(CONDITIONS)}, not {condition!r}")
    if (source / "release.json").is_file() and (source / "public").is_dir():
        loaded = _kit_probes(source, condition, interface)
    elif any(source.glob("data/*/*.parquet")):
        loaded = _hf_probes(source, condition, interface)
    else:
        raise ReleaseSourceError(
            f"{source} is neither a release folder (release.json, public/) nor a Hugging Face export "
            "(data/<condition>_<interface>/*.parquet)"
        )
    if not loaded.probes:
        raise ReleaseSourceError(
            f"{source} has no {condition} probes" + (f" of interface {interface!r}" if interface else "")
        )
    return loaded


# Samples ------------------------------------------------------------------------------------------------------------
def probe_messages(probe: PublicProbe) -> list[ChatMessage]:
    """A fresh context: the system message, then the user text followed by the views in order."""
    content: list[Content] = [ContentText(text=probe.user)]
    content += [ContentImage(image=image.data_url()) for image in probe.images]
    system: list[ChatMessage] = [ChatMessageSystem(content=probe.system)] if probe.system else []
    return [*system, ChatMessageUser(content=content)]


def probe_sample(probe: PublicProbe, release_id: str | None) -> Sample:
    return Sample(
        id=probe.metadata["logical_probe_id"],
        input=probe_messages(probe),
        target="",  # the answer is in the private key, never in a sample
        metadata={
            **probe.metadata,
            "release_id": release_id,
            "image_sha256": [image.sha256 for image in probe.images],
        },
    )


# Scoring ------------------------------------------------------------------------------------------------------------
def private_key_file(path: Path) -> Path:
    """The key file: a release folder's ``private/mappings.json``, or the file itself."""
    return path / "private" / "mappings.json" if path.is_dir() else path


@lru_cache(maxsize=4)
def read_private_keys(path: str) -> dict[str, dict[str, Any]]:
    """Each probe's private mapping (``private/mappings.json``), by logical probe id."""
    file = private_key_file(Path(path))
    try:
        entries = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ReleaseSourceError(f"cannot read the private key {file}: {exc}") from exc
    if not isinstance(entries, list) or not all(
        isinstance(e, dict) and isinstance(e.get("logical_probe_id"), str) for e in entries
    ):
        raise ReleaseSourceError(
            f"{file} is not a release's private key (a list of mappings with logical_probe_id)"
        )
    return {e["logical_probe_id"]: e for e in entries}


def check_keys(keys: dict[str, dict[str, Any]], probe_ids: Iterable[str]) -> None:
    missing = sorted(set(probe_ids) - keys.keys())
    if missing:
        raise ReleaseSourceError(
            f"the private key has no mapping for {len(missing)} probe(s) of this release "
            f"({', '.join(missing[:5])}{'…' if len(missing) > 5 else ''}): is it another release's key?"
        )


def score_value(c: int | None, g: int | None, j: int | None) -> dict[str, int | float]:
    """An item's C, G, J as an inspect score value: NaN where the score does not apply (left out of the means)."""
    return {name: math.nan if v is None else v for name, v in zip(SCORE_KEYS, (c, g, j), strict=True)}


@scorer(metrics={name: [mean()] for name in SCORE_KEYS})
def physalign_scorer(private: str) -> Scorer:
    """C, G and J of each output by the app's scorer, against the release's private key at ``private``."""
    keys = read_private_keys(str(caller_path(private, "-S private")))

    async def score_output(state: TaskState, target: Target) -> Score:
        probe_id = str(state.sample_id)
        if probe_id not in keys:
            raise ReleaseSourceError(f"the private key has no mapping for probe {probe_id}")
        served = bool(state.output.choices)
        output = inspect_response(
            served=served,
            completion=state.output.completion if served else None,
            stop_reason=state.output.stop_reason if served else None,
        )
        item = score(output.response, keys[probe_id], state.metadata["condition"])
        return Score(
            value=score_value(item.C, item.G, item.J),
            answer=item.status,
            explanation=f"{item.status}: C={item.C} G={item.G} J={item.J}",  # the reasons name the gold answer
            metadata={
                "status": item.status,
                "object_valid": item.object_valid,
                "field_valid": item.field_valid,
            },
        )

    return score_output


# The task -----------------------------------------------------------------------------------------------------------
@task
def physalign(
    source: str, condition: str = "raw", interface: str | None = None, private: str | None = None
) -> Task:
    """A PhysAlign release (``source``: the release folder or its Hugging Face export), one condition (``raw``
    or ``gold``), optionally one interface; scored when the private key is given (``private`` or
    ``PHYSALIGN_PRIVATE_KEY``)."""
    loaded = load_release(caller_path(source, "-T source"), condition, interface or None)
    if private:
        key_path: str | None = str(caller_path(private, "-T private"))
    elif os.environ.get(PRIVATE_KEY_ENV):
        key_path = str(caller_path(os.environ[PRIVATE_KEY_ENV], PRIVATE_KEY_ENV))
    else:
        key_path = None
    if key_path:
        check_keys(read_private_keys(key_path), (p.metadata["logical_probe_id"] for p in loaded.probes))
    else:
        logger.warning(
            "no private key (-T private=… or %s): the outputs are recorded and not scored", PRIVATE_KEY_ENV
        )
    samples = [probe_sample(p, loaded.release_id) for p in loaded.probes]
    return Task(
        dataset=MemoryDataset(samples, name=f"physalign_{loaded.release_id or 'release'}_{condition}"),
        solver=generate(),
        scorer=physalign_scorer(private=key_path) if key_path else None,
        metadata={
            "physalign_release_id": loaded.release_id,
            "physalign_condition": condition,
            "physalign_interface": interface or None,
            "physalign_format": loaded.format,
        },
    )

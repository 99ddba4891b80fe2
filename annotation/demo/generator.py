"""Deterministic generator of a complete kit source workspace (Kit §2.1–§2.4).

``generate_workspace(out_dir, count=N, seed=S)`` writes::

    workspace_config.json              {"dataset_dir": "dataset", "path_base": "workspace"}
    blind/manifest.jsonl               one canonical-JSON parent problem per line (Kit §2.2)
    passes/pass1..pass4/<pid>.json     PhysGraph documents (Kit §2.4)
    reviews/state.json                 all four stages approved, hash-bound (Kit §2.3)
    dataset/images/<pid>_0.png         the diagram
    private/answers.jsonl              answer sidecar, never part of the blind manifest

Everything is a pure function of ``(count, seed, namespace)``: each problem draws from its own
``random.Random`` seeded with a string of the seed and index (CPython hashes string seeds with
SHA-512, so this does not depend on ``PYTHONHASHSEED``), JSON is canonical (Kit §2.0) and PNGs are
saved without metadata, so two runs give byte-identical trees.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from annotation.demo.builder import ProblemBuilder
from annotation.demo.scenes import FAMILIES, SceneAnswer, pick_size
from kit.canonical import bytes_digest, canonical_bytes, digest, write_json_bytes

IMAGE_ID = "img_0"
REVIEWER = "procedural_generator_v1"
ZH_SHARE = 0.1
STAGES = ("pass1", "pass2", "pass3", "pass4")


@dataclass(frozen=True)
class GeneratedProblem:
    problem_id: str
    family: str
    language: str
    manifest_row: dict[str, Any]
    passes: tuple[dict[str, Any], ...]
    png: bytes
    private: dict[str, Any]


@dataclass(frozen=True)
class GenerationSummary:
    out_dir: Path
    count: int
    seed: int
    namespace: str
    files: int
    bytes_written: int
    families: dict[str, int] = field(default_factory=dict)
    languages: dict[str, int] = field(default_factory=dict)


def problem_id_for(seed: int, index: int) -> str:
    return f"demo_{seed}_{index:05d}"


def family_order(seed: int) -> list[str]:
    """A per-seed permutation of the families, cycled over the indices (balanced counts)."""
    order = sorted(FAMILIES)
    random.Random(f"physalign-demo-families:{seed}").shuffle(order)
    return order


def generate_problem(
    *, seed: int, index: int, namespace: str = "physalign_demo", family: str | None = None
) -> GeneratedProblem:
    rng = random.Random(f"physalign-demo:{seed}:{index}")
    zh = rng.random() < ZH_SHARE
    family = family or family_order(seed)[index % len(FAMILIES)]
    scene, ratio = FAMILIES[family]
    width, height = pick_size(rng, ratio)
    pid = problem_id_for(seed, index)
    builder = ProblemBuilder(pid, width, height, image_id=IMAGE_ID)
    result: SceneAnswer = scene(builder, rng, zh)
    passes = builder.passes(result.domain)
    png = builder.canvas.png_bytes()
    language = "zh" if zh else "en"
    row = {
        "problem_id": pid,
        "images": [
            {
                "image_id": IMAGE_ID,
                "path": f"images/{pid}_0.png",
                "width": width,
                "height": height,
                "sha256": bytes_digest(png),
            }
        ],
        "language": language,
        "raw_question": f"{builder.stem}\n{builder.query}",
        "segmentation": {
            "confidence": "high",
            "method": "generator_template_v1",
            "review_status": "approved",
        },
        "segments": {"stem": builder.stem, "query": builder.query, "options": []},
        "source_dataset": namespace,
        "source_split": "synthetic",
        "source_sample_id": f"{seed}-{index:05d}",
        "workspace_schema_version": 1,
    }
    private = {
        "problem_id": pid,
        "answer": result.answer,
        "solution": result.solution,
        "answer_type": result.answer_type,
        "domain": result.domain,
    }
    return GeneratedProblem(pid, result.family, language, row, passes, png, private)


class _Writer:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.files = 0
        self.bytes = 0

    def write(self, relative: str, data: bytes) -> None:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self.files += 1
        self.bytes += len(data)


def generate_workspace(
    out_dir: Path,
    *,
    count: int,
    seed: int,
    namespace: str = "physalign_demo",
    progress: Callable[[int, int], None] | None = None,
) -> GenerationSummary:
    """Write a full source workspace for ``count`` generated problems into ``out_dir``.

    Existing files with the same names are overwritten; the caller decides whether a non-empty
    directory is acceptable. ``progress(done, count)`` is called after each problem.
    """
    if count < 0:
        raise ValueError("count must be non-negative")
    out_dir = Path(out_dir)
    writer = _Writer(out_dir)
    manifest: list[bytes] = []
    answers: list[bytes] = []
    review: dict[str, Any] = {}
    families: Counter[str] = Counter()
    languages: Counter[str] = Counter()
    writer.write(
        "workspace_config.json", write_json_bytes({"dataset_dir": "dataset", "path_base": "workspace"})
    )
    for index in range(count):
        problem = generate_problem(seed=seed, index=index, namespace=namespace)
        pid = problem.problem_id
        writer.write(f"dataset/images/{pid}_0.png", problem.png)
        stages = {}
        for stage, document in zip(STAGES, problem.passes, strict=True):
            writer.write(f"passes/{stage}/{pid}.json", write_json_bytes(document))
            stages[stage] = {"status": "approved", "document_sha256": digest(document), "reviewer": REVIEWER}
        review[pid] = {"stages": stages}
        manifest.append(canonical_bytes(problem.manifest_row) + b"\n")
        answers.append(canonical_bytes(problem.private) + b"\n")
        families[problem.family] += 1
        languages[problem.language] += 1
        if progress is not None:
            progress(index + 1, count)
    writer.write("blind/manifest.jsonl", b"".join(manifest))
    writer.write("private/answers.jsonl", b"".join(answers))
    writer.write("reviews/state.json", write_json_bytes({"problems": review}))
    return GenerationSummary(
        out_dir=out_dir,
        count=count,
        seed=seed,
        namespace=namespace,
        files=writer.files,
        bytes_written=writer.bytes,
        families=dict(sorted(families.items())),
        languages=dict(sorted(languages.items())),
    )

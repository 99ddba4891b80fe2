"""OCR proposals for Pass 1 (``annotation.ocr.proposals``) against known glyphs, and on real diagrams.

Run from the project root: ``.venv/bin/python bench/ocr_proposals.py [--count N] [--smoke]``.

* Generated demo (``annotation.demo.generator.generate_problem``, seed 2027): every ``text_glyph`` of Pass 1
  is a gold label with its exact box and text. A proposal matches a gold glyph of the same image at IoU ≥ 0.5
  (``bbox_1000``), greedily by IoU, one to one. Printed: recall (matched gold / gold), precision (matched
  proposals / proposals) and transcription exact-match (matched pairs whose texts are equal after the Kit's
  label normalizer ``kit.normalizers.normalize(…, "ocr_label_v2_1")``); goal ≥ 0.8 each.
* OpenStax fixtures (``demo_data/real_physics/images``): no gold boxes, so proposal counts and the time per
  image only.

Pure: no database, no Django. ``--grid`` prints the figures for a small grid of preprocessing options (the
tuning behind ``OcrOptions``' defaults).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from annotation.demo.generator import generate_problem  # noqa: E402
from annotation.ocr.proposals import OcrOptions, propose  # noqa: E402
from kit.normalizers import LABEL, normalize  # noqa: E402

OPENSTAX = ROOT / "demo_data" / "real_physics" / "images"
GOAL = 0.8
IOU = 0.5


@dataclass(frozen=True)
class Scene:
    name: str
    png: bytes
    gold: list[tuple[list[int], str]]  # (bbox_1000, text)


@dataclass
class Score:
    gold: int = 0
    proposed: int = 0
    matched: int = 0
    exact: int = 0
    seconds: float = 0.0

    @property
    def recall(self) -> float:
        return self.matched / self.gold if self.gold else 0.0

    @property
    def precision(self) -> float:
        return self.matched / self.proposed if self.proposed else 0.0

    @property
    def exact_match(self) -> float:
        return self.exact / self.matched if self.matched else 0.0


def iou(a: list[int], b: list[int]) -> float:
    ix = max(0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def same_text(proposed: str, gold: str) -> bool:
    expected = normalize(gold, LABEL)
    return expected is not None and normalize(proposed, LABEL) == expected


def scenes(count: int, seed: int = 2027) -> list[Scene]:
    found = []
    for index in range(count):
        problem = generate_problem(seed=seed, index=index)
        gold = [
            (n["bbox_1000"], n["text"])
            for n in problem.passes[0]["visual_nodes"]
            if n["type"] == "text_glyph"
        ]
        found.append(Scene(problem.problem_id, problem.png, gold))
    return found


def score_scene(scene: Scene, options: OcrOptions, score: Score, misses: list[str] | None = None) -> None:
    started = time.perf_counter()
    result = propose(scene.png, options)
    score.seconds += time.perf_counter() - started
    score.gold += len(scene.gold)
    score.proposed += len(result.proposals)
    pairs = sorted(
        (
            (iou(p.bbox_1000, g[0]), pi, gi)
            for pi, p in enumerate(result.proposals)
            for gi, g in enumerate(scene.gold)
        ),
        reverse=True,
    )
    used_p: set[int] = set()
    used_g: set[int] = set()
    for overlap, pi, gi in pairs:
        if overlap < IOU or pi in used_p or gi in used_g:
            continue
        used_p.add(pi)
        used_g.add(gi)
        score.matched += 1
        ok = same_text(result.proposals[pi].text, scene.gold[gi][1])
        score.exact += ok
        if misses is not None and not ok:
            misses.append(f"{scene.name}: read {result.proposals[pi].text!r} for {scene.gold[gi][1]!r}")
    if misses is not None:
        misses.extend(f"{scene.name}: missed {g[1]!r}" for gi, g in enumerate(scene.gold) if gi not in used_g)
        misses.extend(
            f"{scene.name}: extra {p.text!r} {p.bbox_1000}"
            for pi, p in enumerate(result.proposals)
            if pi not in used_p
        )


def score_all(items: list[Scene], options: OcrOptions, misses: list[str] | None = None) -> Score:
    score = Score()
    for scene in items:
        score_scene(scene, options, score, misses)
    return score


def line(label: str, score: Score) -> str:
    return (
        f"{label}: gold {score.gold}, proposals {score.proposed}, matched {score.matched} | "
        f"recall {score.recall:.3f}, precision {score.precision:.3f}, exact-match {score.exact_match:.3f}"
    )


def openstax(options: OcrOptions, limit: int | None) -> None:
    paths = sorted(OPENSTAX.glob("*"))
    if limit is not None:  # the smoke run: the smallest files, so it stays a few seconds
        paths = sorted(paths, key=lambda p: (p.stat().st_size, p.name))[:limit]
    counts, seconds = [], []
    for path in paths:
        started = time.perf_counter()
        result = propose(path.read_bytes(), options)
        seconds.append(time.perf_counter() - started)
        counts.append(len(result.proposals))
    if not paths:
        print("OpenStax fixtures: none found")
        return
    print(
        f"OpenStax fixtures ({len(paths)} images, no gold boxes): proposals {sum(counts)} "
        f"(min {min(counts)}, median {sorted(counts)[len(counts) // 2]}, max {max(counts)} per image), "
        f"time per image mean {sum(seconds) / len(seconds):.2f} s, max {max(seconds):.2f} s"
    )


def grid(items: list[Scene], base: OcrOptions) -> None:
    for scale, binarize, psm in itertools.product((2, 3, 4), (128, 160, 200), (11, 12)):
        options = replace(base, scale=scale, binarize=binarize, psm=psm)
        print(line(f"scale={scale} binarize={binarize} psm={psm}", score_all(items, options)), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=120, help="generated problems (default 120)")
    parser.add_argument(
        "--smoke", action="store_true", help="3 generated problems and 1 fixture: checks it runs"
    )
    parser.add_argument("--grid", action="store_true", help="also score a grid of preprocessing options")
    parser.add_argument(
        "--option", action="append", default=[], metavar="KEY=VALUE", help="override an option"
    )
    parser.add_argument("--no-openstax", action="store_true", help="skip the OpenStax fixtures")
    parser.add_argument(
        "--misses", action="store_true", help="list every miss, misreading and extra proposal"
    )
    args = parser.parse_args()
    count = 3 if args.smoke else args.count
    overrides = {}
    for pair in args.option:
        key, _, value = pair.partition("=")
        overrides[key] = json.loads(value)
    options = OcrOptions.from_dict(overrides)
    print(f"options: {options.as_dict()}")
    items = scenes(count)
    misses: list[str] | None = [] if args.misses else None
    score = score_all(items, options, misses)
    print(line(f"generated demo ({count} problems, IoU ≥ {IOU})", score))
    print(f"time per image: {score.seconds / max(1, count):.2f} s")
    for name, value in (
        ("recall", score.recall),
        ("precision", score.precision),
        ("exact-match", score.exact_match),
    ):
        print(f"{name}: {value:.3f} (goal ≥ {GOAL}) → {'PASS' if value >= GOAL else 'FAIL'}")
    for miss in misses or []:
        print("  " + miss)
    if not args.no_openstax:
        openstax(options, 1 if args.smoke else None)
    if args.grid:
        grid(items, options)


if __name__ == "__main__":
    main()

"""Deterministic stages of the Level-4 problem parser on composed image-only problems.

Run from the project root: ``.venv/bin/python bench/frontend_bench.py [--n 50]``. No database, no
model. Composes ``n`` image-only problems (text on top or left of a random line diagram), then
times per image: the crop fallback (projection-profile split), sharpening of the diagram region
and tesseract OCR of the text region; prints median / p95 / total per stage, the OCR word
recall against the rendered text and how often the fallback split found the text side.
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PIL import Image, ImageDraw  # noqa: E402

from solving.debate import imaging  # noqa: E402

WORDS = (
    "block mass ramp spring pulley charge field current resistor lens mirror wave speed force "
    "angle height friction tension circuit magnet"
).split()


def problem(rng: random.Random) -> tuple[str, Image.Image]:
    sentence = (
        f"A {rng.choice(WORDS)} of {rng.randint(1, 99)}.{rng.randint(0, 9)} kg meets a "
        f"{rng.choice(WORDS)} at {rng.randint(10, 80)} degrees. Find the {rng.choice(WORDS)}."
    )
    width, height = rng.randint(200, 500), rng.randint(150, 400)
    img = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(img)
    for _ in range(rng.randint(3, 12)):
        draw.line(
            [(rng.randint(10, width - 10), rng.randint(10, height - 10)) for _ in range(2)],
            fill="black",
            width=rng.randint(1, 4),
        )
    for _ in range(rng.randint(0, 30)):  # scanner specks for the sharpener to remove
        img.putpixel((rng.randrange(width), rng.randrange(height)), (0, 0, 0))
    return sentence, img


def summary(name: str, seconds: list[float]) -> str:
    ordered = sorted(seconds)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return (
        f"{name:<14} median {statistics.median(ordered) * 1000:8.2f} ms   p95 {p95 * 1000:8.2f} ms   "
        f"total {sum(ordered):7.2f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--smoke", action="store_true", help="the smallest sizes: checks the benchmark runs")
    args = parser.parse_args()
    if args.smoke:
        args.n = 2
    rng = random.Random(args.seed)
    timings: dict[str, list[float]] = {"compose": [], "crop_fallback": [], "sharpen": [], "tesseract": []}
    recalled = total_words = specks = right_side = 0
    for index in range(args.n):
        text, diagram = problem(rng)
        started = time.perf_counter()
        side = "top" if index % 2 == 0 else "left"
        composed = imaging.load(imaging.compose_image_only(text, imaging.encode_png(diagram), text_side=side))
        timings["compose"].append(time.perf_counter() - started)
        started = time.perf_counter()
        split = imaging.profile_split(composed)
        text_region, diagram_region = imaging.split_image(composed, split)
        timings["crop_fallback"].append(time.perf_counter() - started)
        right_side += split.text_side == side
        started = time.perf_counter()
        _, report = imaging.sharpen(diagram_region)
        timings["sharpen"].append(time.perf_counter() - started)
        specks += report.specks_removed
        started = time.perf_counter()
        read = imaging.tesseract_text(text_region)
        timings["tesseract"].append(time.perf_counter() - started)
        expected = re.findall(r"[a-z]+", text.lower())
        got = set(re.findall(r"[a-z]+", read.lower()))
        recalled += sum(word in got for word in expected)
        total_words += len(expected)
    print(f"{args.n} composed image-only problems (seed {args.seed})")
    for name, seconds in timings.items():
        print(summary(name, seconds))
    print(
        f"tesseract word recall {recalled}/{total_words} = {recalled / max(total_words, 1):.3f}; "
        f"specks removed {specks}; fallback split on the right side {right_side}/{args.n}"
    )


if __name__ == "__main__":
    main()

"""The procedural demo generator writes a deterministic, kit-valid source workspace."""

from __future__ import annotations

import hashlib
import io
import json
import re
from pathlib import Path

import pytest
from PIL import Image, ImageOps

from annotation.demo.builder import GeneratorBug, literal_occurrence, parse_markup
from annotation.demo.drawing import Canvas, PixelBox, to_bbox_1000
from annotation.demo.generator import generate_problem, generate_workspace
from annotation.demo.scenes import FAMILIES
from kit.canonical import canonical_bytes, digest, parse_json, text_digest

COUNT = 28  # four of each of the seven families
SEED = 1234
FORBIDDEN = {
    "answer",
    "answers",
    "correct_answer",
    "final_answer",
    "reasoning",
    "solution",
    "standard_solution",
}


def tree_hashes(root: Path) -> dict[str, str]:
    return {
        path.relative_to(root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("demo") / "ws"
    generate_workspace(out, count=COUNT, seed=SEED)
    return out


@pytest.fixture(scope="module")
def manifest(workspace) -> list[dict]:
    return [parse_json(line) for line in (workspace / "blind/manifest.jsonl").read_bytes().splitlines()]


def load_pass(workspace: Path, stage: int, pid: str) -> dict:
    return parse_json((workspace / f"passes/pass{stage}/{pid}.json").read_bytes())


def test_layout_and_summary(tmp_path):
    summary = generate_workspace(tmp_path / "ws", count=7, seed=3)
    root = tmp_path / "ws"
    assert parse_json((root / "workspace_config.json").read_bytes()) == {
        "dataset_dir": "dataset",
        "path_base": "workspace",
    }
    ids = [
        parse_json(line)["problem_id"] for line in (root / "blind/manifest.jsonl").read_bytes().splitlines()
    ]
    assert ids == [f"demo_3_{i:05d}" for i in range(7)]
    for pid in ids:
        assert (root / f"dataset/images/{pid}_0.png").is_file()
        for stage in range(1, 5):
            assert (root / f"passes/pass{stage}/{pid}.json").is_file()
    # 1 config + manifest + answers + review state + 7 × (image + 4 passes)
    assert summary.files == 4 + 7 * 5 == len(tree_hashes(root))
    assert summary.families == dict.fromkeys(sorted(FAMILIES), 1)
    assert sum(summary.languages.values()) == 7


def test_same_seed_is_byte_identical(tmp_path):
    generate_workspace(tmp_path / "a", count=14, seed=99)
    generate_workspace(tmp_path / "b", count=14, seed=99)
    first, second = tree_hashes(tmp_path / "a"), tree_hashes(tmp_path / "b")
    assert first == second
    assert len(first) == 4 + 14 * 5


def test_different_seed_differs(tmp_path):
    generate_workspace(tmp_path / "a", count=7, seed=1)
    generate_workspace(tmp_path / "b", count=7, seed=2)
    first, second = tree_hashes(tmp_path / "a"), tree_hashes(tmp_path / "b")
    assert first["blind/manifest.jsonl"] != second["blind/manifest.jsonl"]
    images_a = {h for p, h in first.items() if p.endswith(".png")}
    images_b = {h for p, h in second.items() if p.endswith(".png")}
    assert not images_a & images_b


def test_files_are_canonical_json(workspace):
    for path in sorted(workspace.rglob("*.json")):
        data = path.read_bytes()
        assert data == canonical_bytes(parse_json(data)) + b"\n", path
    for name in ("blind/manifest.jsonl", "private/answers.jsonl"):
        for line in (workspace / name).read_bytes().splitlines():
            assert line == canonical_bytes(parse_json(line))


def test_family_counts_are_balanced(manifest, workspace):
    answers = [parse_json(line) for line in (workspace / "private/answers.jsonl").read_bytes().splitlines()]
    assert [a["problem_id"] for a in answers] == [row["problem_id"] for row in manifest]
    families = {}
    for index in range(COUNT):
        family = generate_problem(seed=SEED, index=index).family
        families[family] = families.get(family, 0) + 1
    assert families == dict.fromkeys(FAMILIES, COUNT // len(FAMILIES))
    assert len(FAMILIES) >= 6


def test_some_problems_are_chinese():
    languages = [generate_problem(seed=SEED, index=i).language for i in range(120)]
    share = languages.count("zh") / len(languages)
    assert 0.03 <= share <= 0.2
    zh = next(generate_problem(seed=SEED, index=i) for i in range(120) if languages[i] == "zh")
    assert re.search(r"[\u4e00-\u9fff]", zh.manifest_row["segments"]["stem"])


def test_manifest_rows_are_blind_and_complete(manifest, workspace):
    for row in manifest:
        assert set(row) == {
            "problem_id",
            "images",
            "language",
            "raw_question",
            "segmentation",
            "segments",
            "source_dataset",
            "source_split",
            "source_sample_id",
            "workspace_schema_version",
        }
        assert not FORBIDDEN & {key.lower() for key in row}
        assert row["workspace_schema_version"] == 1
        assert row["language"] in {"en", "zh"}
        assert row["source_dataset"] == "physalign_demo" and row["source_split"] and row["source_sample_id"]
        assert row["raw_question"] == row["segments"]["stem"] + "\n" + row["segments"]["query"]
        image = row["images"][0]
        data = (workspace / "dataset" / image["path"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == image["sha256"]
        with Image.open(io.BytesIO(data)) as img:
            assert img.size == (image["width"], image["height"])
            assert not img.info.keys() - {"dpi"}  # no text chunks, timestamps or other metadata
    private = (workspace / "private/answers.jsonl").read_text(encoding="utf-8")
    first = json.loads(private.splitlines()[0])
    assert set(first) == {"problem_id", "answer", "solution", "answer_type", "domain"}
    assert first["answer"] and first["solution"]


def test_review_state_is_approved_and_hash_fresh(manifest, workspace):
    state = parse_json((workspace / "reviews/state.json").read_bytes())
    assert set(state["problems"]) == {row["problem_id"] for row in manifest}
    for pid, entry in state["problems"].items():
        for stage in range(1, 5):
            record = entry["stages"][f"pass{stage}"]
            assert record["status"] == "approved" and record["reviewer"]
            assert record["document_sha256"] == digest(load_pass(workspace, stage, pid))


def _dark_pixels(img: Image.Image, box: tuple[int, int, int, int]) -> int:
    crop = img.convert("L").crop(box)
    return sum(1 for value in crop.tobytes() if value < 110)


def test_glyph_boxes_contain_ink_and_lie_inside_the_image(manifest, workspace):
    glyphs = 0
    for row in manifest:
        image = row["images"][0]
        width, height = image["width"], image["height"]
        with Image.open(workspace / "dataset" / image["path"]) as img:
            for node in load_pass(workspace, 1, row["problem_id"])["visual_nodes"]:
                x0, y0, x1, y1 = node["bbox_1000"]
                assert 0 <= x0 < x1 <= 1000 and 0 <= y0 < y1 <= 1000
                if node["type"] != "text_glyph":
                    continue
                glyphs += 1
                assert node["text"].strip()
                box = (
                    x0 * width // 1000,
                    y0 * height // 1000,
                    -(-x1 * width // 1000),
                    -(-y1 * height // 1000),
                )
                assert 0 <= box[0] < box[2] <= width and 0 <= box[1] < box[3] <= height
                assert _dark_pixels(img, box) >= 3, (row["problem_id"], node)
    assert glyphs > COUNT * 3


@pytest.mark.parametrize("text", ["A", "mg", "30°", "2.0 kg", "R1", "4 Ω", "θ", "+4.0 nC", "12 Ω"])
def test_label_box_contains_all_of_the_label_ink(text):
    canvas = Canvas(200, 100)
    box = canvas.text((100, 50), text, size=18)
    ink = ImageOps.invert(canvas.image.convert("L")).getbbox()
    assert ink is not None
    assert box.x0 <= ink[0] and box.y0 <= ink[1] and ink[2] <= box.x1 and ink[3] <= box.y1
    # and the box is tight: at most a few pixels of slack on any side
    assert ink[0] - box.x0 <= 4 and ink[1] - box.y0 <= 4 and box.x1 - ink[2] <= 4 and box.y1 - ink[3] <= 4


def test_bbox_rounding_is_outward():
    assert to_bbox_1000(PixelBox(10.2, 5.0, 20.1, 9.0), 600, 400) == [17, 12, 34, 23]
    assert to_bbox_1000(PixelBox(-5, -5, 700, 500), 600, 400) == [0, 0, 1000, 1000]
    x0, y0, x1, y1 = to_bbox_1000(PixelBox(33, 47, 34, 48), 613, 409)
    assert x0 * 613 / 1000 <= 33 and x1 * 613 / 1000 >= 34 and y0 * 409 / 1000 <= 47 and y1 * 409 / 1000 >= 48


def test_every_mention_resolves_exactly(manifest, workspace):
    from kit.passes.spans import resolve_span

    for row in manifest:
        segments = row["segments"]
        pass4 = load_pass(workspace, 4, row["problem_id"])
        positions = []
        for mention in pass4["text_mentions"]:
            resolution = resolve_span(segments[mention["section"]], mention["quote"], mention["occurrence"])
            assert resolution.status == "resolved_exact", mention
            start, end = resolution.span
            assert segments[mention["section"]][start:end] == mention["quote"]
            assert resolution.section_sha256 == text_digest(segments[mention["section"]])
            positions.append((mention["section"] == "query", start))
        assert positions == sorted(positions)
        target = next(m for m in pass4["text_mentions"] if m["id"] == pass4["query_target"]["mention_id"])
        assert target["section"] == "query" and target["role"] == "query_target"


def test_probe_material_is_present(manifest, workspace):
    """Every problem feeds T02 (refers_to from an entity mention) and both T03 interfaces."""
    for row in manifest:
        pass4 = load_pass(workspace, 4, row["problem_id"])
        visuals = {v["id"]: v for v in pass4["visual_nodes"]}
        mentions = {m["id"]: m for m in pass4["text_mentions"]}
        physical = {p["id"] for p in pass4["physical_nodes"]}
        refers = [b for b in pass4["bindings"] if b["type"] == "refers_to"]
        assert refers and all(
            mentions[b["from_id"]]["role"] == "entity" and b["to_id"] in physical for b in refers
        )
        image_q = [
            q
            for q in pass4["quantities"]
            if any(visuals[v]["type"] == "text_glyph" for v in q["visual_anchor_ids"])
        ]
        text_q = [q for q in pass4["quantities"] if not q["visual_anchor_ids"] and q["text_mention_ids"]]
        assert image_q and text_q
        assert all(q["owner_id"] in physical for q in pass4["quantities"])
        for quantity in text_q:
            assert all(mentions[m]["role"] == "quantity" for m in quantity["text_mention_ids"])
        assert pass4["ambiguities"] == []
        pass1 = load_pass(workspace, 1, row["problem_id"])
        assert pass4["visual_nodes"] == pass1["visual_nodes"]


def test_literal_occurrence_rule():
    text, mentions = parse_markup("m and m, then [[quantity:k:m]] again", "stem")
    assert text == "m and m, then m again"
    assert mentions[0].occurrence == 3
    assert literal_occurrence("aaaa", "aa", 2) == 2
    with pytest.raises(GeneratorBug):
        literal_occurrence("aaa", "aa", 1)  # an overlapping position is never a literal match


def test_every_pass_document_validates(manifest, workspace):
    from kit.passes.validator import ImageRef, PassContext, validate_pass_document

    for row in manifest:
        pid = row["problem_id"]
        docs = [load_pass(workspace, stage, pid) for stage in range(1, 5)]
        context = PassContext(
            problem_id=pid,
            stem=row["segments"]["stem"],
            query=row["segments"]["query"],
            images=tuple(ImageRef(i["image_id"], i["width"], i["height"]) for i in row["images"]),
            pass1=docs[0],
            pass2=docs[1],
            pass3=docs[2],
        )
        for stage, document in enumerate(docs, start=1):
            issues = validate_pass_document(stage, document, context)
            assert issues == [], (pid, stage, issues[:5])


def test_command_refuses_a_non_empty_directory_without_force(tmp_path):
    from django.core.management import CommandError, call_command

    out = tmp_path / "ws"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    with pytest.raises(CommandError, match="not empty"):
        call_command("generate_problems", count=2, seed=1, out=out, stdout=io.StringIO())
    assert sorted(p.name for p in out.iterdir()) == ["keep.txt"]
    stdout = io.StringIO()
    call_command("generate_problems", count=2, seed=1, out=out, force=True, stdout=stdout)
    assert "Wrote 2 problems" in stdout.getvalue()
    assert (out / "keep.txt").read_text() == "mine"
    assert len((out / "blind/manifest.jsonl").read_bytes().splitlines()) == 2

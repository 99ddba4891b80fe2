"""A release as a VLMEvalKit TSV and as an lmms-eval task folder (issue 17, item 3), each read back by a strict
parser written from the format's documented layout (the packages themselves are not installed): the same probes,
messages and image bytes, nothing private, and lmms-eval's process_results gives the app's own scores."""

from __future__ import annotations

import base64
import csv
import importlib.util
import io
import json
from pathlib import Path

import datasets
import pytest
import yaml
from PIL import Image

from evaluation.scoring import score
from probes.exports.hf import ExportLeak, release_sources
from probes.exports.leakage import release_secrets
from probes.exports.lmms_eval import METRICS, write_lmms_eval
from probes.exports.public import read_public
from probes.exports.vlmevalkit import prompt_text, write_vlmevalkit

VLMEVALKIT_FIELDS = {
    "index",
    "image",
    "image_path",
    "question",
    "hint",
    "answer",
    "category",
    "l2-category",
    "split",
}


def _public(release_root: Path) -> dict[tuple[str, str], dict]:
    out = {}
    for condition in ("raw", "gold"):
        for record in json.loads((release_root / "public" / f"qa_{condition}.json").read_text()):
            out[(condition, record["logical_probe_id"])] = record
    return out


def _list_or_one(cell: str) -> list[str]:
    """VLMEvalKit's ``toliststr``: a cell written as a list holds several values, otherwise one."""
    if cell.startswith("[") and cell.endswith("]"):
        values = json.loads(cell)
        assert isinstance(values, list) and all(isinstance(v, str) for v in values)
        return values
    return [cell] if cell else []


def read_vlmevalkit_tsv(path: Path) -> list[dict[str, str]]:
    """Strict reader of VLMEvalKit's benchmark TSV (docs/en/Development.md): tab-separated with a header, an
    integer ``index`` unique per line, ``image`` the base64 of the image (several: a list of base64), the image
    paths in the same shape, a ``question``."""
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle, delimiter="\t", strict=True)
        header = next(reader)
        assert header[:4] == ["index", "image", "image_path", "question"] and len(set(header)) == len(header)
        rows = []
        for line in reader:
            assert len(line) == len(header), "ragged TSV line"
            rows.append(dict(zip(header, line, strict=True)))
    indexes = [int(r["index"]) for r in rows]
    assert len(set(indexes)) == len(indexes)
    for row in rows:
        images = _list_or_one(row["image"])
        assert len(images) == len(_list_or_one(row["image_path"]))
        row["_images"] = [base64.b64decode(i, validate=True) for i in images]
    return rows


def test_the_vlmevalkit_tsv_reads_back_as_the_public_probes_without_answers(release, tmp_path):  # noqa: F811
    root = Path(release.path)
    result = write_vlmevalkit(read_public(root), tmp_path / "vlmeval")
    expected = _public(root)
    seen = set()
    for name in result["files"]:
        rows = read_vlmevalkit_tsv(tmp_path / "vlmeval" / name)
        header = set(rows[0]) - {"_images"}
        assert not header & {"answer", "A", "B", "C", "D"}  # public only
        assert {"category", "l2-category", "split"} <= header & VLMEVALKIT_FIELDS
        for row in rows:
            record = expected[(row["l2-category"], row["logical_probe_id"])]
            system, user = record["input"]["messages"]["system"], record["input"]["messages"]["user"]
            # the released messages exactly, each in its own column
            assert (row["system_prompt"], row["user_prompt"]) == (system, user)
            # VLMEvalKit sends the images and ``question`` only: the system message is in it, once, then the user
            # message, as the lmms-eval export's doc_to_text gives them
            assert system and row["question"] == system + "\n\n" + user == prompt_text(system, user)
            assert row["question"].count(system) == 1 and row["question"].endswith(user)
            assert (row["category"], row["split"], row["instance_id"]) == (
                record["interface"],
                record["split"],
                record["instance_id"],
            )
            assert row["_images"] == [
                (root / "public" / a["path"]).read_bytes() for a in record["input"]["attachments"]
            ]
            seen.add((row["l2-category"], row["logical_probe_id"]))
    assert seen == set(expected)
    _assert_no_secret(root, tmp_path / "vlmeval")


def _assert_no_secret(release_root: Path, folder: Path) -> None:
    frozen, _ = release_secrets(release_root)
    secrets = {"SECRET-ANSWER-two-newtons", "SECRET-SOLUTION-text", "gold_targets", "candidate_map"}
    for item in frozen:
        secrets |= {t["id"] for t in item["private"]["candidate_map"].values()}
    for path in (p for p in folder.rglob("*") if p.is_file() and p.suffix != ".parquet"):
        text = path.read_text(encoding="utf-8")
        assert not [s for s in secrets if s in text], path


class _TaskLoader(yaml.SafeLoader):
    """lmms-eval's YAML: ``!function utils.name`` names a function of the task folder's utils.py."""


def _load_task(path: Path, utils) -> dict:
    loader = type("Loader", (_TaskLoader,), {})
    loader.add_constructor(
        "!function",
        lambda ld, node: getattr(utils, ld.construct_scalar(node).removeprefix("utils.")),
    )
    return yaml.load(path.read_text(), Loader=loader)  # noqa: S506 (a SafeLoader subclass)


def test_the_lmms_eval_folder_loads_as_tasks_whose_results_are_the_app_scores(
    release,  # noqa: F811
    tmp_path,
    monkeypatch,
):
    root = Path(release.path)
    folder = tmp_path / "lmms"
    result = write_lmms_eval(read_public(root), folder, release_sources(release))
    spec = importlib.util.spec_from_file_location("physalign_lmms_utils", folder / "utils.py")
    utils = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(utils)
    monkeypatch.setenv("PHYSALIGN_PRIVATE_KEY", str(root / "private" / "mappings.json"))
    utils._keys.cache_clear()
    assert not list(folder.glob("**/mappings.json"))  # the key is given separately, never in the folder

    group = yaml.safe_load(next(folder.glob("_*.yaml")).read_text())
    assert group["task"] == result["tasks"] and len(group["task"]) == 2
    expected = _public(root)
    keys = {item.logical_probe_id: item.private_mapping for item in release.items.all()}
    seen, scored = set(), 0
    for task in group["task"]:
        config = _load_task(folder / f"{task}.yaml", utils)
        assert config["task"] == task and config["output_type"] == "generate_until"
        assert config["test_split"] == release.split and config["dataset_path"] == "parquet"
        # an empty ``until``: lmms-eval adds ["\n\n"] only when the key is missing, and a model would stop at the
        # first blank line of its answer
        assert (
            config["generation_kwargs"]["until"] == []
            and "  until: []\n" in (folder / f"{task}.yaml").read_text()
        )
        for hook in ("doc_to_visual", "doc_to_text", "doc_to_messages", "process_results"):
            assert callable(config[hook])
        assert [m["metric"] for m in config["metric_list"]] == list(METRICS)
        assert all(
            callable(m["aggregation"]) and m["higher_is_better"] is True for m in config["metric_list"]
        )
        docs = datasets.load_dataset(
            config["dataset_path"],
            split=config["test_split"],
            cache_dir=str(tmp_path / "cache"),
            **config["dataset_kwargs"],
        )
        condition = config["metadata"]["condition"]
        for doc in docs:
            record = expected[(condition, doc["logical_probe_id"])]
            messages = record["input"]["messages"]
            assert config["doc_to_text"](doc) == prompt_text(messages["system"], messages["user"])
            system, user = config["doc_to_messages"](doc)
            assert system["content"] == [{"type": "text", "text": record["input"]["messages"]["system"]}]
            assert user["content"][0] == {"type": "text", "text": record["input"]["messages"]["user"]}
            attachments = record["input"]["attachments"]
            images = [part["url"] for part in user["content"][1:]]
            assert len(images) == len(attachments) == len(config["doc_to_visual"](doc))
            for image, attachment in zip(images, attachments, strict=True):
                original = Image.open(io.BytesIO((root / "public" / attachment["path"]).read_bytes()))
                assert image.tobytes() == original.tobytes() and image.size == original.size
            key = keys[doc["logical_probe_id"]]
            gold = {t["id"] for t in key["gold_targets"]}
            alias = next(a for a, t in key["candidate_map"].items() if t["id"] in gold)
            binding = key["response_contract"]["binding_key"]
            for output in (json.dumps({binding: alias}), "no JSON at all", json.dumps({binding: "E99"})):
                item = score(output, key, condition)
                assert config["process_results"](doc, [output]) == {
                    "physalign_G": item.G,
                    "physalign_C": item.C,
                    "physalign_J": item.J,
                }
                scored += item.G == 1
            seen.add((condition, doc["logical_probe_id"]))
    assert seen == set(expected) and scored >= 1
    assert utils.aggregate_mean([1, 0, None, 1]) == 2 / 3
    _assert_no_secret(root, folder)


def test_a_tsv_that_would_carry_a_private_string_is_refused_and_removed(release, tmp_path):  # noqa: F811
    root = Path(release.path)
    part = read_public(root)
    frozen, _ = release_secrets(root)
    entity = next(iter(frozen[0]["private"]["candidate_map"].values()))["id"]
    part.records["raw"][0]["input"]["messages"]["system"] += f" {entity}"
    with pytest.raises(ExportLeak, match="PRIVATE_STRING_IN_PUBLIC"):
        write_vlmevalkit(part, tmp_path / "vlmeval")
    assert not list((tmp_path / "vlmeval").iterdir())

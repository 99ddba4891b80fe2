"""The Hugging Face dataset card as the Hub reads it (issue 29, item 4): a ``license: other`` card links its
licence (``license_link`` to the LICENSE.md written beside it, which names every source's licence), and the card
says that decoding the images needs Pillow."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from huggingface_hub import DatasetCard

from probes.exports.hf import LICENSE_FILE, dataset_card, license_file, write_hf
from probes.exports.public import read_public
from tests.probes.conftest import release  # noqa: F401  (the fixture)

MANIFEST = {"release_id": "NREL-0123456789abcdef", "split": "test", "counts": {}, "signoff_root": "x"}
SOURCES = [
    {
        "name": "Olympiad archive",
        "license": "CC BY-NC 4.0 with attribution",
        "url": "https://e.org/a",
        "problems": 3,
    },
    {"name": "Textbook set", "license": "", "url": "", "problems": 2},
]


def _header(card: str) -> dict:
    return yaml.safe_load(card.split("---\n")[1])


def test_an_other_licence_links_the_licence_file_that_names_every_source():
    card = dataset_card(MANIFEST, {"raw_T02-single": 4}, SOURCES, ["en"])
    header = _header(card)
    assert (header["license"], header["license_name"], header["license_link"]) == (
        "other",
        "per-source",
        "LICENSE.md",
    )
    # the Hub's own parser of a card's metadata reads the same fields
    data = DatasetCard(card).data
    assert (data.license, data.license_name, data.license_link) == ("other", "per-source", LICENSE_FILE)
    text = license_file(MANIFEST, SOURCES)
    assert "NREL-0123456789abcdef" in text
    assert "| Olympiad archive | CC BY-NC 4.0 with attribution | https://e.org/a | 3 |" in text
    assert "| Textbook set | not stated |  | 2 |" in text


def test_a_known_licence_needs_no_link_and_the_card_says_images_need_pillow():
    sources = [{"name": "S", "license": "CC BY 4.0", "url": "", "problems": 1}]
    card = dataset_card(MANIFEST, {"raw_T02-single": 1}, sources, ["en"])
    header = _header(card)
    assert header["license"] == "cc-by-4.0" and "license_link" not in header and "license_name" not in header
    assert 'pip install "datasets[vision]"' in card and "Pillow" in card
    assert 'load_dataset("THIS_FOLDER_OR_REPO", "raw_T02-single", split="test")' in card


@pytest.mark.django_db
def test_the_export_writes_the_licence_file_the_card_links(release, tmp_path):  # noqa: F811
    sources = [
        *SOURCES,
        {"name": "Demo", "license": "CC BY 4.0", "url": "https://example.org", "problems": 1},
    ]
    out = tmp_path / "hf"
    write_hf(read_public(Path(release.path)), out, sources)
    header = _header((out / "README.md").read_text(encoding="utf-8"))
    assert header["license"] == "other"
    linked = out / header["license_link"]
    assert linked.is_file() and linked.read_text(encoding="utf-8") == license_file(
        {"release_id": release.release_id}, sources
    )

"""The datasheet in a real export: ``datasheet.json`` and ``datasheet.csv`` beside release.json, sealed in
FILE_MANIFEST.json, the same figures the release page computes, and a signed release that carries them still
validates (``release_validate`` and ``manage.py validate_release``); the Hugging Face dataset card has the
datasheet's tables as its "Datasheet" section, and the export's leakage scan still passes.

The exported release is the kit demo parent (tests/probes/conftest.py): one parent of source
SYNTHETIC_UNIT_TEST (domain mechanics, the factory's), three probes (T02-single, T03-image, T03-text), two of
them with a +GT packet (pool P), seven image files under public/images/."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from kit.canonical import bytes_digest, parse_json
from probes.datasheet.figures import datasheet_json
from probes.datasheet.selectors import datasheet_for_release
from probes.datasheet.tables import csv_text
from probes.exports.hf import export_hf
from probes.release_store import release_listing
from probes.releases import release_export, release_validate
from tests.probes.test_release_kit_layout import approved, individual  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db


@pytest.fixture
def signed(approved, tmp_path):  # noqa: F811
    release = release_export(
        split="development",
        output=tmp_path / "out",
        actor=None,
        synthetic_example=True,
        authorization=individual(approved),
    )
    return release, Path(release.path)


def test_the_export_writes_the_datasheet_beside_release_json(signed):
    release, root = signed
    sealed = parse_json((root / "FILE_MANIFEST.json").read_bytes())
    for name in ("datasheet.json", "datasheet.csv"):
        assert sealed[name] == bytes_digest((root / name).read_bytes())
    data = json.loads((root / "datasheet.json").read_text(encoding="utf-8"))
    assert data["release_id"] == release.release_id and data["split"] == "development"
    assert data["totals"] == {
        "parents": 1,
        "localized_probes": 3,
        "paired_probes": 2,
        "parents_with_paired": 1,
    }
    assert data["table1_sources"] == [
        {"source": "SYNTHETIC_UNIT_TEST", "parents": 1, "parents_paired": 1},
        {"source": "Full release", "parents": 1, "parents_paired": 1},
    ]
    assert [(r["label"], r["parents"], r["probes"], r["paired"]) for r in data["table1_partition"]] == [
        ("Development", 1, 3, 2),
        ("Test", 0, 0, 0),
        ("Full release", 1, 3, 2),
    ]
    assert [(r["label"], r["density"], r["coverage"]) for r in data["table7_density"]] == [
        ("Development", "3.00", "66.67"),
        ("Test", None, None),
        ("Full release", "3.00", "66.67"),
    ]
    assert data["table6_domains"][0] == {
        "group": "mechanics",
        "label": "Mechanics",
        "count": 1,
        "share": "100.00",
        "paired": 1,
        "unpaired": 0,
        "rate": "100.00",
        "residual": False,
    }
    images = sum(1 for name, _ in release_listing(release) if name.startswith("public/images/"))
    assert images == 7
    assert [(s["key"], s["value"], s["unit"]) for s in data["table7_summaries"]] == [
        ("parents_with_paired", "100.00%", "1/1 parents"),
        ("paired_per_paired_parent", "2.00", "2/1 (parents with paired variants only)"),
        ("probes_per_parent", "3; 3–3", "Parent-level summary"),
        ("probes_without_paired", "1", "3 − 2 probes"),
        ("image_files", "7", "File-level count"),
    ]
    assert data["agreement"] is None
    # the page's figures, computed from the stored release, are the folder's
    sheet = datasheet_for_release(release)
    assert data == json.loads(json.dumps(datasheet_json(sheet)))
    assert (root / "datasheet.csv").read_bytes() == csv_text(sheet).encode("utf-8")


def test_a_signed_release_with_its_datasheet_validates(signed):
    _, root = signed
    report = release_validate(root)
    assert report.valid, report.errors
    out = StringIO()
    call_command("validate_release", str(root), stdout=out)
    assert out.getvalue().strip() == "valid"


def test_a_changed_datasheet_is_refused_by_the_seal(signed):
    _, root = signed
    (root / "datasheet.csv").write_text("table,row,column,value\r\n")
    assert "FILE_MANIFEST_MISMATCH" in release_validate(root).codes


def test_the_datasheet_is_never_in_the_public_part(signed):
    _, root = signed
    assert not list((root / "public").rglob("datasheet*"))


def test_the_hugging_face_card_has_the_datasheet_section(signed, tmp_path):
    release, _ = signed
    out = tmp_path / "hf"
    export_hf(release=release, output=out)  # refuses the export if the scan finds a private string in it
    card = (out / "README.md").read_text(encoding="utf-8")
    section = card[card.index("## Datasheet\n") : card.index("## Loading\n")]
    assert (
        f"release `{release.release_id}` (split development): 1 parent problems, 3 localized probes"
        in section
    )
    assert "### Table 1(a). Source coverage" in section
    assert "| SYNTHETIC_UNIT_TEST | 1 | 1 |\n| **Full release** | **1** | **1** |" in section
    assert (
        "| Development | 1 | 3 | 2 |\n| Test | 0 | 0 | 0 |\n| **Full release** | **1** | **3** | **2** |"
        in section
    )
    assert "| Mechanics | 1 | 100.00 | 1 | 0 | 100.00 |" in section
    assert "| Development | 3.00 | 66.67 |\n| Test | — | — |" in section
    assert "| Packaged image files | 7 | File-level count |" in section
    assert "### Figure 6 (right). Prominent terms" in section
    assert card.index("## Sources and licences") < card.index("## Datasheet") < card.index("## How to score")

"""The admin page that imports Kit review decisions: upload a Kit draft as a zip, then a decision file."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from probes.compiler import compile_parent
from probes.models import Probe
from review.models import KitDecision, KitDraftImport
from tests.probes import kit_demo as demo

from .kit_draft_fixture import decision, legacy_file, write_kit_draft


def _zip(folder, *, top="kit_draft") -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, f"{top}/{path.relative_to(folder).as_posix()}")
    return buffer.getvalue()


def _messages(response) -> list[str]:
    return [str(m) for m in response.context["messages"]]


@pytest.fixture(autouse=True)
def _the_admin_holds_the_key(reviewers):
    """A Kit draft carries every probe's key: importing it is for key holders (admin + the permission)."""
    from django.contrib.auth.models import Permission

    reviewers["admin"].user_permissions.add(Permission.objects.get(codename="view_private_mapping"))


def test_admin_uploads_a_kit_draft_then_a_decision_file(client, demo_probes, reviewers, tmp_path):
    catalog = write_kit_draft(tmp_path / "draft", compile_parent(demo.demo_source()).probes)
    items = {i["logical_probe_id"]: i for i in catalog["probes"]}
    client.force_login(reviewers["admin"])
    page = client.get("/review/kit-decisions/")
    assert page.status_code == 200 and b"No Kit draft imported yet." in page.content

    upload = SimpleUploadedFile("draft.zip", _zip(tmp_path / "draft"), content_type="application/zip")
    response = client.post("/review/kit-decisions/", {"action": "draft", "file": upload}, follow=True)
    assert _messages(response) == [
        f"Kit draft {KitDraftImport.objects.get().catalog_root[:12]}… checked: "
        "3 probe(s) bound to ours, 0 not bound."
    ]

    broken = SimpleUploadedFile(
        "d.json", b'{"schema_version": 1, "schema_version": 2}', content_type="application/json"
    )
    response = client.post("/review/kit-decisions/", {"action": "decisions", "file": broken}, follow=True)
    assert "(REVIEW_FILE_JSON_INVALID)" in _messages(response)[0] and not KitDecision.objects.exists()

    stale = legacy_file(catalog, [decision(items[demo.T03_IMAGE], review_target_root="a" * 64)])
    response = client.post(
        "/review/kit-decisions/",
        {
            "action": "decisions",
            "file": SimpleUploadedFile(
                "stale.json", json.dumps(stale).encode(), content_type="application/json"
            ),
        },
        follow=True,
    )
    assert "stale" in _messages(response)[0].lower() and not KitDecision.objects.exists()

    good = legacy_file(catalog, [decision(items[demo.T03_IMAGE])])
    response = client.post(
        "/review/kit-decisions/",
        {
            "action": "decisions",
            "file": SimpleUploadedFile(
                "good.json", json.dumps(good).encode(), content_type="application/json"
            ),
        },
        follow=True,
    )
    assert _messages(response) == [
        "Imported 1 decision(s) (1 settled a probe), 0 already imported, 0 still pending in the file."
    ]
    assert Probe.objects.get(logical_probe_id=demo.T03_IMAGE).state == Probe.State.APPROVED
    assert b"Kit Reviewer A" in response.content  # the name as written, shown as text


def test_a_zip_without_a_kit_draft_is_refused_with_a_clear_message(client, demo_probes, reviewers):
    client.force_login(reviewers["admin"])
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("notes/readme.txt", "nothing here")
    response = client.post(
        "/review/kit-decisions/",
        {
            "action": "draft",
            "file": SimpleUploadedFile("x.zip", buffer.getvalue(), content_type="application/zip"),
        },
        follow=True,
    )
    assert "(KIT_DRAFT_LAYOUT)" in _messages(response)[0] and not KitDraftImport.objects.exists()
    response = client.post(
        "/review/kit-decisions/",
        {
            "action": "draft",
            "file": SimpleUploadedFile("x.zip", b"not a zip", content_type="application/zip"),
        },
        follow=True,
    )
    assert "(import_zip_invalid)" in _messages(response)[0]


def test_reviewers_may_not_import_kit_decisions(client, demo_probes, reviewers, tmp_path):
    for who in ("alice", "carol"):
        client.force_login(reviewers[who])
        assert client.get("/review/kit-decisions/").status_code == 403
        upload = SimpleUploadedFile("d.json", b"{}", content_type="application/json")
        assert (
            client.post("/review/kit-decisions/", {"action": "decisions", "file": upload}).status_code == 403
        )
    assert not KitDecision.objects.exists()

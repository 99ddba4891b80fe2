"""Server-rendered annotation pages: access per role, answer-blindness, htmx fragments, images, imports."""

from __future__ import annotations

import io
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation import views as annotation_views
from annotation.models import ImportJob, PassDocument
from physalign_site.errors import ApplicationError
from physalign_site.roles import ALL_ROLES
from tests.factories import ParentProblemFactory, PassDocumentFactory, ProblemImageFactory, png_bytes

SECRET_ANSWER = "SECRET-ANSWER-mg-cos-theta"
SECRET_SOLUTION = "SECRET-SOLUTION-resolve-forces"
VIEWER_ROLES = ("annotator", "source_reviewer", "probe_reviewer", "adjudicator", "admin")
IMPORT_ROLES = ("annotator", "admin")


@pytest.fixture
def problem(db):
    parent = ParentProblemFactory(problem_id="incline_001", options=[{"id": "A", "text": "mg"}])
    ProblemImageFactory(parent=parent, image_id="img_1", ordinal=1, data=png_bytes(240, 160, (200, 220, 255)))
    return parent


@pytest.fixture
def job(annotator):
    return ImportJob.objects.create(
        kind=ImportJob.Kind.PROBLEMS,
        status=ImportJob.Status.SUCCEEDED,
        original_name="batch.zip",
        total=2,
        done=2,
        created_by=annotator,
        report={
            "status": "succeeded",
            "counts": {"created": 1, "failed": 1},
            "rows": [
                {
                    "row": 1,
                    "problem_id": "incline_001",
                    "outcome": "created",
                    "errors": [],
                    "warnings": [{"code": "W_LONG", "message": "Statement is long"}],
                },
                {
                    "row": 2,
                    "problem_id": "bad_002",
                    "outcome": "failed",
                    "errors": [{"code": "E_IMAGE", "message": "Image missing: fig2.png"}],
                    "warnings": [],
                },
            ],
        },
    )


def _zip_bytes() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("problems.jsonl", "{}\n")
    return buffer.getvalue()


# ---------------------------------------------------------------- access per role


@pytest.mark.django_db
@pytest.mark.parametrize("role", VIEWER_ROLES)
def test_problem_pages_open_for_every_role(client, role_users, problem, role):
    client.force_login(role_users[role])
    assert client.get(reverse("annotation:problem_list")).status_code == 200
    assert client.get(reverse("annotation:problem_detail", args=[problem.problem_id])).status_code == 200
    image_url = reverse("annotation:image_file", args=[problem.problem_id, "img_1"])
    assert client.get(image_url).status_code == 200


@pytest.mark.django_db
@pytest.mark.parametrize("role", ALL_ROLES)
def test_import_pages_only_for_annotators_and_admins(client, role_users, job, role):
    client.force_login(role_users[role])
    expected = 200 if role in IMPORT_ROLES else 403
    assert client.get(reverse("annotation:import_list")).status_code == expected
    assert client.get(reverse("annotation:import_detail", args=[job.pk])).status_code == expected


@pytest.mark.django_db
def test_user_without_role_gets_friendly_403_everywhere(client, django_user_model, problem, job):
    client.force_login(django_user_model.objects.create_user(username="norole", password="pw"))
    urls = [
        reverse("annotation:problem_list"),
        reverse("annotation:problem_detail", args=[problem.problem_id]),
        reverse("annotation:image_file", args=[problem.problem_id, "img_1"]),
        reverse("annotation:import_list"),
        reverse("annotation:import_detail", args=[job.pk]),
    ]
    for url in urls:
        response = client.get(url)
        assert response.status_code == 403, url
    body = client.get(urls[0]).content.decode()
    assert "has no role yet" in body


@pytest.mark.django_db
def test_anonymous_is_sent_to_login(client, problem, job):
    urls = [
        reverse("annotation:problem_list"),
        reverse("annotation:problem_detail", args=[problem.problem_id]),
        reverse("annotation:image_file", args=[problem.problem_id, "img_1"]),
        reverse("annotation:import_list"),
        reverse("annotation:import_detail", args=[job.pk]),
    ]
    for url in urls:
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"] == f"{reverse('login')}?next={url}"


@pytest.mark.django_db
def test_login_page_renders_and_logs_in(client, annotator):
    page = client.get(reverse("login"))
    assert page.status_code == 200
    assert 'name="username"' in page.content.decode()
    response = client.post(reverse("login"), {"username": "user_annotator", "password": "pw-user_annotator"})
    assert response.status_code == 302
    assert response["Location"] == reverse("home:home")


@pytest.mark.django_db
def test_unknown_problem_and_job_give_friendly_404(client, annotator):
    client.force_login(annotator)
    response = client.get(reverse("annotation:problem_detail", args=["nope"]))
    assert response.status_code == 404
    assert "Page not found" in response.content.decode()
    assert client.get(reverse("annotation:import_detail", args=[999999])).status_code == 404


# ---------------------------------------------------------------- navigation


@pytest.mark.django_db
def test_navigation_follows_roles(client, role_users):
    client.force_login(role_users["probe_reviewer"])
    body = client.get(reverse("annotation:problem_list")).content.decode()
    assert 'href="/api/docs/"' in body
    assert reverse("annotation:import_list") not in body
    assert 'href="/admin/"' not in body
    assert 'action="/accounts/logout/"' in body and 'method="post"' in body

    client.force_login(role_users["admin"])
    body = client.get(reverse("annotation:problem_list")).content.decode()
    assert reverse("annotation:import_list") in body
    assert 'href="/admin/"' not in body  # the Django admin site needs staff status too
    role_users["admin"].is_staff = True
    role_users["admin"].save(update_fields=["is_staff"])
    assert 'href="/admin/"' in client.get(reverse("annotation:problem_list")).content.decode()


@pytest.mark.django_db
def test_base_page_loads_vendored_htmx_with_csrf_header_and_no_inline_style(client, annotator):
    client.force_login(annotator)
    response = client.get(reverse("annotation:problem_list"))
    body = response.content.decode()
    assert "/static/vendor/htmx/htmx.min.js" in body
    assert 'hx-headers=\'{"X-CSRFToken": "' in body
    assert '"includeIndicatorStyles": false' in body
    assert "style=" not in body and "<style" not in body
    policy = response["Content-Security-Policy"]
    assert "style-src 'self';" in policy and "unsafe-inline" not in policy


# ---------------------------------------------------------------- answer-blindness


@pytest.mark.django_db
@pytest.mark.parametrize("role", ("annotator", "source_reviewer", "probe_reviewer", "adjudicator"))
def test_private_fields_never_reach_non_admins(client, role_users, problem, job, role):
    client.force_login(role_users[role])
    urls = [
        reverse("annotation:problem_list"),
        reverse("annotation:problem_list") + "?q=incline",
        reverse("annotation:problem_detail", args=[problem.problem_id]),
    ]
    if role in IMPORT_ROLES:
        urls += [reverse("annotation:import_list"), reverse("annotation:import_detail", args=[job.pk])]
    for url in urls:
        body = client.get(url).content.decode()
        assert SECRET_ANSWER not in body, url
        assert SECRET_SOLUTION not in body, url
        assert "Private (admin only)" not in body, url


@pytest.mark.django_db
def test_key_holder_sees_private_panel_on_detail_only(client, admin_user_role, key_holder, problem):
    client.force_login(admin_user_role)  # an admin without the key-holder permission: no answer, no solution
    detail = client.get(reverse("annotation:problem_detail", args=[problem.problem_id])).content.decode()
    assert SECRET_ANSWER not in detail and SECRET_SOLUTION not in detail
    client.force_login(key_holder)
    detail = client.get(reverse("annotation:problem_detail", args=[problem.problem_id])).content.decode()
    assert "Private (admin only)" in detail
    assert SECRET_ANSWER in detail
    assert SECRET_SOLUTION in detail
    listing = client.get(reverse("annotation:problem_list")).content.decode()
    assert SECRET_ANSWER not in listing


# ---------------------------------------------------------------- problem list


@pytest.mark.django_db
def test_filters_and_search_narrow_the_list(client, annotator):
    ParentProblemFactory(problem_id="opt_001", domain="optics", language="en")
    ParentProblemFactory(problem_id="mech_001", domain="mechanics", language="zh", stem="滑块在斜面上")
    client.force_login(annotator)
    url = reverse("annotation:problem_list")

    body = client.get(url, {"domain": "optics"}).content.decode()
    assert "opt_001" in body and "mech_001" not in body
    body = client.get(url, {"language": "zh"}).content.decode()
    assert "mech_001" in body and "opt_001" not in body
    body = client.get(url, {"q": "斜面"}).content.decode()
    assert "mech_001" in body and "opt_001" not in body
    # A stale or hand-made bad value is ignored rather than answered with an error.
    body = client.get(url, {"status": "bogus"}).content.decode()
    assert "mech_001" in body and "opt_001" in body


@pytest.mark.django_db
def test_htmx_request_returns_only_the_results_fragment(client, annotator, problem):
    client.force_login(annotator)
    response = client.get(
        reverse("annotation:problem_list"), {"domain": "mechanics"}, headers={"HX-Request": "true"}
    )
    body = response.content.decode()
    assert response.status_code == 200
    assert body.lstrip().startswith('<section id="results"')
    assert "<table" in body and "incline_001" in body
    assert "<html" not in body and '<nav class="mainnav"' not in body and "<form" not in body
    assert "HX-Request" in response["Vary"]


@pytest.mark.django_db
def test_htmx_response_pushes_a_canonical_url(client, annotator, problem):
    client.force_login(annotator)
    url = reverse("annotation:problem_list")
    response = client.get(
        url, {"q": "", "source": "", "domain": "mechanics", "status": ""}, headers={"HX-Request": "true"}
    )
    assert response["HX-Push-Url"] == "/problems/?domain=mechanics"
    response = client.get(url, {"q": "", "domain": ""}, headers={"HX-Request": "true"})
    assert response["HX-Push-Url"] == "/problems/"


@pytest.mark.django_db
def test_htmx_history_restore_gets_the_full_page(client, annotator, problem):
    client.force_login(annotator)
    response = client.get(
        reverse("annotation:problem_list"),
        headers={"HX-Request": "true", "HX-History-Restore-Request": "true"},
    )
    assert "<html" in response.content.decode()


@pytest.mark.django_db
def test_pass_progress_counts_only_fresh_approvals(client, annotator, problem):
    PassDocumentFactory(
        parent=problem, pass_no=1, status=PassDocument.Status.APPROVED, approved_sha256="will-be-replaced"
    )
    PassDocument.objects.filter(parent=problem, pass_no=1).update(
        approved_sha256=PassDocument.objects.get(parent=problem, pass_no=1).document_sha256
    )
    PassDocumentFactory(
        parent=problem, pass_no=2, status=PassDocument.Status.APPROVED, approved_sha256="old-hash"
    )
    PassDocumentFactory(parent=problem, pass_no=3, status=PassDocument.Status.SUBMITTED)
    client.force_login(annotator)
    body = client.get(reverse("annotation:problem_list")).content.decode()
    assert "pass pass--approved" in body
    assert "pass pass--stale" in body
    assert "pass pass--submitted" in body
    assert "pass pass--missing" in body
    assert "1/4" in body


@pytest.mark.django_db
def test_pagination_keeps_filters(client, annotator):
    ParentProblemFactory.create_batch(55, domain="optics")
    client.force_login(annotator)
    body = client.get(reverse("annotation:problem_list"), {"domain": "optics"}).content.decode()
    assert "55 problems" in body
    assert 'href="?domain=optics&amp;page=2"' in body


@pytest.mark.django_db
def test_problem_list_query_count_does_not_grow_with_rows(client, annotator, django_assert_max_num_queries):
    client.force_login(annotator)
    url = reverse("annotation:problem_list")
    # session, user, roles, 2 facet queries, count, page, passes prefetch, the problems the annotator annotates a
    # second time (annotation.double.blind): 9 whatever the row count
    for index in range(30):
        parent = ParentProblemFactory(problem_id=f"many_{index:03d}")
        ProblemImageFactory(parent=parent, image_id="img_1", ordinal=1)
        PassDocumentFactory(parent=parent, pass_no=1)
        PassDocumentFactory(parent=parent, pass_no=2)
        # an approved pass: its freshness reads every binding field, none of which may be loaded per row
        approved = PassDocumentFactory(parent=parent, pass_no=3)
        approved.status = PassDocument.Status.APPROVED
        approved.approved_sha256 = approved.document_sha256
        approved.approved_parent_sha256 = parent.content_sha256
        approved.approved_upstream_sha256 = approved.upstream_sha256
        approved.save()
    with django_assert_max_num_queries(9):
        response = client.get(url)
    assert response.content.decode().count('class="cell-id"') == 30
    assert response.content.decode().count("pass pass--approved pass--link") == 30  # fresh, not stale
    with django_assert_max_num_queries(9):
        client.get(url, headers={"HX-Request": "true"})


# ---------------------------------------------------------------- problem detail


@pytest.mark.django_db
def test_detail_shows_statement_options_images_and_passes(client, annotator, problem):
    PassDocumentFactory(parent=problem, pass_no=1, status=PassDocument.Status.SUBMITTED, version=3)
    client.force_login(annotator)
    body = client.get(reverse("annotation:problem_detail", args=[problem.problem_id])).content.decode()
    image = problem.images.get()
    assert problem.stem in body
    assert problem.query in body
    assert "mg" in body
    assert f'src="{reverse("annotation:image_file", args=[problem.problem_id, "img_1"])}"' in body
    assert 'width="240" height="160"' in body
    assert 'alt="Diagram img_1 of problem incline_001"' in body
    assert image.sha256[:12] in body
    assert "v3" in body and "Not started" in body


# ---------------------------------------------------------------- image file


@pytest.mark.django_db
def test_image_view_returns_exact_stored_bytes(client, annotator, db):
    data = png_bytes(64, 48, (10, 200, 30))
    image = ProblemImageFactory(
        parent=ParentProblemFactory(problem_id="img_case"), image_id="img_7", data=data
    )
    client.force_login(annotator)
    response = client.get(reverse("annotation:image_file", args=["img_case", "img_7"]))
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == data
    assert response["Content-Type"] == image.media_type == "image/png"
    assert "private" in response["Cache-Control"]
    assert response["X-Content-Type-Options"] == "nosniff"


@pytest.mark.django_db
def test_image_view_404_for_unknown_ids_and_wrong_parent(client, annotator, problem):
    other = ParentProblemFactory(problem_id="other_problem")
    client.force_login(annotator)
    assert (
        client.get(reverse("annotation:image_file", args=[problem.problem_id, "img_999"])).status_code == 404
    )
    assert client.get(reverse("annotation:image_file", args=["missing", "img_1"])).status_code == 404
    assert client.get(reverse("annotation:image_file", args=[other.problem_id, "img_1"])).status_code == 404


# ---------------------------------------------------------------- imports


@pytest.mark.django_db
def test_import_page_rejects_a_non_zip_upload_with_a_message(client, annotator):
    client.force_login(annotator)
    upload = SimpleUploadedFile("notes.txt", b"just text", content_type="text/plain")
    response = client.post(reverse("annotation:import_list"), {"kind": "problems", "file": upload})
    assert response.status_code == 400
    assert "This file is not a zip archive." in response.content.decode()
    assert not ImportJob.objects.exists()


@pytest.fixture
def fake_importer(monkeypatch):
    """Stand-in for the importer the page calls, so the page is tested on its own contract."""
    calls = []

    def import_job_create(*, kind, upload, actor):
        calls.append((kind, upload.name, actor))
        if upload.name == "broken.zip":
            raise ApplicationError("The archive has no problems.jsonl at its root.", code="manifest_missing")
        return ImportJob.objects.create(kind=kind, original_name=upload.name, created_by=actor)

    monkeypatch.setattr(annotation_views.imports, "import_job_create", import_job_create)
    return calls


@pytest.mark.django_db
def test_import_upload_creates_job_and_redirects(client, annotator, fake_importer):
    client.force_login(annotator)
    upload = SimpleUploadedFile("batch.zip", _zip_bytes(), content_type="application/zip")
    response = client.post(reverse("annotation:import_list"), {"kind": "kit_workspace", "file": upload})
    job = ImportJob.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("annotation:import_detail", args=[job.pk])
    assert fake_importer == [("kit_workspace", "batch.zip", annotator)]


@pytest.mark.django_db
def test_import_application_error_is_shown_on_the_form(client, annotator, fake_importer):
    client.force_login(annotator)
    upload = SimpleUploadedFile("broken.zip", _zip_bytes(), content_type="application/zip")
    response = client.post(reverse("annotation:import_list"), {"kind": "problems", "file": upload})
    assert response.status_code == 400
    assert "The archive has no problems.jsonl at its root." in response.content.decode()
    assert not ImportJob.objects.exists()


@pytest.mark.django_db
def test_running_job_polls_and_finished_job_shows_report(client, annotator, job):
    client.force_login(annotator)
    url = reverse("annotation:import_detail", args=[job.pk])
    running = ImportJob.objects.create(
        kind="problems", status="running", total=10, done=4, created_by=annotator
    )
    body = client.get(reverse("annotation:import_detail", args=[running.pk])).content.decode()
    assert 'hx-trigger="every 1s"' in body
    assert 'max="10" value="4"' in body

    fragment = client.get(url, headers={"HX-Request": "true"}).content.decode()
    assert fragment.lstrip().startswith('<div id="job"')
    assert "every 1s" not in fragment
    assert "<html" not in fragment
    for text in (
        "incline_001",
        "bad_002",
        "E_IMAGE",
        "Image missing: fig2.png",
        "W_LONG",
        "Statement is long",
    ):
        assert text in fragment
    assert "Created" in fragment and "Failed" in fragment


@pytest.mark.django_db
def test_import_report_renders_defensively(client, annotator):
    job = ImportJob.objects.create(
        kind="problems",
        status="failed",
        created_by=annotator,
        report={
            "status": "failed",
            "counts": "n/a",
            "message": "Archive unreadable",
            "rows": ["junk", {"row": 3, "errors": "plain string", "warnings": None}],
        },
    )
    client.force_login(annotator)
    response = client.get(reverse("annotation:import_detail", args=[job.pk]))
    body = response.content.decode()
    assert response.status_code == 200
    assert "Archive unreadable" in body and "plain string" in body


@pytest.mark.django_db
def test_import_list_shows_recent_jobs(client, annotator, job):
    client.force_login(annotator)
    body = client.get(reverse("annotation:import_list")).content.decode()
    assert "batch.zip" in body
    assert reverse("annotation:import_detail", args=[job.pk]) in body


@pytest.mark.django_db
def test_real_importer_refusal_is_shown_on_the_form(client, annotator):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("readme.txt", "no manifest here")
    client.force_login(annotator)
    upload = SimpleUploadedFile("empty.zip", buffer.getvalue(), content_type="application/zip")
    response = client.post(reverse("annotation:import_list"), {"kind": "problems", "file": upload})
    assert response.status_code == 400
    assert "The archive has no" in response.content.decode()
    assert not ImportJob.objects.exists()

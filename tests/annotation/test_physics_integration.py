"""The physics checks inside the app (issue 30 §1): rule settings (admins, audited), the severity of each finding,
the check result a save records, submit refused by blocking rules only, the findings in the pass API, the
workspace payload and the review page, the rules page and API, and a Kit import that is never blocked."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.demo.generator import generate_problem, generate_workspace
from annotation.importers import import_kit_workspace
from annotation.models import ParentProblem, PassDocument, PhysicsRuleSetting
from annotation.physics.checks import load_rules
from annotation.physics.services import (
    blocking_codes,
    physics_issues,
    physics_rule_list,
    physics_rule_set_blocking,
)
from annotation.services import pass_document_save, pass_document_submit
from audit.models import Event
from kit.canonical import digest, write_json_bytes
from physalign_site.errors import ApplicationError
from tests.factories import ParentProblemFactory, PassDocumentFactory, ProblemImageFactory

pytestmark = pytest.mark.django_db

SEED, DEMO_INDEX = (
    2027,
    5,
)  # "Find the tension T1 in the left cable."; its q005 (weight W = 300 N) has no anchor
WRONG_QUANTITY = 4  # quantities[4] is q005, a weight: a force, so N, never J
UNIT_RULE = "PHYS_UNIT_DIMENSION"  # the rule a force given in joules breaks
UNIT_PATH = f"quantities[{WRONG_QUANTITY}].unit_latex"


def _client(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _api(user: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def _wrong_unit(document: dict[str, Any]) -> dict[str, Any]:
    wrong = copy.deepcopy(document)
    wrong["quantities"][WRONG_QUANTITY]["unit_latex"] = "J"
    return wrong


@pytest.fixture
def demo(annotator):
    """A generated (known good) problem with its Passes 1–4 stored as drafts by the annotator."""
    gen = generate_problem(seed=SEED, index=DEMO_INDEX)
    segments = gen.manifest_row["segments"]
    parent = ParentProblemFactory(
        problem_id=gen.problem_id,
        stem=segments["stem"],
        query=segments["query"],
        language=gen.manifest_row["language"],
    )
    ProblemImageFactory(parent=parent, image_id="img_0", ordinal=0, data=gen.png)
    for pass_no, document in enumerate(gen.passes[:4], start=1):
        PassDocumentFactory(parent=parent, pass_no=pass_no, document=document, updated_by=annotator)
    return parent, gen


@pytest.fixture
def wrong(demo, annotator) -> PassDocument:
    """The demo's Pass 3 saved by the annotator with the weight W in joules."""
    parent, gen = demo
    return pass_document_save(
        parent=parent, pass_no=3, document=_wrong_unit(gen.passes[2]), actor=annotator, expected_version=1
    )


def _finding(severity: str) -> dict[str, Any]:
    return {
        "code": UNIT_RULE,
        "path": UNIT_PATH,
        "record_id": "q005",
        "severity": severity,
    }


def _shape(issues: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The fields a test can state exactly (the message and rule are the checker's wording)."""
    return [{k: issue[k] for k in ("code", "path", "record_id", "severity")} for issue in issues]


# --- the known-good demo has no finding ----------------------------------------------------------------


def test_the_generated_demo_passes_have_no_physics_findings(demo):
    parent, gen = demo
    docs = {n: d for n, d in enumerate(gen.passes[:4], start=1)}
    for pass_no in (1, 2, 3, 4):
        assert physics_issues(parent=parent, pass_no=pass_no, document=docs[pass_no], earlier=docs) == []


# --- rule settings: admins only, audited ---------------------------------------------------------------


def test_every_rule_is_a_warning_until_an_admin_makes_it_blocking(admin_user_role):
    rules = load_rules()
    assert [v.severity for v in physics_rule_list()] == ["warning"] * len(rules.rules)
    assert UNIT_RULE in {r.code for r in rules.rules}

    view = physics_rule_set_blocking(code=UNIT_RULE, blocking=True, actor=admin_user_role)

    assert (view.code, view.blocking, view.severity) == (UNIT_RULE, True, "blocking")
    assert blocking_codes() == frozenset({UNIT_RULE})
    setting = PhysicsRuleSetting.objects.get(code=UNIT_RULE)
    assert (setting.blocking, setting.updated_by) == (True, admin_user_role)
    event = Event.objects.get(verb="physics_rule.set_blocking")
    assert (event.actor, event.object_id) == (admin_user_role, str(setting.pk))
    assert event.before == {"code": UNIT_RULE, "blocking": False, "rules_version": rules.version}
    assert event.after == {"code": UNIT_RULE, "blocking": True, "rules_version": rules.version}

    again = physics_rule_set_blocking(code=UNIT_RULE, blocking=True, actor=admin_user_role)
    assert again.blocking is True
    assert Event.objects.filter(verb="physics_rule.set_blocking").count() == 1  # nothing changed, no event

    physics_rule_set_blocking(code=UNIT_RULE, blocking=False, actor=admin_user_role)
    assert blocking_codes() == frozenset()
    assert Event.objects.filter(verb="physics_rule.set_blocking").count() == 2


@pytest.mark.parametrize("role", ["annotator", "source_reviewer", "probe_reviewer", "adjudicator"])
def test_only_an_admin_may_make_a_rule_blocking(role_users, role):
    with pytest.raises(ApplicationError) as refused:
        physics_rule_set_blocking(code=UNIT_RULE, blocking=True, actor=role_users[role])
    assert (refused.value.code, refused.value.status_code) == ("physics_rule_change_forbidden", 403)
    assert not PhysicsRuleSetting.objects.exists()
    assert not Event.objects.filter(verb="physics_rule.set_blocking").exists()


def test_an_unknown_rule_is_refused(admin_user_role):
    with pytest.raises(ApplicationError) as refused:
        physics_rule_set_blocking(code="PHYS_NO_SUCH_RULE", blocking=True, actor=admin_user_role)
    assert (refused.value.code, refused.value.status_code) == ("physics_rule_not_found", 404)
    assert not PhysicsRuleSetting.objects.exists()


# --- save records the check, submit is refused only by blocking rules ----------------------------------


def test_save_records_the_check_with_the_rule_set_version_and_each_findings_severity(demo, wrong, annotator):
    parent, gen = demo
    wrong.refresh_from_db()
    assert wrong.physics_check["rules_version"] == load_rules().version
    assert _shape(wrong.physics_check["findings"]) == [_finding("warning")]
    assert wrong.physics_check["findings"][0]["message"]
    event = Event.objects.filter(verb="pass_document.save", object_id=str(wrong.pk)).latest("pk")
    assert event.after["physics_finding_count"] == 1

    fixed = pass_document_save(
        parent=parent, pass_no=3, document=gen.passes[2], actor=annotator, expected_version=wrong.version
    )
    fixed.refresh_from_db()
    assert fixed.physics_check == {"rules_version": load_rules().version, "findings": []}


def test_a_warning_never_blocks_submit(wrong, annotator):
    submitted = pass_document_submit(doc=wrong, actor=annotator)
    assert submitted.status == PassDocument.Status.SUBMITTED


def test_a_blocking_rule_refuses_submit_with_the_reason_and_changes_nothing(
    wrong, annotator, admin_user_role
):
    physics_rule_set_blocking(code=UNIT_RULE, blocking=True, actor=admin_user_role)
    events = Event.objects.count()

    with pytest.raises(ApplicationError) as refused:
        pass_document_submit(doc=wrong, actor=annotator)

    error = refused.value
    assert (error.code, error.status_code) == ("physics_blocking", 400)
    finding = error.extra["errors"][0]
    assert _shape(error.extra["errors"]) == [_finding("blocking")]
    assert error.message == (
        f"Blocked by physics rule an admin made blocking — {UNIT_RULE} at {UNIT_PATH}: {finding['message']}"
    )
    wrong.refresh_from_db()
    assert wrong.status == PassDocument.Status.DRAFT
    assert Event.objects.count() == events


def test_submit_over_http_is_refused_by_a_blocking_rule_and_allowed_with_a_warning(
    demo, wrong, annotator, admin_user_role
):
    parent, _ = demo
    url = reverse("annotation-api:pass-submit", args=[parent.problem_id, 3])
    _api(admin_user_role).patch(f"/api/physics-rules/{UNIT_RULE}/", {"blocking": True}, format="json")

    refused = _api(annotator).post(url, {}, format="json")

    assert refused.status_code == 400
    body = refused.json()
    assert body["code"] == "physics_blocking"
    assert UNIT_RULE in body["message"] and UNIT_PATH in body["message"]
    assert _shape(body["extra"]["errors"]) == [_finding("blocking")]
    assert PassDocument.objects.get(pk=wrong.pk).status == PassDocument.Status.DRAFT

    _api(admin_user_role).patch(f"/api/physics-rules/{UNIT_RULE}/", {"blocking": False}, format="json")
    allowed = _api(annotator).post(url, {}, format="json")
    assert allowed.status_code == 200
    assert allowed.json()["status"] == "submitted"


def test_validator_issues_and_blocking_findings_are_refused_together(demo, annotator, admin_user_role):
    parent, gen = demo
    document = _wrong_unit(gen.passes[2])
    document["quantities"][0]["owner_id"] = "p999"  # the validator: a reference to no entity
    doc = pass_document_save(parent=parent, pass_no=3, document=document, actor=annotator, expected_version=1)
    physics_rule_set_blocking(code=UNIT_RULE, blocking=True, actor=admin_user_role)

    with pytest.raises(ApplicationError) as refused:
        pass_document_submit(doc=doc, actor=annotator)

    assert refused.value.code == "document_has_issues"
    errors = refused.value.extra["errors"]
    assert any(e["path"] == "quantities[0].owner_id" and "severity" not in e for e in errors)
    assert _shape([e for e in errors if "severity" in e]) == [_finding("blocking")]


# --- where the findings are shown ------------------------------------------------------------------------


def test_the_pass_api_lists_physics_findings_with_their_severity(demo, annotator, admin_user_role):
    parent, gen = demo
    url = reverse("annotation-api:pass-detail", args=[parent.problem_id, 3])
    api = _api(annotator)

    saved = api.put(url, {"document": _wrong_unit(gen.passes[2])}, format="json", HTTP_IF_MATCH='"1"')

    assert saved.status_code == 200
    assert _shape(saved.json()["validation_errors"]) == [_finding("warning")]
    physics_rule_set_blocking(code=UNIT_RULE, blocking=True, actor=admin_user_role)
    read = api.get(url)
    assert _shape(read.json()["validation_errors"]) == [_finding("blocking")]
    assert read.json()["validation_errors"][0]["rule"]


def test_the_workspace_payload_carries_the_findings_with_their_severity(demo, wrong, annotator):
    parent, _ = demo
    response = _client(annotator).get(reverse("annotation:pass_workspace", args=[parent.problem_id, 3]))
    payload = json.loads(json.dumps(response.context["payload"]))
    assert _shape(payload["issues"]) == [_finding("warning")]


def test_an_unstarted_pass4_shows_the_findings_of_what_it_is_built_from(demo, wrong, annotator):
    parent, _ = demo
    PassDocument.objects.filter(parent=parent, pass_no=4).delete()
    response = _client(annotator).get(reverse("annotation:pass_workspace", args=[parent.problem_id, 4]))
    payload = response.context["payload"]
    assert [(i["code"], i["path"], i["severity"]) for i in payload["issues"]] == [
        (UNIT_RULE, UNIT_PATH, "warning")
    ]


def test_the_review_page_shows_the_findings_and_a_warning_does_not_disable_approval(
    demo, wrong, annotator, source_reviewer
):
    parent, _ = demo
    pass_document_submit(doc=wrong, actor=annotator)
    response = _client(source_reviewer).get(reverse("annotation:pass_review", args=[parent.problem_id, 3]))
    assert response.status_code == 200
    assert _shape(response.context["physics_findings"]) == [_finding("warning")]
    assert response.context["issues"] == []
    html = response.content.decode()
    assert "Physics checks: 1 finding" in html
    assert f"<code>{UNIT_RULE}</code>" in html
    assert 'value="approve" disabled' not in html


def test_the_review_page_says_when_there_is_no_finding(demo, source_reviewer):
    parent, _ = demo
    response = _client(source_reviewer).get(reverse("annotation:pass_review", args=[parent.problem_id, 3]))
    assert response.context["physics_findings"] == []
    assert "Physics checks: no findings" in response.content.decode()


@pytest.mark.parametrize("findings", [1, 40])
def test_workspace_and_api_queries_do_not_grow_with_findings(
    demo, annotator, django_assert_max_num_queries, findings
):
    parent, gen = demo
    document = copy.deepcopy(gen.passes[2])
    template = document["quantities"][WRONG_QUANTITY]
    document["quantities"] = document["quantities"][:WRONG_QUANTITY] + [
        {**template, "id": f"q{WRONG_QUANTITY + 1 + i:03d}", "unit_latex": "J"} for i in range(findings)
    ]
    doc = pass_document_save(parent=parent, pass_no=3, document=document, actor=annotator, expected_version=1)
    assert len(doc.physics_check["findings"]) >= findings
    client, api = _client(annotator), _api(annotator)
    page_url = reverse("annotation:pass_workspace", args=[parent.problem_id, 3])
    api_url = reverse("annotation-api:pass-detail", args=[parent.problem_id, 3])
    client.get(page_url)  # warm up
    # one query more than a document without findings (tests/annotation/test_workspace_pages.py: 10): which rules
    # block
    with django_assert_max_num_queries(11):
        assert client.get(page_url).status_code == 200
    with django_assert_max_num_queries(10):
        assert api.get(api_url).status_code == 200


# --- the rules page and API ------------------------------------------------------------------------------


def test_the_rules_page_lists_the_version_and_every_rule(annotator):
    rules = load_rules()
    response = _client(annotator).get(reverse("physics:rules"))
    assert response.status_code == 200
    html = response.content.decode()
    assert f'<code data-testid="rules-version">{rules.version}</code>' in html
    for rule in rules.rules:
        assert f'<tr id="rule-{rule.code}" data-code="{rule.code}">' in html
    assert html.count('data-testid="severity">warning<') == len(rules.rules)
    assert "Make blocking" not in html  # an annotator reads, never toggles
    assert [v.code for v in response.context["rules"]] == [r.code for r in rules.rules]


def test_an_admin_toggles_a_rule_on_the_page(admin_user_role):
    client = _client(admin_user_role)
    page = client.get(reverse("physics:rules")).content.decode()
    assert f'aria-label="Make {UNIT_RULE} blocking"' in page

    response = client.post(reverse("physics:rules"), {"code": UNIT_RULE, "blocking": "1"}, follow=True)

    assert response.redirect_chain == [(reverse("physics:rules"), 302)]
    assert f"{UNIT_RULE} is now blocking." in response.content.decode()
    assert f'aria-label="Make {UNIT_RULE} a warning"' in response.content.decode()
    assert blocking_codes() == frozenset({UNIT_RULE})
    assert Event.objects.filter(verb="physics_rule.set_blocking", actor=admin_user_role).count() == 1


def test_the_page_refuses_a_toggle_without_a_choice(admin_user_role):
    response = _client(admin_user_role).post(reverse("physics:rules"), {"code": UNIT_RULE}, follow=True)
    assert "Say whether the rule blocks (blocking=1 or 0). (blocking_required)" in response.content.decode()
    assert not PhysicsRuleSetting.objects.exists()


@pytest.mark.parametrize("role", ["annotator", "source_reviewer", "probe_reviewer", "adjudicator"])
def test_no_one_but_an_admin_toggles_over_http(role_users, role):
    page = _client(role_users[role]).post(reverse("physics:rules"), {"code": UNIT_RULE, "blocking": "1"})
    api = _api(role_users[role]).patch(f"/api/physics-rules/{UNIT_RULE}/", {"blocking": True}, format="json")
    assert (page.status_code, api.status_code) == (403, 403)
    assert not PhysicsRuleSetting.objects.exists()
    assert not Event.objects.filter(verb="physics_rule.set_blocking").exists()


def test_anonymous_visitors_get_the_login_page_and_a_401():
    page = Client().post(reverse("physics:rules"), {"code": UNIT_RULE, "blocking": "1"})
    assert page.status_code == 302 and page["Location"].startswith("/accounts/login/")
    assert Client().get(reverse("physics:rules")).status_code == 302
    assert APIClient().get("/api/physics-rules/").status_code == 401
    assert (
        APIClient().patch(f"/api/physics-rules/{UNIT_RULE}/", {"blocking": True}, format="json").status_code
        == 401
    )
    assert not PhysicsRuleSetting.objects.exists()


def test_the_rules_api_lists_every_rule_and_an_admin_patches_one(annotator, admin_user_role):
    rules = load_rules()
    listed = _api(annotator).get("/api/physics-rules/")
    assert listed.status_code == 200
    assert listed.json() == {
        "rules_version": rules.version,
        "rules": [
            {
                "code": r.code,
                "title": r.title,
                "description": r.description,
                "blocking": False,
                "severity": "warning",
            }
            for r in rules.rules
        ],
    }
    patched = _api(admin_user_role).patch(
        f"/api/physics-rules/{UNIT_RULE}/", {"blocking": True}, format="json"
    )
    assert patched.status_code == 200
    assert (patched.json()["code"], patched.json()["blocking"], patched.json()["severity"]) == (
        UNIT_RULE,
        True,
        "blocking",
    )
    one = _api(annotator).get(f"/api/physics-rules/{UNIT_RULE}/")
    assert (one.status_code, one.json()["severity"]) == (200, "blocking")
    bad = _api(admin_user_role).patch(
        f"/api/physics-rules/{UNIT_RULE}/", {"blocking": "often"}, format="json"
    )
    assert bad.status_code == 400
    assert PhysicsRuleSetting.objects.get(code=UNIT_RULE).blocking is True


def test_the_rules_api_is_in_the_schema(annotator):
    schema = _api(annotator).get("/api/schema/?format=json").json()
    paths = schema["paths"]
    assert paths["/api/physics-rules/"]["get"]["operationId"] == "physics_rules_list"
    detail = paths["/api/physics-rules/{code}/"]
    assert detail["patch"]["operationId"] == "physics_rules_partial_update"
    assert set(schema["components"]["schemas"]["PhysicsRule"]["properties"]) == {
        "code",
        "title",
        "description",
        "blocking",
        "severity",
    }


def test_the_menu_offers_the_rules_page_to_whoever_may_read_it(role_users):
    for role in ("annotator", "source_reviewer", "probe_reviewer", "adjudicator", "admin"):
        html = _client(role_users[role]).get("/").content.decode()
        assert f'href="{reverse("physics:rules")}"' in html, role


# --- a Kit import is never blocked ---------------------------------------------------------------------


def test_a_kit_import_is_never_blocked_nor_checked(tmp_path: Path, admin_user_role):
    """A Kit workspace whose approved Pass 3 gives a force in joules imports approved, even with the rule
    blocking; the import stores no check result (the workspace computes the findings when it is opened)."""
    physics_rule_set_blocking(code=UNIT_RULE, blocking=True, actor=admin_user_role)
    ws = tmp_path / "ws"
    generate_workspace(ws, count=DEMO_INDEX + 1, seed=SEED)
    pid = generate_problem(seed=SEED, index=DEMO_INDEX).problem_id
    state_path = ws / "reviews" / "state.json"
    state = json.loads(state_path.read_text())
    for stage in ("pass3", "pass4"):
        path = ws / "passes" / stage / f"{pid}.json"
        document = _wrong_unit(json.loads(path.read_text()))
        path.write_bytes(write_json_bytes(document))
        state["problems"][pid]["stages"][stage]["document_sha256"] = digest(document)
    state_path.write_bytes(write_json_bytes(state))

    report = import_kit_workspace(workspace=ws)

    assert report.status == "succeeded", report.as_dict()
    parent = ParentProblem.objects.get(problem_id=pid)
    docs = {d.pass_no: d for d in PassDocument.objects.filter(parent=parent)}
    assert {n: (d.status, d.approval_is_fresh) for n, d in docs.items()} == {
        n: ("approved", True) for n in (1, 2, 3, 4)
    }
    assert all(d.physics_check == {} for d in docs.values())
    earlier = {n: d.document for n, d in docs.items()}
    assert _shape(physics_issues(parent=parent, pass_no=3, document=docs[3].document, earlier=earlier)) == [
        _finding("blocking")
    ]

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command
from django.test import RequestFactory

from annotation.models import ParentProblem, PassDocument, ProblemImage
from physalign_site.roles import ALL_ROLES, user_roles


@pytest.mark.django_db
def test_load_demo_loads_real_and_generated_problems_and_is_idempotent(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    out = StringIO()
    call_command("load_demo", "--count", "8", "--seed", "7", stdout=out)

    assert ParentProblem.objects.filter(problem_id__startswith="ostx_").count() == 26
    generated = ParentProblem.objects.filter(problem_id__startswith="demo_7_")
    assert generated.count() == 8
    assert ProblemImage.objects.count() == 26 + 8
    # Every generated problem arrives with Pass 1-4 approved against the hash of its document.
    passes = PassDocument.objects.filter(parent__in=generated)
    assert passes.count() == 32
    assert all(doc.approval_is_fresh for doc in passes)
    assert set(generated.values_list("status", flat=True)) == {"annotated"}
    assert generated.exclude(answer="").count() == 8

    for role in ALL_ROLES:
        login = RequestFactory().post("/accounts/login/")  # django-axes throttles per request: it needs one
        user = authenticate(login, username=role, password=f"{role}-demo")
        assert user is not None and role in user_roles(user)

    versions = dict(PassDocument.objects.values_list("pk", "version"))
    out = StringIO()
    call_command("load_demo", "--count", "8", "--seed", "7", stdout=out)
    assert "26 unchanged" in out.getvalue() and "8 unchanged" in out.getvalue()
    assert dict(PassDocument.objects.values_list("pk", "version")) == versions
    assert (
        ParentProblem.objects.count() == 26 + 8 + 20
    )  # OpenStax, generated, the solving demo's text problems

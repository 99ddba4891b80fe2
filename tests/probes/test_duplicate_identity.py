"""Two parents with one source identity: the second never takes over the first one's probes (DUPLICATE_LOGICAL_ID)."""

from __future__ import annotations

from probes.models import CompileIssue, Probe
from probes.services import compile_run_create, compile_run_execute

from .conftest import make_demo_parent


def test_a_second_parent_with_the_same_source_identity_is_blocked_not_merged(db, django_user_model):
    first = make_demo_parent(django_user_model)
    compile_run_execute(run_id=compile_run_create(actor=None, enqueue=False).pk)
    held = dict(Probe.objects.values_list("logical_probe_id", "review_target_root"))
    assert len(held) == 3 and set(Probe.objects.values_list("parent", flat=True)) == {first.pk}

    # Same namespace, split and sample id (so the same logical probe ids), another row and problem id.
    second = make_demo_parent(
        django_user_model, problem_id="SYNTHETIC_SAME_IDENTITY", sample="SYNTHETIC_TEST_ONLY"
    )
    run = compile_run_execute(run_id=compile_run_create(actor=None, enqueue=False).pk)

    assert (
        dict(Probe.objects.filter(parent=first).values_list("logical_probe_id", "review_target_root")) == held
    )
    assert not Probe.objects.filter(parent=second).exists()
    issues = CompileIssue.objects.filter(run=run, parent=second)
    assert sorted(issues.values_list("code", flat=True)) == ["DUPLICATE_LOGICAL_ID"] * 3
    assert all(i.detail.endswith("already belongs to SYNTHETIC_TEST_ONLY") for i in issues)

"""A release holds whole, fully reviewed parents, and its +GT packets never carry a read target of a probe that
is not itself released (issue 12, item 5)."""

from __future__ import annotations

import json

import pytest

from audit.models import Event
from physalign_site.errors import ApplicationError
from probes.models import Probe, Release
from probes.releases import release_export
from probes.services import compile_run_create, compile_run_execute, probe_record_review

from .conftest import make_demo_parent
from .test_release_kit_layout import individual

pytestmark = pytest.mark.django_db


def _approve(probe: Probe) -> None:
    ids = probe.key.key["packet_plan"]["observation_ids"]
    probe_record_review(
        probe=probe,
        actor=None,
        state="approved",
        packet_state="approved_nonempty" if ids else "approved_empty",
        review_target_root=probe.review_target_root,
    )


@pytest.fixture
def two_parents(django_user_model):
    for index, pid in enumerate(("WHOLE", "PARTIAL")):
        # distinct content: an exact duplicate is never released (Kit dedup rule)
        make_demo_parent(django_user_model, problem_id=pid, sample=f"S{index}", stem_suffix=f" Case {pid}.")
    compile_run_execute(run_id=compile_run_create(actor=None, seed=2027, enqueue=False).pk)
    Probe.objects.update(split=Probe.Split.DEVELOPMENT)
    for probe in Probe.objects.select_related("key", "parent"):
        if probe.parent.problem_id == "WHOLE" or probe.interface != "T03-text":
            _approve(probe)
    return Probe.objects.select_related("key", "parent")


def test_a_parent_with_a_probe_still_pending_is_left_out_and_reported(two_parents, tmp_path):
    release = release_export(split="development", output=tmp_path / "rel", actor=None)

    released = {item.problem_id for item in release.items.all()}
    assert released == {"WHOLE"}
    assert set(release.left_out) == {"PARTIAL"} and "not approved" in release.left_out["PARTIAL"]
    event = Event.objects.get(verb="release.export")
    assert event.after["left_out_parents"] == release.left_out
    assert "PARTIAL" not in (tmp_path / "rel" / "public" / "qa_raw.json").read_text()


def test_an_export_asked_for_an_unfinished_parent_is_refused(two_parents, tmp_path):
    with pytest.raises(ApplicationError) as error:
        release_export(
            split="development", output=tmp_path / "rel", actor=None, problem_ids=["WHOLE", "PARTIAL"]
        )
    assert error.value.code == "RELEASE_PARENTS_NOT_COMPLETE"
    assert not Release.objects.exists() and not (tmp_path / "rel").exists()


def test_a_packet_never_carries_the_read_target_of_a_probe_outside_the_release(two_parents, tmp_path):
    whole = [p for p in two_parents if p.parent.problem_id == "WHOLE"]
    reader = next(p for p in whole if p.key.key["read_targets"])
    packet_owner = next(p for p in whole if p.pk != reader.pk)
    # the sibling's read target becomes readable text in another probe's +GT packet, and the reader leaves the split
    gold_view = dict(packet_owner.gold_view)
    gold_view["recognition_packet"] = [
        {"anchor": "R1", "text": reader.key.key["read_targets"][0]["expected"]}
    ]
    Probe.objects.filter(pk=packet_owner.pk).update(gold_view=gold_view)
    Probe.objects.filter(pk=reader.pk).update(split=Probe.Split.BLOCKED)

    with pytest.raises(
        ApplicationError
    ) as error:  # PARTIAL is unfinished and WHOLE would leak: nothing is left
        release_export(split="development", output=tmp_path / "rel", actor=None)

    assert error.value.code == "RELEASE_EMPTY"
    assert error.value.extra["left_out"]["WHOLE"] == (
        "a +GT packet carries the read target of a probe outside this release"
    )
    assert json.dumps(error.value.extra)  # the report is plain data for the CLI and the page


def test_an_exact_duplicate_parent_is_never_released(django_user_model, tmp_path):
    for index, pid in enumerate(("COPY_A", "COPY_B")):
        make_demo_parent(django_user_model, problem_id=pid, sample=f"S{index}")
    compile_run_execute(run_id=compile_run_create(actor=None, seed=2027, enqueue=False).pk)
    Probe.objects.update(
        split=Probe.Split.DEVELOPMENT
    )  # forced past the compiler's blocking of the duplicate
    for probe in Probe.objects.select_related("key"):
        _approve(probe)
    probes = list(Probe.objects.order_by("logical_probe_id"))
    with pytest.raises(ApplicationError) as error:
        release_export(
            split="development",
            output=tmp_path / "rel",
            actor=None,
            synthetic_example=True,
            authorization=individual(probes),
        )
    assert error.value.code == "NONREPRESENTATIVE_MEMBER" and not (tmp_path / "rel").exists()

"""A small release for the datasheet tests, as database rows: six parents of two sources over three domains, a
development and a test split, paired (+GT) probes, a release folder with nine image files and two parents
double-annotated. ``EXPECTED`` is worked out by hand from ``PARENTS`` (see test_selectors.py)."""

from __future__ import annotations

from pathlib import Path

from annotation.models import DoubleAnnotationSample, IndependentPassDocument, SecondAnnotation
from kit.canonical import digest
from probes.models import Release, ReleaseItem
from tests.factories import ParentProblemFactory, SourceFactory

SEEPHYS, OPENSTAX = "SeePhys-mini", "OpenStax-mini"
# problem_id: (source, domain label, split, probes, of which paired, statement)
PARENTS = {
    "ds_p1": (
        SEEPHYS,
        "mechanics",
        "development",
        3,
        2,
        "A block of mass m on an incline; find the friction force.",
    ),
    "ds_p2": (SEEPHYS, "Mechanics", "test", 1, 0, "Two blocks joined by a rope over a pulley."),
    "ds_p3": (
        SEEPHYS,
        "circuits",
        "test",
        4,
        1,
        "A circuit with a resistor and a battery; find the current through the resistor.",
    ),
    "ds_p4": (SEEPHYS, "optics", "test", 2, 0, "Light passes through a thin lens; where is the image?"),
    "ds_p5": (
        OPENSTAX,
        "mechanics",
        "development",
        2,
        1,
        "A ball thrown horizontally with speed v; find the kinetic energy.",
    ),
    "ds_p6": (
        OPENSTAX,
        "electromagnetism",
        "test",
        1,
        1,
        "A charged particle enters a magnetic field at speed v; find the force.",
    ),
}
IMAGE_FILES = 9
RELEASE_ID = "NREL-" + "d5" * 32


def build_release(
    tmp_path: Path | None = None,
    *,
    copies: int = 1,
    release_id: str = RELEASE_ID,
    annotator=None,
    folder: bool = True,
) -> Release:
    """The small release (``copies`` > 1 repeats every parent under new ids, for the query-count test). With
    ``annotator``, parents ds_p1 and ds_p3 get a second annotation, ds_p1's with a submitted pass."""
    path = ""
    if folder and tmp_path is not None:
        root = tmp_path / release_id[:12]
        (root / "public" / "images").mkdir(parents=True)
        for n in range(IMAGE_FILES * copies):
            (root / "public" / "images" / f"{n:064x}.png").write_bytes(b"png")
        (root / "release.json").write_text("{}")
        path = str(root)
    release = Release.objects.create(
        release_id=release_id,
        split="test",
        origin=Release.Origin.IMPORTED,
        artifact_mode="reviewed_data_release",
        path=path,
        counts={},
    )
    items = []
    for copy in range(copies):
        for problem_id, (source, domain, split, probes, paired, stem) in PARENTS.items():
            pid = problem_id if copy == 0 else f"{problem_id}_c{copy}"
            parent = ParentProblemFactory(
                problem_id=pid,
                source=SourceFactory(name=source),
                domain=domain,
                stem=stem,
                query="",
                options=[],
            )
            for n in range(probes):
                qid = f"PAQ-{digest([release_id, pid, n])}"
                items.append(
                    ReleaseItem(
                        release=release,
                        logical_probe_id=qid,
                        instance_id="PAI-" + qid[4:],
                        problem_id=pid,
                        interface="T03-image",
                        public_raw={"logical_probe_id": qid},
                        public_gold={"logical_probe_id": qid} if n < paired else None,
                        private_mapping={},
                        membership={
                            "logical_probe_id": qid,
                            "problem_id": pid,
                            "split": split,
                            "B": True,
                            "L": False,
                            "P": n < paired,
                            "metadata": {"source_namespace": source},
                        },
                    )
                )
            if annotator is not None and problem_id in ("ds_p1", "ds_p3"):
                sample = DoubleAnnotationSample.objects.create(source=parent.source, count=1)
                second = SecondAnnotation.objects.create(sample=sample, parent=parent, annotator=annotator)
                if problem_id == "ds_p1":
                    IndependentPassDocument.objects.create(
                        second=second,
                        pass_no=1,
                        document={"problem_id": pid},
                        document_sha256=digest({"problem_id": pid}),
                        status=IndependentPassDocument.Status.SUBMITTED,
                    )
    ReleaseItem.objects.bulk_create(items)
    return release

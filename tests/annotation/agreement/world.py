"""A small double-annotated world for the agreement pages: generated demo parents annotated by alice (the first
annotation), a sample whose second annotators are bob (even indices) and carol (odd), and their documents: a
seeded perturbation of alice's (``annotation.agreement.perturb``), passes 1–3, Pass 3 left a draft."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from annotation.agreement.perturb import Perturbation, perturbation
from annotation.demo.generator import generate_problem
from annotation.models import DoubleAnnotationSample, IndependentPassDocument, SecondAnnotation
from kit.canonical import digest
from tests.conftest import make_user
from tests.factories import ParentProblemFactory, PassDocumentFactory, SourceFactory


@dataclass
class World:
    alice: Any
    bob: Any
    carol: Any
    sample: DoubleAnnotationSample
    first_docs: dict[str, dict[int, dict]] = field(default_factory=dict)  # problem_id -> pass -> document
    perturbations: dict[str, Perturbation] = field(default_factory=dict)
    problem_ids: list[str] = field(default_factory=list)


def build(
    django_user_model: Any, *, parents: int = 3, only_pass1: tuple[int, ...] = (), prefix: str = "agr"
) -> World:
    """``parents`` generated parents (index i of seed 2027, problem_id ``{prefix}_{i}``); the parents at
    ``only_pass1`` have the second annotator's Pass 1 only."""
    users = {}
    for name in ("alice", "bob", "carol"):
        found = django_user_model.objects.filter(username=name).first()
        users[name] = found or make_user(django_user_model, name, "annotator")
    source = SourceFactory(name=f"{prefix}-source")
    sample = DoubleAnnotationSample.objects.create(source=source, count=parents, seed=11)
    world = World(users["alice"], users["bob"], users["carol"], sample)
    for index in range(parents):
        problem = generate_problem(seed=2027, index=index)
        problem_id = f"{prefix}_{index}"
        docs = {n: {**d, "problem_id": problem_id} for n, d in enumerate(problem.passes, start=1)}
        parent = ParentProblemFactory(problem_id=problem_id, source=source)
        for pass_no, document in docs.items():
            PassDocumentFactory(parent=parent, pass_no=pass_no, document=document, updated_by=world.alice)
        second_user = world.bob if index % 2 == 0 else world.carol
        second = SecondAnnotation.objects.create(sample=sample, parent=parent, annotator=second_user)
        result = perturbation({n: docs[n] for n in (1, 2, 3)}, seed=index)
        for pass_no in (1,) if index in only_pass1 else (1, 2, 3):
            document = result.documents[pass_no]
            IndependentPassDocument.objects.create(
                second=second,
                pass_no=pass_no,
                document=document,
                document_sha256=digest(document),
                status="draft" if pass_no == 3 else "submitted",
                updated_by=second_user,
            )
        world.first_docs[problem_id] = docs
        world.perturbations[problem_id] = result
        world.problem_ids.append(problem_id)
    return world

"""Matrix rows for assignments: the page, its POSTs and every API operation are the admins' alone; anonymous
visitors go to the login page (the API answers 401). Bodies are valid, so an admin's answer is the real one."""

from __future__ import annotations

from typing import Any

from annotation.assignments.services import assignment_assign
from tests.endpoint_matrix import ADM, ANN, ANON, Case, World, only, statuses
from tests.factories import ParentProblemFactory, SourceFactory

PAGE = "/assignments/"
API = "/api/assignments/"
ADMINS_PAGE = only({ADM: 200, ANON: 302})


def _assign_body(world: World) -> dict[str, Any]:
    return {"role": "annotator", "problem_ids": [world.assign_free_pid], "users": [world.assign_annotator]}


CASES: list[Case] = [
    Case("assignments page", "get", PAGE, expected=ADMINS_PAGE, fmt=None),
    Case(
        "assignments page, filtered",
        "get",
        f"{PAGE}?unassigned=annotator&status=new",
        expected=ADMINS_PAGE,
        fmt=None,
    ),
    Case(
        "assignments page POST assign",
        "post",
        PAGE,
        body=lambda w: {
            "form": "assign",
            "do": "assign_selected",
            "role": "annotator",
            "user": [w.assign_annotator_pk],
            "problem": [w.assign_free_pk],
        },
        expected=only({ADM: 302, ANON: 302}),
        fmt=None,
    ),
    Case(
        "assignments page POST strict",
        "post",
        PAGE,
        body=lambda w: {"form": "strict", "source": w.assign_source_pk, "strict": "1"},
        expected=only({ADM: 302, ANON: 302}),
        fmt=None,
    ),
    Case("assignments page PUT", "put", PAGE, expected=statuses(405), fmt=None),
    Case("assignments API list", "get", API, expected=only({ADM: 200})),
    Case("assignments API create", "post", API, body=_assign_body, expected=only({ADM: 200})),
    Case(
        "assignments API create, refused body",
        "post",
        API,
        body=lambda w: {
            "role": "annotator",
            "problem_ids": [w.assign_free_pid],
            "users": ["user_source_reviewer"],
        },
        expected=only({ADM: 400}),
    ),
    Case("assignments API retrieve", "get", lambda w: f"{API}{w.assignment_pk}/", expected=only({ADM: 200})),
    Case("assignments API delete", "delete", lambda w: f"{API}{w.assignment_pk}/", expected=only({ADM: 204})),
    Case("assignments API delete, missing", "delete", f"{API}999999/", expected=only({ADM: 404})),
    Case(
        "source assignment API retrieve",
        "get",
        lambda w: f"/api/sources/{w.assign_source_pk}/assignment/",
        expected=only({ADM: 200}),
    ),
    Case(
        "source assignment API update",
        "patch",
        lambda w: f"/api/sources/{w.assign_source_pk}/assignment/",
        body={"assignment_strict": True},
        expected=only({ADM: 200}),
    ),
]


def populate(world: World, users: dict[str, Any]) -> None:
    """A source with one problem assigned to the matrix annotator and one free problem."""
    source = SourceFactory(name="assignments-matrix")
    taken = ParentProblemFactory(problem_id="assign-matrix-taken", source=source)
    free = ParentProblemFactory(problem_id="assign-matrix-free", source=source)
    assignment_assign(parent_ids=[taken.pk], role="annotator", users=[users[ANN]], actor=users[ADM])
    world.assign_source_pk = source.pk
    world.assign_free_pk = free.pk
    world.assign_free_pid = free.problem_id
    world.assign_annotator = users[ANN].username
    world.assign_annotator_pk = users[ANN].pk
    world.assignment_pk = taken.assignments.get().pk

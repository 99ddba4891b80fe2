"""The forms of the assignments page: the filter (GET), the assign/unassign action (POST) and a source's strict
toggle (POST). Choices come from the data; an unknown filter value is no filter (a stale bookmark), an invalid
action is a 400 that says why."""

from __future__ import annotations

from typing import Any

from django import forms

from ..models import ParentProblem
from .selectors import ROLE_LABELS, ROLES, AssignmentFilters

ANY = [("", "Any")]
SCOPES = ("selected", "matching")
ACTIONS = ("assign", "unassign")


class AssignmentFilterForm(forms.Form):
    q = forms.CharField(
        required=False,
        max_length=200,
        label="Problem id",
        widget=forms.TextInput(attrs={"type": "search", "autocomplete": "off", "spellcheck": "false"}),
    )
    source = forms.TypedChoiceField(required=False, label="Source", coerce=int, empty_value=None)
    status = forms.ChoiceField(required=False, label="Status")
    domain = forms.ChoiceField(required=False, label="Domain")
    language = forms.ChoiceField(required=False, label="Language")
    unassigned = forms.ChoiceField(required=False, label="Unassigned only")
    assignee = forms.TypedChoiceField(required=False, label="Assigned to", coerce=int, empty_value=None)

    def __init__(
        self,
        data: Any = None,
        *,
        sources: list[tuple[int, str]],
        domains: list[str],
        users: list[tuple[int, str]],
    ) -> None:
        super().__init__(data)
        self._choices("source", ANY + [(str(pk), name) for pk, name in sources])
        self._choices("status", ANY + list(ParentProblem.Status.choices))
        self._choices("domain", ANY + [(d, d) for d in domains])
        self._choices("language", ANY + list(ParentProblem.Language.choices))
        self._choices(
            "unassigned", [("", "No")] + [(role, f"No {ROLE_LABELS[role].lower()} yet") for role in ROLES]
        )
        self._choices("assignee", [("", "Anyone")] + [(str(pk), name) for pk, name in users])

    def _choices(self, name: str, choices: list[tuple[str, str]]) -> None:
        field = self.fields[name]
        assert isinstance(field, forms.ChoiceField)
        field.choices = choices

    def filters(self) -> AssignmentFilters:
        """The valid values as filters; an invalid one is left out (never an error on a GET)."""
        self.is_valid()
        cleaned = {name: value for name, value in getattr(self, "cleaned_data", {}).items()}
        for name in self.errors:
            cleaned.pop(name, None)
        return AssignmentFilters(
            search=(cleaned.get("q") or "").strip(),
            source_id=cleaned.get("source"),
            status=cleaned.get("status") or "",
            domain=cleaned.get("domain") or "",
            language=cleaned.get("language") or "",
            unassigned=cleaned.get("unassigned") or "",
            assignee_id=cleaned.get("assignee"),
        )


class AssignmentActionForm(forms.Form):
    """Assign (one user: all to them; several, or everyone holding the role: evenly, round robin in problem-id
    order) or unassign, the ticked problems or every matching one: ``do`` is ``<action>_<scope>``, the button
    pressed."""

    do = forms.ChoiceField(choices=[(f"{a}_{s}", f"{a} {s}") for a in ACTIONS for s in SCOPES])
    role = forms.ChoiceField(choices=[(role, ROLE_LABELS[role]) for role in ROLES])
    user = forms.TypedMultipleChoiceField(required=False, coerce=int)
    everyone = forms.BooleanField(required=False)
    due_date = forms.DateField(required=False)

    def __init__(self, data: Any = None, *, user_ids: list[int], ticked: list[int]) -> None:
        super().__init__(data)
        field = self.fields["user"]
        assert isinstance(field, forms.ChoiceField)
        field.choices = [(str(pk), str(pk)) for pk in user_ids]
        self.ticked = (
            ticked  # the problems ticked (primary keys), read by the view from the repeated ``problem``
        )

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        action, _, scope = (cleaned.get("do") or "").partition("_")
        cleaned["action"], cleaned["scope"] = action, scope
        if scope == "selected" and not self.ticked:
            raise forms.ValidationError(
                "Tick at least one problem, or act on every problem matching the filter.",
                code="problems_required",
            )
        if action == "assign" and not (cleaned.get("user") or cleaned.get("everyone")):
            raise forms.ValidationError(
                "Choose whom to assign: one user, several, or everyone holding the role.",
                code="assignee_required",
            )
        return cleaned


class AssignmentStrictForm(forms.Form):
    source = forms.IntegerField(min_value=1)
    strict = forms.TypedChoiceField(choices=[("1", "strict"), ("0", "open")], coerce=lambda v: v == "1")

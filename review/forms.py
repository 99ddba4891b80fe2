"""The review pages' POSTs as Django Forms. Field names are the templates'; each form reads the request into
what one service takes (``BlindAnswerIn``, ``DecisionIn``, …) and nothing more: the services check every rule
and word every refusal, as they do for the API, so the pages show the same messages either way.

Text fields keep their input as typed (the services strip where a rule says so); a checkbox counts as
ticked only with the value a browser sends for a plain checkbox, ``on``.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import NON_FIELD_ERRORS

from physalign_site.params import MAX_INT

from . import services
from .models import CONFIRMATIONS, SIGNOFF_CONFIRMATIONS


class TickBox(forms.CheckboxInput):
    """Ticked exactly when the browser sent ``on`` (what the pages have always read)."""

    def value_from_datadict(self, data: Any, files: Any, name: str) -> bool:
        return bool(data.get(name) == "on")


def _ticked(**kwargs: Any) -> forms.BooleanField:
    return forms.BooleanField(required=False, widget=TickBox, **kwargs)


def _text(**kwargs: Any) -> forms.CharField:
    return forms.CharField(required=False, strip=False, **kwargs)


def _object_id() -> forms.IntegerField:
    """A row id from a hidden field or a select: blank → None; an id no row has → the view's 404."""
    return forms.IntegerField(required=False, max_value=MAX_INT)


def first_error(form: forms.Form) -> str:
    """One sentence for the page's message line (a form only refuses what no service could store)."""
    for field, errors in form.errors.items():
        label = "" if field == NON_FIELD_ERRORS else f"{field}: "
        return f"{label}{errors[0]}"
    return "The form is invalid."


class ClaimForm(forms.Form):
    role = _text()
    context = _text()


class BlindOrderForm(forms.Form):
    context = _text()
    blind_order = _text()


class BlindAnswerForm(forms.Form):
    """The blind answer: candidate IDs (comma or semicolon separated), one reading per read anchor of the
    probe's public contract (``read_<anchor>``), or "cannot be answered uniquely" with a reason."""

    binding = _text()
    cannot_answer = _ticked()
    reason = _text()

    def __init__(self, *args: Any, read_anchor_ids: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.read_anchor_ids = list(read_anchor_ids)
        for anchor in self.read_anchor_ids:
            self.fields[f"read_{anchor}"] = _text()

    def answer(self) -> services.BlindAnswerIn:
        data = self.cleaned_data
        return services.BlindAnswerIn(
            binding=data["binding"].replace(";", ",").split(","),
            read={anchor: data[f"read_{anchor}"] for anchor in self.read_anchor_ids},
            cannot_answer=data["cannot_answer"],
            reason=data["reason"],
        )


class DecisionForm(forms.Form):
    """A decision on the revealed probe (primary, secondary or adjudicator): status from the button pressed,
    severity, the six confirmations (``confirm_<key>``), the packet decision and a note."""

    status = _text()
    severity = _text()
    packet_state = _text()
    packet_empty_reason = _text()
    note = _text()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for key, _ in CONFIRMATIONS:
            self.fields[f"confirm_{key}"] = _ticked()

    def decision(self) -> services.DecisionIn:
        data = self.cleaned_data
        return services.DecisionIn(
            status=data["status"],
            severity=data["severity"],
            confirmations={key: data[f"confirm_{key}"] for key, _ in CONFIRMATIONS},
            packet_state=data["packet_state"],
            packet_empty_reason=data["packet_empty_reason"],
            note=data["note"],
        )


class AuditActionForm(forms.Form):
    """On a campaign page: draw the next round's plan, or record the assessment of ``plan``."""

    action = _text()
    plan = _object_id()


class SignoffForm(forms.Form):
    """Sign off (``mode``, an accepted ``assessment`` for audit mode, the release confirmations, evidence), or
    ``action=export`` a signed-off release."""

    action = _text()
    signoff = _object_id()
    mode = _text()
    assessment = _object_id()
    evidence_ref = _text()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for key, _ in SIGNOFF_CONFIRMATIONS:
            self.fields[f"confirm_{key}"] = _ticked()

    def confirmations(self) -> dict[str, bool]:
        return {key: self.cleaned_data[f"confirm_{key}"] for key, _ in SIGNOFF_CONFIRMATIONS}


class KitUploadForm(forms.Form):
    """A Kit draft (``action=draft``) or a Kit decisions file; the services read and judge the bytes."""

    action = _text()
    file = forms.FileField(required=False, allow_empty_file=True, widget=forms.FileInput)

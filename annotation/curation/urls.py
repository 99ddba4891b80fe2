"""Curation: reconciling the two annotations of a pass record by record into one curated document."""

from django.urls import path

from ..converters import PassNumberConverter  # noqa: F401 (registers <pass_no:…>)
from . import views
from .api import CurationApi

app_name = "curation"

urlpatterns = [
    path("problems/<str:problem_id>/passes/<pass_no:pass_no>/curate/", views.curate, name="curate"),
    path(
        "problems/<str:problem_id>/passes/<pass_no:pass_no>/curations/<int:curation_id>/",
        views.result,
        name="result",
    ),
    path(
        "api/parents/<str:problem_id>/passes/<pass_no:pass_no>/curation/", CurationApi.as_view(), name="api"
    ),
]

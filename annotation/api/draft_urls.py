"""API routes for LLM drafts (namespace ``drafts_api``)."""

from django.urls import path

from ..converters import PassNumberConverter  # noqa: F401 (registers <pass_no:…>)
from . import drafts as api

app_name = "drafts_api"

urlpatterns = [
    path(
        "parents/<str:problem_id>/passes/<pass_no:pass_no>/drafts/",
        api.DraftListApi.as_view(),
        name="parent_drafts",
    ),
    path("drafts/<int:draft_id>/", api.DraftDetailApi.as_view(), name="draft_detail"),
    path("drafts/<int:draft_id>/accept/", api.DraftAcceptApi.as_view(), name="draft_accept"),
    path("drafts/<int:draft_id>/discard/", api.DraftDiscardApi.as_view(), name="draft_discard"),
    path("draft-runs/<int:run_id>/", api.DraftRunDetailApi.as_view(), name="draft_run"),
]

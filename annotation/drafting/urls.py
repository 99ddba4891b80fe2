"""Pages for LLM drafts (the API routes are annotation/api/draft_urls.py)."""

from django.urls import path

from ..converters import PassNumberConverter  # noqa: F401 (registers <pass_no:…>)
from . import views

app_name = "drafts"

urlpatterns = [
    path("drafts/", views.draft_home, name="home"),
    path("drafts/runs/<int:run_id>/", views.draft_run_detail, name="run_detail"),
    path("problems/<str:problem_id>/passes/<pass_no:pass_no>/drafts/", views.draft_review, name="review"),
    path("problems/<str:problem_id>/passes/<pass_no:pass_no>/drafts/start", views.draft_start, name="start"),
    path("drafts/<int:draft_id>/accept", views.draft_accept_view, name="accept"),
    path("drafts/<int:draft_id>/discard", views.draft_discard_view, name="discard"),
]

"""Pages and API routes for LLM drafts (included from physalign_site/urls.py)."""

from django.urls import path

from . import drafting_views as views
from .api import drafts as api

app_name = "drafts"

urlpatterns = [
    path("drafts/", views.draft_home, name="home"),
    path("drafts/runs/<int:run_id>/", views.draft_run_detail, name="run_detail"),
    path("problems/<str:problem_id>/passes/<int:pass_no>/drafts/", views.draft_review, name="review"),
    path("problems/<str:problem_id>/passes/<int:pass_no>/drafts/start", views.draft_start, name="start"),
    path("drafts/<int:draft_id>/accept", views.draft_accept_view, name="accept"),
    path("drafts/<int:draft_id>/discard", views.draft_discard_view, name="discard"),
]

api_urlpatterns = [
    path("parents/<str:problem_id>/passes/<int:pass_no>/drafts/", api.ParentDraftsView.as_view(),
         name="parent_drafts"),
    path("drafts/<int:draft_id>/", api.DraftDetailView.as_view(), name="draft_detail"),
    path("drafts/<int:draft_id>/accept/", api.DraftAcceptView.as_view(), name="draft_accept"),
    path("drafts/<int:draft_id>/discard/", api.DraftDiscardView.as_view(), name="draft_discard"),
    path("draft-runs/<int:run_id>/", api.DraftRunView.as_view(), name="draft_run"),
]

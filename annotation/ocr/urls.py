"""Pages and API routes of annotation.ocr: the source-run page and the runs/proposals API."""

from django.urls import path

from . import api, views

app_name = "ocr"

urlpatterns = [
    path("ocr/runs/", views.ocr_runs, name="runs"),
    path(
        "api/parents/<str:problem_id>/ocr-runs/",
        api.ParentOcrRunCreateApi.as_view(),
        name="parent-run-create",
    ),
    path(
        "api/sources/<int:source_id>/ocr-runs/", api.SourceOcrRunCreateApi.as_view(), name="source-run-create"
    ),
    path("api/ocr-runs/<int:run_id>/", api.OcrRunDetailApi.as_view(), name="run-detail"),
    path(
        "api/parents/<str:problem_id>/ocr-proposals/", api.OcrProposalListApi.as_view(), name="proposal-list"
    ),
    path(
        "api/parents/<str:problem_id>/ocr-proposals/decide/",
        api.OcrProposalDecideApi.as_view(),
        name="proposal-decide",
    ),
]

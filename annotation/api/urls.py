from django.urls import path

from ..converters import PassNumberConverter  # noqa: F401 (registers <pass_no:…>)
from . import history, views

app_name = "annotation-api"

urlpatterns = [
    path("sources/", views.SourceListApi.as_view(), name="source-list"),
    path("sources/<int:source_id>/", views.SourceDetailApi.as_view(), name="source-detail"),
    path("parents/", views.ParentListApi.as_view(), name="parent-list"),
    path("parents/<str:problem_id>/", views.ParentDetailApi.as_view(), name="parent-detail"),
    path("parents/<str:problem_id>/passes/", views.PassListApi.as_view(), name="pass-list"),
    path(
        "parents/<str:problem_id>/passes/<pass_no:pass_no>/",
        views.PassDetailApi.as_view(),
        name="pass-detail",
    ),
    path(
        "parents/<str:problem_id>/passes/<pass_no:pass_no>/submit/",
        views.PassSubmitApi.as_view(),
        name="pass-submit",
    ),
    path(
        "parents/<str:problem_id>/passes/<pass_no:pass_no>/approve/",
        views.PassApproveApi.as_view(),
        name="pass-approve",
    ),
    path(
        "parents/<str:problem_id>/passes/<pass_no:pass_no>/reject/",
        views.PassRejectApi.as_view(),
        name="pass-reject",
    ),
    path(
        "parents/<str:problem_id>/passes/<pass_no:pass_no>/versions/",
        history.PassVersionListApi.as_view(),
        name="pass-version-list",
    ),
    path(
        "parents/<str:problem_id>/passes/<pass_no:pass_no>/versions/<int:version>/",
        history.PassVersionDetailApi.as_view(),
        name="pass-version-detail",
    ),
    path(
        "parents/<str:problem_id>/passes/<pass_no:pass_no>/versions/<int:version>/revert/",
        history.PassRevertApi.as_view(),
        name="pass-revert",
    ),
    path(
        "parents/<str:problem_id>/passes/<pass_no:pass_no>/diff/",
        history.PassDiffApi.as_view(),
        name="pass-diff",
    ),
    path("imports/", views.ImportCreateApi.as_view(), name="import-create"),
    path("imports/<int:job_id>/", views.ImportDetailApi.as_view(), name="import-detail"),
    path(
        "kit-workspace-exports/", views.WorkspaceExportCreateApi.as_view(), name="kit-workspace-export-create"
    ),
    path(
        "kit-workspace-exports/<int:job_id>/",
        views.WorkspaceExportDetailApi.as_view(),
        name="kit-workspace-export-detail",
    ),
    path(
        "kit-workspace-exports/<int:job_id>/download",
        views.WorkspaceExportDownloadApi.as_view(),
        name="kit-workspace-export-download",
    ),
]

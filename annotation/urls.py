from django.urls import path

from . import views
from .converters import PassNumberConverter  # noqa: F401 (registers <pass_no:…>: passes 1–5 only)

app_name = "annotation"

urlpatterns = [
    path("problems/", views.problem_list, name="problem_list"),
    path("source-review/", views.source_queue, name="source_queue"),
    path("problems/<str:problem_id>/", views.problem_detail, name="problem_detail"),
    path("problems/<str:problem_id>/images/<str:image_id>", views.image_file, name="image_file"),
    path("problems/<str:problem_id>/passes/<pass_no:pass_no>/", views.pass_workspace, name="pass_workspace"),
    path("problems/<str:problem_id>/passes/<pass_no:pass_no>/review/", views.pass_review, name="pass_review"),
    path(
        "problems/<str:problem_id>/passes/<pass_no:pass_no>/history/", views.pass_history, name="pass_history"
    ),
    path(
        "problems/<str:problem_id>/passes/<pass_no:pass_no>/history/<int:version>/revert/",
        views.pass_revert,
        name="pass_revert",
    ),
    path("imports/", views.import_list, name="import_list"),
    path("imports/<int:job_id>/", views.import_detail, name="import_detail"),
    path("exports/kit-workspace/", views.export_list, name="export_list"),
    path("exports/kit-workspace/<int:job_id>/", views.export_detail, name="export_detail"),
    path("exports/kit-workspace/<int:job_id>/download", views.export_download, name="export_download"),
]

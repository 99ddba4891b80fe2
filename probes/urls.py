from django.urls import path

from . import release_views, views

app_name = "probes"

urlpatterns = [
    path("compile/", views.run_list, name="run_list"),
    path("compile/<int:run_id>/", views.run_detail, name="run_detail"),
    path("probes/", views.probe_browser, name="probe_list"),
    path("probes/<str:logical_probe_id>/", views.probe_detail, name="probe_detail"),
    path(
        "probes/<str:logical_probe_id>/attachments/<str:asset_id>",
        views.probe_attachment,
        name="probe_attachment",
    ),
    path("releases/", views.release_list, name="release_list"),
    path("releases/<str:release_id>/", release_views.release_detail, name="release_detail"),
    path("releases/<str:release_id>/zip/", release_views.release_zip, name="release_zip"),
    path("releases/<str:release_id>/download/", release_views.release_download, name="release_download"),
    path("releases/<str:release_id>/hf/", release_views.release_hf, name="release_hf"),
    path(
        "releases/<str:release_id>/hf/download/",
        release_views.release_hf_download,
        name="release_hf_download",
    ),
]

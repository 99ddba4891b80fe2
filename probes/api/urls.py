from django.urls import path

from . import views

app_name = "probes-api"

urlpatterns = [
    path("compile-runs/", views.CompileRunListApi.as_view(), name="compile-run-list"),
    path("compile-runs/<int:run_id>/", views.CompileRunDetailApi.as_view(), name="compile-run-detail"),
    path("probes/", views.ProbeListApi.as_view(), name="probe-list"),
    path("probes/<str:logical_probe_id>/", views.ProbeDetailApi.as_view(), name="probe-detail"),
    path("releases/", views.ReleaseListApi.as_view(), name="release-list"),
    path("releases/<str:release_id>/", views.ReleaseDetailApi.as_view(), name="release-detail"),
    path("releases/<str:release_id>/probes/", views.ReleaseProbesApi.as_view(), name="release-probes"),
    path("releases/<str:release_id>/private/", views.ReleasePrivateApi.as_view(), name="release-private"),
    path("releases/<str:release_id>/zip/", views.ReleaseZipApi.as_view(), name="release-zip"),
]

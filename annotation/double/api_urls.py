from django.urls import path

from ..converters import PassNumberConverter  # noqa: F401 (registers <pass_no:…>)
from . import api

app_name = "double-api"

urlpatterns = [
    path("double-annotation-samples/", api.SampleListApi.as_view(), name="samples"),
    path(
        "parents/<str:problem_id>/independent/passes/<pass_no:pass_no>/",
        api.IndependentPassApi.as_view(),
        name="pass",
    ),
    path(
        "parents/<str:problem_id>/independent/passes/<pass_no:pass_no>/submit/",
        api.IndependentPassSubmitApi.as_view(),
        name="pass-submit",
    ),
]

from django.urls import path

from ..converters import PassNumberConverter  # noqa: F401 (registers <pass_no:…>)
from . import views

app_name = "double"

urlpatterns = [
    path("double-annotation/", views.samples, name="samples"),
    path("independent/", views.my_work, name="work"),
    path("problems/<str:problem_id>/independent/", views.problem, name="problem"),
    path(
        "problems/<str:problem_id>/independent/passes/<pass_no:pass_no>/", views.workspace, name="workspace"
    ),
]

"""Pages of annotation.agreement: the summary, a pair of annotators' page per pass, their CSVs, the JSON."""

from django.urls import path

from . import views
from .api import AgreementApi

app_name = "agreement"

urlpatterns = [
    path("agreement/", views.summary, name="summary"),
    path("agreement/<slug:table>.csv", views.summary_csv, name="summary_csv"),
    path("agreement/pairs/<int:first_id>-<int:second_id>/passes/<int:pass_no>/", views.pair, name="pair"),
    path(
        "agreement/pairs/<int:first_id>-<int:second_id>/passes/<int:pass_no>.csv",
        views.pair_csv,
        name="pair_csv",
    ),
    path("api/agreement/", AgreementApi.as_view(), name="api"),
]

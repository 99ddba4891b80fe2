"""Pages of annotation.analytics: the admins' analytics page and its tables as CSV."""

from django.urls import path

from . import views

app_name = "analytics"

urlpatterns = [
    path("analytics/annotation/", views.overview, name="overview"),
    path("analytics/annotation/<slug:table>.csv", views.table_csv, name="csv"),
]

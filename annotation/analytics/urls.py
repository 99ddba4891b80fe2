"""Pages of annotation.analytics: the admins' analytics page, its tables as CSV, and the same figures as JSON."""

from django.urls import path

from . import views
from .api import AnnotationAnalyticsApi

app_name = "analytics"

urlpatterns = [
    path("analytics/annotation/", views.overview, name="overview"),
    path("analytics/annotation/<slug:table>.csv", views.table_csv, name="csv"),
    path("api/annotation-analytics/", AnnotationAnalyticsApi.as_view(), name="api"),
]

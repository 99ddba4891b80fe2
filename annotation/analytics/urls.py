"""Pages and API routes of annotation.analytics (filled in by its feature)."""

from django.urls import path  # noqa: F401

app_name = "analytics"

urlpatterns: list = []

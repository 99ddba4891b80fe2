"""Pages and API routes of annotation.physics (filled in by its feature)."""

from django.urls import path  # noqa: F401

app_name = "physics"

urlpatterns: list = []

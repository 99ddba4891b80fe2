"""Pages and API routes of annotation.ocr (filled in by its feature)."""

from django.urls import path  # noqa: F401

app_name = "ocr"

urlpatterns: list = []

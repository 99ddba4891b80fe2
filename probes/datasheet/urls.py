"""The release datasheet's downloads; the datasheet itself is a section of the release page."""

from django.urls import path

from . import views

app_name = "datasheet"

urlpatterns = [
    path("releases/<str:release_id>/datasheet.csv", views.datasheet_csv, name="csv"),
    path("releases/<str:release_id>/datasheet.json", views.datasheet_json, name="json"),
]

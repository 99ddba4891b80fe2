"""Assignment of problems to annotators and source reviewers: the admins' page and API."""

from django.urls import path

from . import api, views

app_name = "assignments"

urlpatterns = [
    path("assignments/", views.assignments, name="page"),
    path("api/assignments/", api.AssignmentListApi.as_view(), name="api-list"),
    path("api/assignments/<int:assignment_id>/", api.AssignmentDetailApi.as_view(), name="api-detail"),
    path("api/sources/<int:source_id>/assignment/", api.SourceAssignmentApi.as_view(), name="api-source"),
]

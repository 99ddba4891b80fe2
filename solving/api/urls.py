from django.urls import path

from . import debate_views, views

urlpatterns = [
    path("debate/runs/", debate_views.DebateRunListView.as_view(), name="debate_run_list"),
    path("debate/runs/<int:pk>/", debate_views.DebateRunDetailView.as_view(), name="debate_run_detail"),
    path(
        "debate/responses/<int:pk>/transcript/",
        debate_views.DebateTranscriptView.as_view(),
        name="debate_transcript",
    ),
    path("solve/runs/", views.SolveRunListView.as_view(), name="solve_run_list"),
    path("solve/runs/<int:pk>/", views.SolveRunDetailView.as_view(), name="solve_run_detail"),
    path(
        "solve/responses/<int:pk>/grade/", views.SolveResponseGradeView.as_view(), name="solve_response_grade"
    ),
]

from django.urls import path

from . import views

urlpatterns = [
    path("solve/runs/", views.SolveRunListApi.as_view(), name="solve_run_list"),
    path("solve/runs/<int:pk>/", views.SolveRunDetailApi.as_view(), name="solve_run_detail"),
    path(
        "solve/responses/<int:pk>/grade/", views.SolveResponseGradeApi.as_view(), name="solve_response_grade"
    ),
    path("debate/runs/", views.DebateRunListApi.as_view(), name="debate_run_list"),
    path("debate/runs/<int:pk>/", views.DebateRunDetailApi.as_view(), name="debate_run_detail"),
    path(
        "debate/responses/<int:pk>/transcript/",
        views.DebateTranscriptDetailApi.as_view(),
        name="debate_transcript",
    ),
]

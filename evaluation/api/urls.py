from django.urls import path

from . import views

urlpatterns = [
    path("eval/runs/", views.EvalRunListView.as_view(), name="eval_run_list"),
    path("eval/runs/<int:pk>/", views.EvalRunDetailView.as_view(), name="eval_run_detail"),
]

from . import debate_views  # noqa: E402 — debate runs API (admins)

urlpatterns += [
    path("debate/runs/", debate_views.DebateRunListView.as_view(), name="debate_run_list"),
    path("debate/runs/<int:pk>/", debate_views.DebateRunDetailView.as_view(), name="debate_run_detail"),
    path("debate/responses/<int:pk>/transcript/", debate_views.DebateTranscriptView.as_view(),
         name="debate_transcript"),
]

from . import solve_views  # noqa: E402 — solving runs API (admins)

urlpatterns += [
    path("solve/runs/", solve_views.SolveRunListView.as_view(), name="solve_run_list"),
    path("solve/runs/<int:pk>/", solve_views.SolveRunDetailView.as_view(), name="solve_run_detail"),
    path("solve/responses/<int:pk>/grade/", solve_views.SolveResponseGradeView.as_view(), name="solve_response_grade"),
]

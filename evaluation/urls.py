from django.urls import path

from . import views

app_name = "evaluation"

urlpatterns = [
    path("runs/", views.run_list, name="run_list"),
    path("runs/<int:pk>/", views.run_detail, name="run_detail"),
    path("runs/<int:pk>/progress/", views.run_progress_fragment, name="run_progress"),
    path("runs/<int:pk>/items/", views.run_items_page, name="run_items"),
    path("runs/<int:pk>/download/<str:fmt>/", views.run_download, name="run_download"),
    path("runs/<int:pk>/do/<str:action>/", views.run_action, name="run_action"),
    path("eval-requests/<int:pk>/", views.request_detail, name="request_detail"),
]

from . import debate_views  # noqa: E402 — debate pages (admins), kept apart from the evaluation-run pages

urlpatterns += [
    path("debate/", debate_views.debate_run_list, name="debate_run_list"),
    path("debate/runs/<int:pk>/", debate_views.debate_run_detail, name="debate_run_detail"),
    path("debate/runs/<int:pk>/progress/", debate_views.debate_run_progress, name="debate_run_progress"),
    path("debate/responses/<int:pk>/", debate_views.debate_transcript, name="debate_transcript"),
    path("debate/compare/", debate_views.debate_compare, name="debate_compare"),
]

from . import solve_views  # noqa: E402 — solving runs and expert grading (admins)

urlpatterns += [
    path("solve-runs/", solve_views.solve_run_list, name="solve_run_list"),
    path("solve-runs/<int:pk>/", solve_views.solve_run_detail, name="solve_run_detail"),
    path("solve-runs/<int:pk>/progress/", solve_views.solve_run_progress, name="solve_run_progress"),
    path("solve-runs/<int:pk>/do/<str:action>/", solve_views.solve_run_action, name="solve_run_action"),
    path("solve-runs/responses/<int:pk>/", solve_views.solve_response_detail, name="solve_response_detail"),
    path("solve-runs/responses/<int:pk>/grade/", solve_views.solve_response_grade_page, name="solve_response_grade"),
]

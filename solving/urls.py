from django.urls import path

from . import debate_views, views

app_name = "solving"

urlpatterns = [
    path("debate/", debate_views.debate_run_list, name="debate_run_list"),
    path("debate/runs/<int:pk>/", debate_views.debate_run_detail, name="debate_run_detail"),
    path("debate/runs/<int:pk>/progress/", debate_views.debate_run_progress, name="debate_run_progress"),
    path("debate/responses/<int:pk>/", debate_views.debate_transcript, name="debate_transcript"),
    path("debate/compare/", debate_views.debate_compare, name="debate_compare"),
    path("solve-runs/", views.solve_run_list, name="solve_run_list"),
    path("solve-runs/<int:pk>/", views.solve_run_detail, name="solve_run_detail"),
    path("solve-runs/<int:pk>/progress/", views.solve_run_progress, name="solve_run_progress"),
    path("solve-runs/<int:pk>/do/<str:action>/", views.solve_run_action, name="solve_run_action"),
    path("solve-runs/responses/<int:pk>/", views.solve_response_detail, name="solve_response_detail"),
    path(
        "solve-runs/responses/<int:pk>/grade/", views.solve_response_grade_page, name="solve_response_grade"
    ),
]

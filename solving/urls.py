from django.urls import path

from . import views

app_name = "solving"

SINGLE, DEBATE = {"kind": "single"}, {"kind": "debate"}

urlpatterns = [
    path("solve-runs/", views.run_list, SINGLE, name="solve_run_list"),
    path("solve-runs/<int:pk>/", views.run_detail, SINGLE, name="solve_run_detail"),
    path("solve-runs/<int:pk>/progress/", views.run_progress, SINGLE, name="solve_run_progress"),
    path("solve-runs/<int:pk>/do/<str:action>/", views.run_action, name="solve_run_action"),
    path("solve-runs/responses/<int:pk>/", views.response_detail, SINGLE, name="solve_response_detail"),
    path("solve-runs/responses/<int:pk>/grade/", views.response_grade, name="solve_response_grade"),
    path("debate/", views.run_list, DEBATE, name="debate_run_list"),
    path("debate/runs/<int:pk>/", views.run_detail, DEBATE, name="debate_run_detail"),
    path("debate/runs/<int:pk>/progress/", views.run_progress, DEBATE, name="debate_run_progress"),
    path("debate/responses/<int:pk>/", views.response_detail, DEBATE, name="debate_transcript"),
    path("debate/compare/", views.run_compare, name="debate_compare"),
]

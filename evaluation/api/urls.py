from django.urls import path

from . import views

urlpatterns = [
    path("eval/runs/", views.EvalRunListView.as_view(), name="eval_run_list"),
    path("eval/runs/<int:pk>/", views.EvalRunDetailView.as_view(), name="eval_run_detail"),
]

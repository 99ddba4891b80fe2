from django.urls import path

from . import views

urlpatterns = [
    path("eval/runs/", views.EvalRunListApi.as_view(), name="eval_run_list"),
    path("eval/runs/<int:pk>/", views.EvalRunDetailApi.as_view(), name="eval_run_detail"),
]

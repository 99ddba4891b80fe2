from django.urls import path

from . import views

urlpatterns = [
    path("models/", views.ModelConfigListView.as_view(), name="model_list"),
    path("models/<slug:name>/", views.ModelConfigDetailView.as_view(), name="model_detail"),
    path("eval/runs/", views.EvalRunListView.as_view(), name="eval_run_list"),
    path("eval/runs/<int:pk>/", views.EvalRunDetailView.as_view(), name="eval_run_detail"),
]

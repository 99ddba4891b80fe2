from django.urls import path

from . import views

app_name = "evaluation"

urlpatterns = [
    path("models/", views.model_list, name="model_list"),
]

from django.urls import path

from . import views

app_name = "models_registry"

urlpatterns = [
    path("models/", views.model_list, name="model_list"),
]

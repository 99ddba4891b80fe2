from django.urls import path

from . import views

app_name = "annotation"

urlpatterns = [
    path("", views.problem_list, name="problem_list"),
]

from django.urls import path

from . import views

app_name = "annotation"

urlpatterns = [
    path("", views.problem_list, name="problem_list"),
    path("problems/<str:problem_id>/", views.problem_detail, name="problem_detail"),
    path("problems/<str:problem_id>/images/<str:image_id>", views.image_file, name="image_file"),
    path("imports/", views.import_list, name="import_list"),
    path("imports/<int:job_id>/", views.import_detail, name="import_detail"),
]

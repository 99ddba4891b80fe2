from django.urls import path

from . import views

app_name = "evaluation"

urlpatterns = [
    path("runs/", views.run_list, name="run_list"),
    path("runs/preview/", views.run_preview, name="run_preview"),
    path("runs/<int:pk>/", views.run_detail, name="run_detail"),
    path("runs/<int:pk>/progress/", views.run_progress_fragment, name="run_progress"),
    path("runs/<int:pk>/items/", views.run_items_page, name="run_items"),
    path("runs/<int:pk>/download/<str:fmt>/", views.run_download, name="run_download"),
    path("runs/<int:pk>/do/<str:action>/", views.run_action, name="run_action"),
    path("eval-requests/<int:pk>/", views.request_detail, name="request_detail"),
]

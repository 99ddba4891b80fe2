from django.urls import path

from . import views

urlpatterns = [
    path("models/", views.ModelConfigListView.as_view(), name="model_list"),
    path("models/<slug:name>/", views.ModelConfigDetailView.as_view(), name="model_detail"),
]

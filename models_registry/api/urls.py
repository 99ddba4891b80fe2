from django.urls import path

from . import views

urlpatterns = [
    path("models/", views.ModelConfigListApi.as_view(), name="model_list"),
    path("models/<slug:name>/", views.ModelConfigDetailApi.as_view(), name="model_detail"),
]

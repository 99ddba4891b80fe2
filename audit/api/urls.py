from django.urls import path

from . import views

urlpatterns = [
    path("events/", views.EventListApi.as_view(), name="event-list"),
]

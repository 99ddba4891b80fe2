"""Pages and API routes of annotation.physics: the rule table and its blocking settings."""

from django.urls import path

from . import views

app_name = "physics"

urlpatterns = [
    path("physics-rules/", views.physics_rules, name="rules"),
    path("api/physics-rules/", views.PhysicsRuleListApi.as_view(), name="rule-list-api"),
    path("api/physics-rules/<str:code>/", views.PhysicsRuleDetailApi.as_view(), name="rule-detail-api"),
]

from django.urls import path

from . import views

app_name = "review-api"

urlpatterns = [
    path("review/queue/", views.QueueApi.as_view(), name="queue"),
    path("review/slots/<int:slot_id>/", views.SlotApi.as_view(), name="slot"),
    path("review/slots/<int:slot_id>/release/", views.SlotReleaseApi.as_view(), name="slot_release"),
    path("review/blind-order/", views.BlindOrderApi.as_view(), name="blind_order"),
    path(
        "review/slots/<int:slot_id>/probes/<str:logical_probe_id>/",
        views.ProbePublicApi.as_view(),
        name="probe",
    ),
    path(
        "review/slots/<int:slot_id>/probes/<str:logical_probe_id>/blind/",
        views.BlindApi.as_view(),
        name="blind",
    ),
    path(
        "review/slots/<int:slot_id>/probes/<str:logical_probe_id>/target/",
        views.TargetApi.as_view(),
        name="target",
    ),
    path(
        "review/slots/<int:slot_id>/probes/<str:logical_probe_id>/decision/",
        views.DecisionApi.as_view(),
        name="decision",
    ),
    path("review/agreement/", views.AgreementApi.as_view(), name="agreement"),
    path("review/campaigns/", views.CampaignListApi.as_view(), name="campaigns"),
    path("review/campaigns/<int:campaign_pk>/plans/", views.PlanCreateApi.as_view(), name="plans"),
    path("review/plans/<int:plan_pk>/", views.PlanApi.as_view(), name="plan"),
    path("review/plans/<int:plan_pk>/assess/", views.AssessApi.as_view(), name="assess"),
    path("review/signoffs/", views.SignoffApi.as_view(), name="signoffs"),
    path(
        "review/kit-drafts/<str:catalog_root>/decisions/",
        views.KitDecisionsExportApi.as_view(),
        name="kit_decisions_export",
    ),
]

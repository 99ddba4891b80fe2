from django.urls import path

from . import views, views_media

app_name = "review"

urlpatterns = [
    path("review/", views.queue, name="queue"),
    path("review/claim/", views.claim, name="claim"),
    path("review/blind-order/", views.blind_order, name="blind_order"),
    path("review/slots/<int:slot_id>/release/", views.release, name="release"),
    path("review/slots/<int:slot_id>/", views.slot_detail, name="slot"),
    path("review/slots/<int:slot_id>/probes/<str:logical_probe_id>/", views.probe_blind, name="probe"),
    path(
        "review/slots/<int:slot_id>/probes/<str:logical_probe_id>/target/", views.probe_target, name="target"
    ),
    path(
        "review/slots/<int:slot_id>/probes/<str:logical_probe_id>/attachments/<str:asset_id>",
        views.attachment,
        name="attachment",
    ),
    path(
        "review/slots/<int:slot_id>/probes/<str:logical_probe_id>/originals/<str:image_id>",
        views_media.parent_image,
        name="parent_image",
    ),
    path("review/agreement/", views.agreement, name="agreement"),
    path("review/audit/", views.audit_list, name="audit_list"),
    path("review/audit/<int:campaign_pk>/", views.audit_detail, name="audit_detail"),
    path("review/signoff/", views.signoff, name="signoff"),
    path("review/accounting/", views.accounting, name="accounting"),
    path("review/kit-decisions/", views.kit_decisions, name="kit_decisions"),
    path("review/kit-decisions/export/", views.kit_decisions_download, name="kit_decisions_download"),
]

from django.contrib import admin

from .models import Event


@admin.register(Event)
class EventAdmin(admin.ModelAdmin):
    """Read-only: the audit trail is append-only."""

    list_display = ["at", "actor", "verb", "object_type", "object_id"]
    list_filter = ["verb", "object_type"]
    search_fields = ["object_id"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

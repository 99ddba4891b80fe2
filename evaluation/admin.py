from django.contrib import admin

from .models import ModelConfig


@admin.register(ModelConfig)
class ModelConfigAdmin(admin.ModelAdmin):
    list_display = ("name", "provider", "model", "price_in_per_mtok", "price_out_per_mtok", "requests_per_minute",
                    "max_concurrency", "is_active")
    list_filter = ("provider", "is_active", "image_policy")
    search_fields = ("name", "model", "base_url")
    readonly_fields = ("created_at", "updated_at")
    fieldsets = (
        (None, {"fields": ("name", "provider", "model", "base_url", "api_key_env", "is_active")}),
        ("Generation", {"fields": ("max_output_tokens", "temperature", "reasoning", "image_policy", "extra")}),
        ("Cost and limits", {"fields": ("price_in_per_mtok", "price_out_per_mtok", "requests_per_minute",
                                        "max_concurrency", "timeout_seconds", "max_retries")}),
        ("Record", {"fields": ("created_at", "updated_at")}),
    )

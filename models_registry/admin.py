from django import forms
from django.contrib import admin

from physalign_site.errors import ApplicationError

from .models import ModelConfig
from .services import EDITABLE_FIELDS, model_config_check


class ModelConfigForm(forms.ModelForm):
    """The admin site saves through the same rules as the API and ``add_model`` (key variable, base URL,
    bounds), so a row written here cannot leak a secret either."""

    class Meta:
        model = ModelConfig
        fields = ("name", *EDITABLE_FIELDS)

    def _post_clean(self) -> None:
        super()._post_clean()  # type: ignore[misc]  # Django's private hook, absent from django-stubs
        try:
            model_config_check(self.instance)
        except ApplicationError as error:
            self.add_error(None, error.message)


@admin.register(ModelConfig)
class ModelConfigAdmin(admin.ModelAdmin):
    form = ModelConfigForm
    list_display = (
        "name",
        "provider",
        "model",
        "price_in_per_mtok",
        "price_out_per_mtok",
        "requests_per_minute",
        "max_concurrency",
        "is_active",
    )
    list_filter = ("provider", "is_active", "image_policy")
    search_fields = ("name", "model", "base_url")
    readonly_fields = ("created_at", "updated_at")
    fieldsets = (
        (None, {"fields": ("name", "provider", "model", "base_url", "api_key_env", "is_active")}),
        (
            "Generation",
            {"fields": ("max_output_tokens", "temperature", "reasoning", "image_policy", "extra")},
        ),
        (
            "Cost and limits",
            {
                "fields": (
                    "price_in_per_mtok",
                    "price_out_per_mtok",
                    "requests_per_minute",
                    "max_concurrency",
                    "timeout_seconds",
                    "max_retries",
                )
            },
        ),
        ("Record", {"fields": ("created_at", "updated_at")}),
    )

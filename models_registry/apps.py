from django.apps import AppConfig


class ModelsRegistryConfig(AppConfig):
    name = "models_registry"
    verbose_name = "Model configurations"

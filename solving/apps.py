from django.apps import AppConfig


class SolvingConfig(AppConfig):
    name = "solving"
    verbose_name = "Solving and debate"

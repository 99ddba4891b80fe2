from django.apps import AppConfig


class PhysAlignSiteConfig(AppConfig):
    name = "physalign_site"
    verbose_name = "PhysAlign Studio"

    def ready(self) -> None:
        # Make our Celery app the current one in every Django process, so .delay() uses its broker.
        from . import celery  # noqa: F401

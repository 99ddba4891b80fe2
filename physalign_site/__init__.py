"""Project package. Kept import-free so that pure modules (``canonical``) load without Django or
Celery; the Celery app is loaded by ``PhysAlignSiteConfig.ready``."""

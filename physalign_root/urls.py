"""The root URLconf: the site's own URLs (``physalign_site.urls``), then every app's, API first."""

from django.urls import include, path

from annotation import urls as annotation_urls
from annotation.agreement import urls as annotation_agreement_urls
from annotation.analytics import urls as annotation_analytics_urls
from annotation.api import draft_urls as annotation_api_draft_urls
from annotation.api import urls as annotation_api_urls
from annotation.assignments import urls as annotation_assignments_urls
from annotation.curation import urls as annotation_curation_urls
from annotation.double import api_urls as annotation_double_api_urls
from annotation.double import urls as annotation_double_urls
from annotation.drafting import urls as annotation_drafting_urls
from annotation.ocr import urls as annotation_ocr_urls
from annotation.physics import urls as annotation_physics_urls
from audit.api import urls as audit_api_urls
from evaluation import urls as evaluation_urls
from evaluation.api import urls as evaluation_api_urls
from home import urls as home_urls
from models_registry import urls as models_registry_urls
from models_registry.api import urls as models_registry_api_urls
from physalign_site import urls as site_urls
from probes import urls as probes_urls
from probes.api import urls as probes_api_urls
from probes.datasheet import urls as probes_datasheet_urls
from review import urls as review_urls
from review.api import urls as review_api_urls
from solving import urls as solving_urls
from solving.api import urls as solving_api_urls

# a lost database connection met outside a view is a 503 with Retry-After too (physalign_site.middleware)
handler500 = "physalign_site.middleware.server_error"

urlpatterns = [
    path("", include(site_urls)),
    path("api/", include(audit_api_urls)),
    path("api/", include(models_registry_api_urls)),
    path("api/", include(annotation_api_urls)),
    path("api/", include(probes_api_urls)),
    path("api/", include(evaluation_api_urls)),
    path("api/", include(solving_api_urls)),
    path("api/", include(review_api_urls)),
    path("api/", include(annotation_api_draft_urls)),
    path("api/", include(annotation_double_api_urls)),
    path("", include(home_urls)),
    path("", include(models_registry_urls)),
    path("", include(evaluation_urls)),
    path("", include(solving_urls)),
    path("", include(annotation_drafting_urls)),
    path("", include(annotation_urls)),
    path("", include(annotation_physics_urls)),
    path("", include(annotation_ocr_urls)),
    path("", include(annotation_analytics_urls)),
    path("", include(annotation_assignments_urls)),
    path("", include(annotation_double_urls)),
    path("", include(annotation_agreement_urls)),
    path("", include(annotation_curation_urls)),
    path("", include(probes_datasheet_urls)),
    path("", include(probes_urls)),
    path("", include(review_urls)),
]

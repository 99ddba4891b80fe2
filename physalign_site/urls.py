"""The site's own URLs: admin, login and logout, the health check, the API schema, docs, token and ``me``.

The root URLconf (``physalign_root.urls``) puts these first and every app's after them; nothing here names
an app.
"""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from . import views
from .auth import ObtainAuthTokenApi

api_patterns = [
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    # A page for people: anonymous visitors go to the login page; the template gives the init script the CSP nonce.
    path(
        "docs/",
        login_required(
            SpectacularSwaggerView.as_view(
                url_name="api:schema", template_name="physalign_site/swagger_ui.html"
            )
        ),
        name="docs",
    ),
    path("auth/token/", ObtainAuthTokenApi.as_view(), name="token"),
    path("me/", views.MeView.as_view(), name="me"),
]

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("healthz", views.healthz, name="healthz"),
    path("api/", include((api_patterns, "api"), namespace="api")),
]

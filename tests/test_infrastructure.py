"""Deployment files, settings from the environment, security headers, migrations."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command

ROOT = Path(__file__).resolve().parent.parent


def _run_python(code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_URL", "CELERY_"))}
    base.update(env)
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=base, capture_output=True, text=True, timeout=120
    )


def _manage(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "CELERY_"))}
    base.update(env)
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=base, capture_output=True, text=True, timeout=120
    )


def test_compose_file_defines_services_healthchecks_volumes_and_env():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    assert set(services) == {"postgres", "redis", "web", "worker"}
    for name, service in services.items():
        assert "healthcheck" in service and service["healthcheck"]["test"], name
    assert services["postgres"]["volumes"] == ["pgdata:/var/lib/postgresql/data"]
    assert set(compose["volumes"]) == {"pgdata", "redisdata", "media", "backups"}
    # manage.py backup --output /app/var/backups/DATE
    assert "backups:/app/var/backups" in services["web"]["volumes"]
    for app in ("web", "worker"):
        svc = services[app]
        assert svc["env_file"] == ".env"
        assert svc["environment"]["DATABASE_URL"].startswith("postgres://physalign:")
        assert svc["environment"]["DATABASE_URL"].endswith("@postgres:5432/physalign")
        assert svc["environment"]["CELERY_BROKER_URL"] == "redis://redis:6379/0"
        assert "media:/app/var/media" in svc["volumes"]
        assert svc["depends_on"]["postgres"]["condition"] == "service_healthy"
        assert svc["depends_on"]["redis"]["condition"] == "service_healthy"
    assert "gunicorn" in services["web"]["command"]
    assert services["worker"]["command"][:3] == ["celery", "-A", "physalign_site.celery"]
    assert "/healthz" in " ".join(services["web"]["healthcheck"]["test"])


def test_compose_publishes_gunicorn_to_the_host_only_and_trusts_proxy_headers_only_when_told():
    """No proxy in the file: the port is for a proxy on the host, and DJANGO_BEHIND_PROXY comes from .env
    (default false), so a client reaching gunicorn cannot claim HTTPS through X-Forwarded-Proto."""
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    web = compose["services"]["web"]
    assert web["ports"] == ["127.0.0.1:8000:8000"]
    assert web["environment"]["DJANGO_BEHIND_PROXY"] == "${DJANGO_BEHIND_PROXY:-false}"
    assert "DJANGO_BEHIND_PROXY" not in compose["services"]["worker"]["environment"]  # serves no HTTP
    assert re.search(r"^DJANGO_BEHIND_PROXY=false$", (ROOT / ".env.example").read_text(), re.M)


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, "None"), ("false", "None"), ("true", "('HTTP_X_FORWARDED_PROTO', 'https')")],
)
def test_proxy_ssl_header_is_trusted_only_behind_a_proxy(value, expected):
    code = (
        "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='physalign_site.settings'; django.setup();"
        "from django.conf import settings as s; print(s.SECURE_PROXY_SSL_HEADER)"
    )
    env = {"DJANGO_SECRET_KEY": "x" * 60, **({"DJANGO_BEHIND_PROXY": value} if value is not None else {})}
    result = _run_python(code, env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == expected


@pytest.mark.django_db
def test_a_forwarded_proto_header_does_not_make_a_request_secure_by_default(client, settings):
    assert settings.SECURE_PROXY_SSL_HEADER is None
    settings.SECURE_SSL_REDIRECT = True
    response = client.get("/accounts/login/", headers={"X-Forwarded-Proto": "https"})
    assert response.status_code == 301 and response["Location"] == "https://testserver/accounts/login/"
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    assert client.get("/accounts/login/", headers={"X-Forwarded-Proto": "https"}).status_code == 200


def test_every_environment_variable_read_by_settings_is_documented():
    settings_src = (ROOT / "physalign_site" / "settings.py").read_text()
    read = set(re.findall(r'env\.\w+\("([A-Z_]+)"', settings_src)) | set(
        re.findall(r'Env\(\)\.\w+\("([A-Z_]+)"', settings_src)
    )
    documented = set(re.findall(r"^#?\s*([A-Z_][A-Z0-9_]+)=", (ROOT / ".env.example").read_text(), re.M))
    assert read, "settings read no variables?"
    assert read - documented == set()


def test_secret_key_is_required_when_debug_is_off():
    result = _run_python(
        "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='physalign_site.settings'; django.setup()",
        {"DJANGO_DEBUG": "0", "DJANGO_SECRET_KEY": ""},
    )
    assert result.returncode != 0
    assert "DJANGO_SECRET_KEY must be set when DJANGO_DEBUG is off" in result.stderr


def test_embedded_defaults_are_sqlite_under_var_and_filesystem_broker(tmp_path):
    code = (
        "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='physalign_site.settings'; django.setup();"
        "from django.conf import settings as s; print(s.DATABASES['default']['ENGINE']);"
        "print(s.DATABASES['default']['NAME']); print(s.CELERY_BROKER_URL);"
        "print(s.CELERY_BROKER_TRANSPORT_OPTIONS['data_folder_in']);"
        "print(s.DATABASES['default']['CONN_HEALTH_CHECKS']); print(s.DEBUG)"
    )
    result = _run_python(code, {"DJANGO_SECRET_KEY": "x" * 60, "PHYSALIGN_VAR_DIR": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    engine, name, broker, folder, health, debug = result.stdout.split()
    assert engine == "django.db.backends.sqlite3"
    assert name == str(tmp_path / "physalign.sqlite3")
    assert broker == "filesystem://"
    assert folder == str(tmp_path / "broker" / "queue")
    assert (health, debug) == ("True", "False")


def test_check_deploy_is_clean_with_production_settings():
    result = _manage(
        ["check", "--deploy", "--fail-level", "WARNING"],
        {
            "DJANGO_DEBUG": "0",
            "DJANGO_SECRET_KEY": "k3J!x9_production-grade-secret-value-with-enough-entropy-4Q7z%2pLmN",
            "DJANGO_SECURE_SSL": "true",
            "DJANGO_ALLOWED_HOSTS": "physalign.example.org",
            "DATABASE_URL": "sqlite:///:memory:",
        },
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


@pytest.mark.django_db
def test_migrations_are_complete():
    out = StringIO()
    call_command("makemigrations", "--check", "--dry-run", stdout=out)
    assert "No changes detected" in out.getvalue()


@pytest.mark.django_db
def test_responses_carry_csp_and_security_headers(client):
    response = client.get("/accounts/login/")
    assert response.status_code == 200
    csp = response["Content-Security-Policy"]
    assert "default-src 'self'" in csp
    assert "object-src 'none'" in csp
    assert re.search(r"script-src 'self' 'nonce-[A-Za-z0-9_\-+/=]+'", csp)
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"


@pytest.mark.django_db
def test_healthz_reports_database_ok(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_collectstatic_with_the_production_manifest_storage_finds_every_referenced_file(tmp_path, settings):
    """`make run` and the Docker image run collectstatic with a manifest storage, which refuses a css/js file
    that references a missing file (vendored font fallbacks, source maps)."""
    from django.core.management import call_command

    settings.STATIC_ROOT = tmp_path / "static"
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.ManifestStaticFilesStorage"},
    }
    call_command("collectstatic", "--noinput", verbosity=0)
    manifest = (tmp_path / "static" / "staticfiles.json").read_text()
    assert "vendor/katex/katex.min.css" in manifest and "vendor/chartjs/chart.umd.min.js" in manifest


def test_make_run_writes_a_local_env_that_every_command_reads(tmp_path):
    """`make run` writes .env (scripts/local_env.sh) so `manage.py` commands run in its set-up as printed: a secret
    key is generated once, values already in the file are kept, a missing one is appended."""
    script = Path(__file__).resolve().parent.parent / "scripts" / "local_env.sh"
    env_file = tmp_path / ".env"
    env_file.write_text("DJANGO_ALLOWED_HOSTS=example.org\n")
    subprocess.run([str(script), str(env_file)], check=True)
    first = env_file.read_text()
    values = dict(line.split("=", 1) for line in first.splitlines())
    assert values["DJANGO_ALLOWED_HOSTS"] == "example.org" and values["DJANGO_SECURE_SSL"] == "false"
    assert len(values["DJANGO_SECRET_KEY"]) >= 50
    assert oct(env_file.stat().st_mode & 0o777) == "0o600"
    subprocess.run([str(script), str(env_file)], check=True)
    assert env_file.read_text() == first  # idempotent: the key is not regenerated

    key = values["DJANGO_SECRET_KEY"]
    probe = f"from django.conf import settings; print(settings.SECRET_KEY == {key!r}, settings.DEBUG)"
    clean = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import os, environ; environ.Env.read_env({str(env_file)!r}); "
            "os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'physalign_site.settings'); "
            f"import django; django.setup(); {probe}",
        ],
        cwd=script.parent.parent,
        env={**clean, "PHYSALIGN_VAR_DIR": str(tmp_path / "var")},
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.split() == ["True", "False"]
